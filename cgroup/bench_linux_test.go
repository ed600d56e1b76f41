package cgroup

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"
)

func benchOpts(b *testing.B, mode string) (Limits, Options) {
	b.Helper()
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	switch mode {
	case "v1":
		if _, err := os.Stat("/sys/fs/cgroup/freezer/cgroup.procs"); err != nil {
			b.Skip("no cgroup v1")
		}
		return Limits{MemoryBytes: 512 << 20, CPUs: 1, Pids: 1024}, Options{DisableV2: true, Require: true}
	default:
		if _, ok := v2Mount(defaultRoot); !ok {
			b.Skip("no cgroup v2")
		}
		// Limits that need no controller, so the hybrid host's empty
		// cgroup2 hierarchy qualifies.
		return Limits{Pids: -1}, Options{DisableV1: true, Require: true}
	}
}

// BenchmarkOpenDelete measures the startup+teardown cost of a group.
func BenchmarkOpenDelete(b *testing.B) {
	for _, mode := range []string{"v1", "v2"} {
		b.Run(mode, func(b *testing.B) {
			lim, opts := benchOpts(b, mode)
			for i := 0; i < b.N; i++ {
				g, _, err := Open("bench", lim, opts)
				if err != nil {
					b.Fatal(err)
				}
				if err := g.Delete(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkKill500 measures Kill on a group holding 500 processes: the time
// from the kill request to an empty group.
func BenchmarkKill500(b *testing.B) {
	for _, mode := range []string{"v1", "v2"} {
		b.Run(mode, func(b *testing.B) {
			lim, opts := benchOpts(b, mode)
			var total time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				g, _, err := Open("bench", lim, opts)
				if err != nil {
					b.Fatal(err)
				}
				cmd := exec.Command("/bin/sh", "-c", `read x; i=0; while [ $i -lt 499 ]; do sleep 1000 & i=$((i+1)); done; wait`)
				if fd, ok := g.FD(); ok {
					cmd.SysProcAttr = sysProcCgroup(fd)
				}
				in, _ := cmd.StdinPipe()
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				if mode == "v1" {
					if err := g.Add(cmd.Process.Pid); err != nil {
						b.Fatal(err)
					}
				}
				in.Write([]byte("go\n"))
				in.Close()
				for {
					p, _ := readPids(g.Path())
					if len(p) >= 500 {
						break
					}
					time.Sleep(5 * time.Millisecond)
				}
				b.StartTimer()
				start := time.Now()
				if err := g.Kill(); err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
				b.StopTimer()
				_ = cmd.Wait()
				if err := g.Delete(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms/kill")
		})
	}
}

// BenchmarkV1Join compares the two ways into a v1 group: Add (another
// process's pid into each hierarchy's cgroup.procs: the kernel's global
// threadgroup lock, an RCU grace period) and JoinThread with its leave
// (the calling thread into each tasks file and back: no global lock).
// Each join follows a pause, as a start does: the kernel's rcu_sync stays
// "passed" for a grace period after a writer, so back-to-back Adds would
// not wait.
func BenchmarkV1Join(b *testing.B) {
	lim, opts := benchOpts(b, "v1")
	lim.MemoryBytes, lim.CPUs = 0, 0 // jail's default: freezer and pids
	b.Run("add", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			g, _, err := Open("bench", lim, opts)
			if err != nil {
				b.Fatal(err)
			}
			cmd := exec.Command("/bin/sleep", "10")
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
			b.StartTimer()
			err = g.Add(cmd.Process.Pid)
			b.StopTimer()
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			if err != nil {
				b.Fatal(err)
			}
			if err := g.Delete(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
	b.Run("jointhread", func(b *testing.B) {
		g, _, err := Open("bench", lim, opts)
		if err != nil {
			b.Fatal(err)
		}
		defer g.Delete()
		j := g.(ThreadJoiner)
		done := make(chan error, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with it
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				time.Sleep(100 * time.Millisecond)
				b.StartTimer()
				leave, err := j.JoinThread()
				if err == nil {
					err = leave()
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkOpenDefault measures Open alone (the supervisor's "cgroup" trace
// step) with jail's default limits and options: every strategy in order,
// as a start tries them (on a hybrid host: v2's probes, then v1's groups).
func BenchmarkOpenDefault(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	lim := Limits{Pids: 1024 + 16, WatchMemory: true}
	for i := 0; i < b.N; i++ {
		g, _, err := Open("bench", lim, Options{})
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if err := g.Delete(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
