package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

const killProcs = 500

var killSeq int

// killGrace is short so that a kill that only works through the SIGKILL
// after the grace shows as about this long, and does not cost much time.
const killGrace = 2 * time.Second

// kill: 500 sleeps inside, then SIGTERM or SIGKILL to the supervisor, or the
// --timeout deadline; measured from the kill to the last sleep gone (dead:
// a zombie counts as gone).
func (b *bench) kill() error {
	hows := []struct {
		name    string
		sig     syscall.Signal
		timeout time.Duration
	}{
		{"SIGTERM to jail", syscall.SIGTERM, 0},
		{"SIGKILL to jail", syscall.SIGKILL, 0},
		{"--timeout 4s", 0, 4 * time.Second},
	}
	for _, h := range hows {
		var gone []float64
		note := ""
		for r := 0; r < b.pick(1, 3); r++ {
			d, code, err := b.killOnce(h.sig, h.timeout)
			if err != nil {
				note = "FAILED: " + err.Error()
				break
			}
			gone = append(gone, float64(d)/1e6)
			note = fmt.Sprintf("jail exit %d", code)
		}
		b.add(row{"kill", fmt.Sprintf("%d procs, %s -> last gone", killProcs, h.name), med(gone), quantile(gone, 1), "ms", note + fmt.Sprintf(" (p90 column: max; --kill-grace %v)", killGrace)})
	}
	return nil
}

func (b *bench) killOnce(sig syscall.Signal, timeout time.Duration) (time.Duration, int, error) {
	killSeq++
	marker := strconv.Itoa(1_000_000_000 + os.Getpid()*100 + killSeq) // unique argv
	flags := []string{"--kill-grace", killGrace.String()}
	if timeout > 0 {
		flags = append(flags, "--timeout", timeout.String())
	}
	script := fmt.Sprintf("i=0; while [ $i -lt %d ]; do sleep %s & i=$((i+1)); done; wait", killProcs, marker)
	argv := b.jailArgv(flags, "sh", "-c", script)
	cmd := command(argv)
	cmd.Dir = b.ws
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		cmd.Process.Kill()
		<-exited
		for _, pid := range findProcs(marker) { // our own leftovers, by pid
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}()

	var pids []int
	for deadline := t0.Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if pids = findProcs(marker); len(pids) >= killProcs {
			break
		}
		select {
		case <-exited:
			return 0, 0, fmt.Errorf("jail exited (%v) with %d of %d sleeps started", cmd.ProcessState, len(pids), killProcs)
		default:
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("only %d of %d sleeps started in 20 s", len(pids), killProcs)
		}
	}
	tk := t0.Add(timeout) // the timeout fires timeout after start (plus jail's own startup)
	if sig != 0 {
		tk = time.Now()
		cmd.Process.Signal(sig)
	} else if time.Now().After(tk) {
		return 0, 0, fmt.Errorf("starting %d sleeps took longer than the timeout", killProcs)
	}
	for deadline := tk.Add(15 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		alive := alivePids(marker, pids)
		if alive == 0 {
			break
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("%d of %d sleeps still alive 15 s after the kill", alive, killProcs)
		}
	}
	d := time.Since(tk)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		return 0, 0, fmt.Errorf("sleeps gone but jail still running 10 s later")
	}
	return d, cmd.ProcessState.ExitCode(), nil
}

func sleepCmdline(marker string) []byte { return []byte("sleep\x00" + marker + "\x00") }

// findProcs lists the pids of running `sleep MARKER` processes.
func findProcs(marker string) []int {
	ents, _ := os.ReadDir("/proc")
	want := sleepCmdline(marker)
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if data, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline"); bytes.Equal(data, want) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// alivePids counts which of pids still run `sleep MARKER`.
func alivePids(marker string, pids []int) int {
	want, n := sleepCmdline(marker), 0
	for _, pid := range pids {
		if data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); bytes.Equal(data, want) {
			n++
		}
	}
	return n
}
