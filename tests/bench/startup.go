package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

var bwrapArgs = []string{"--unshare-all", "--die-with-parent", "--ro-bind", "/", "/",
	"--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "/bin/true"}

// startup: jail -- /bin/true vs bubblewrap vs plain /bin/true, and the
// supervisor's peak RSS.
func (b *bench) startup() error {
	var maxrss []float64
	vs := []variant{
		{name: "/bin/true", argv: []string{"/bin/true"}},
		{name: "jail -- /bin/true", argv: b.jailArgv(nil, "/bin/true"), value: func(r result) (float64, error) {
			if r.rusage != nil {
				maxrss = append(maxrss, float64(r.rusage.Maxrss)/1024)
			}
			return wallMS(r)
		}},
	}
	bwrap := ""
	if v, err := b.bwrapVariant(); err == nil {
		bwrap, vs = v.argv[0], append(vs, v)
	} else if !errors.Is(err, exec.ErrNotFound) {
		fmt.Println("bwrap does not run here:", err)
	}
	// The CPU each run used, beside its wall time.
	cpu := make([][]float64, len(vs))
	for i := range vs {
		value := vs[i].value
		if value == nil {
			value = wallMS
		}
		vs[i].value = func(r result) (float64, error) {
			if r.rusage != nil {
				cpu[i] = append(cpu[i], float64(r.rusage.Utime.Nano()+r.rusage.Stime.Nano())/1e6)
			}
			return value(r)
		}
	}
	s, err := alternate(b.ws, b.pick(20, 100), vs)
	if err != nil {
		return err
	}
	for i := range cpu { // the warm-up round is not a sample
		if len(cpu[i]) > len(s[i]) {
			cpu[i] = cpu[i][len(cpu[i])-len(s[i]):]
		}
	}
	b.add(row{"startup", "/bin/true", med(s[0]), p90(s[0]), "ms", ""})
	bw := math.NaN()
	if bwrap != "" {
		bw = med(s[2])
		b.add(row{"startup", "bwrap --unshare-all ... /bin/true", bw, p90(s[2]), "ms", ratio(bw, med(s[0]), "true")})
	} else {
		b.add(row{"startup", "bwrap", math.NaN(), math.NaN(), "", "n/a (bwrap absent)"})
	}
	note := ratio(med(s[1]), bw, "bwrap (target <= 1.5)")
	if bwrap == "" {
		note = "jail/bwrap n/a"
	}
	note += "; " + ratio(med(s[1]), med(s[0]), "/bin/true")
	b.add(row{"startup", "jail -- /bin/true", med(s[1]), p90(s[1]), "ms", note})
	// CPU (user+sys of the process and every child it reaped: init, the
	// agent) is less at the mercy of the machine's load than wall time.
	b.add(row{"startup", "CPU of /bin/true", med(cpu[0]), p90(cpu[0]), "ms", "user+sys"})
	if bwrap != "" {
		b.add(row{"startup", "CPU of bwrap", med(cpu[2]), p90(cpu[2]), "ms", "user+sys"})
	}
	b.add(row{"startup", "CPU of jail (supervisor, init, agent)", med(cpu[1]), p90(cpu[1]), "ms", ratio(med(cpu[1]), med(cpu[2]), "bwrap")})
	b.add(row{"startup", "jail peak RSS (wait4 maxrss, incl. init)", med(maxrss), p90(maxrss), "MiB", "max over supervisor and its reaped children"})
	hwm, err := b.supervisorHWM()
	if err != nil {
		return err
	}
	b.add(row{"startup", "supervisor alone VmHWM (jail -- sleep 0.3)", hwm, math.NaN(), "MiB", ""})
	return b.startupTrace()
}

// bwrapVariant is bubblewrap's run of /bin/true (bwrapArgs) as a variant,
// once it ran here; an error says why not (exec.ErrNotFound: absent).
func (b *bench) bwrapVariant() (variant, error) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return variant{}, err
	}
	argv := append([]string{bwrap}, bwrapArgs...)
	if _, err := run(b.ws, argv...); err != nil {
		return variant{}, err
	}
	return variant{name: "bwrap", argv: argv}, nil
}

// supervisorHWM samples /proc/PID/status of the jail process itself (not init)
// until it exits and returns the last VmHWM seen, in MiB.
func (b *bench) supervisorHWM() (float64, error) {
	argv := b.jailArgv(nil, "sleep", "0.3")
	cmd := command(argv)
	cmd.Dir = b.ws
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	hwm := math.NaN()
	for {
		if kb, ok := procStatusKB(cmd.Process.Pid, "VmHWM"); ok {
			hwm = kb / 1024
		}
		select {
		case err := <-done:
			return hwm, err
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// procStatusKB reads one "Name: N kB" line of /proc/PID/status.
func procStatusKB(pid int, name string) (float64, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				kb, err := strconv.ParseFloat(f[0], 64)
				return kb, err == nil
			}
		}
	}
	return 0, false
}

// limits: the cost of --memory/--pids/--cpus at startup.
func (b *bench) limits() error {
	lim := []string{"--memory", "512M", "--pids", "256", "--cpus", "1"}
	s, err := alternate(b.ws, b.pick(20, 100), []variant{
		{name: "jail", argv: b.jailArgv(nil, "/bin/true")},
		{name: "jail with limits", argv: b.jailArgv(lim, "/bin/true")},
	})
	if err != nil {
		return err
	}
	note := ""
	if _, err := run(b.ws, b.jailArgv(append([]string{"--require-limits"}, lim...), "/bin/true")...); err != nil {
		note = "; rlimit fallback only (--require-limits fails)"
	}
	b.add(row{"limits", "jail -- /bin/true", med(s[0]), p90(s[0]), "ms", ""})
	b.add(row{"limits", "jail --memory 512M --pids 256 --cpus 1", med(s[1]), p90(s[1]), "ms",
		ratio(med(s[1]), med(s[0]), "no limits") + fmt.Sprintf(" (+%.1f ms)", med(s[1])-med(s[0])) + note})
	return nil
}

// deny: startup with 0, 100 and 1000 --deny patterns over 10k files. One in
// ten patterns names an existing file (so 100 patterns mask 10 files and 1000
// mask 100); the rest are "**" globs that force a walk of the whole tree. A
// run of 1000 globs that match nothing separates matching from masking.
func (b *bench) deny() error {
	ws := filepath.Join(b.scratch, "deny-ws")
	for d := 0; d < 100; d++ {
		dir := filepath.Join(ws, fmt.Sprintf("d%d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for f := 0; f < 100; f++ {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", f)), []byte("x\n"), 0o644); err != nil {
				return err
			}
		}
	}
	os.Chmod(ws, 0o755)
	patterns := func(n int, masks bool) []string {
		var p []string
		for i := 0; i < n; i++ {
			if masks && i%10 == 0 {
				p = append(p, "--deny", fmt.Sprintf("d%d/f%d.txt", (i/10)%100, (i/100)%100))
			} else {
				p = append(p, "--deny", fmt.Sprintf("**/*.nomatch%d", i))
			}
		}
		return p
	}
	// Is the deny in force at all? d0/f0.txt is the first pattern.
	effective := "deny in force"
	if _, err := run(ws, b.jailArgv(patterns(100, true), "cat", "d0/f0.txt")...); err == nil {
		effective = "DENY NOT IN FORCE: d0/f0.txt readable"
	}
	s, err := alternate(ws, b.pick(5, 30), []variant{
		{name: "0 patterns", argv: b.jailArgv(nil, "/bin/true")},
		{name: "100 patterns", argv: b.jailArgv(patterns(100, true), "/bin/true")},
		{name: "1000 patterns", argv: b.jailArgv(patterns(1000, true), "/bin/true")},
		{name: "1000 patterns, no match", argv: b.jailArgv(patterns(1000, false), "/bin/true")},
	})
	if err != nil {
		return err
	}
	b.add(row{"deny", "10k files, 0 --deny", med(s[0]), p90(s[0]), "ms", effective})
	for i, name := range []string{"100 --deny (10 masked)", "1000 --deny (100 masked)", "1000 --deny (none match)"} {
		x := med(s[i+1])
		b.add(row{"deny", "10k files, " + name, x, p90(s[i+1]), "ms",
			ratio(x, med(s[0]), "0 patterns") + fmt.Sprintf(" (+%.1f ms; target < 50)", x-med(s[0]))})
	}
	return nil
}
