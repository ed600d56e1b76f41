package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// syscallLoop: N getppid(2) inside vs outside, timed by the probe itself so
// that startup does not count. Target: ratio <= 1.05. The floor is the same
// loop outside under a one-instruction allow-all seccomp filter: what any
// filter costs on this kernel and CPU (syscall slow path, mitigations).
func (b *bench) syscallLoop() error {
	n := strconv.Itoa(b.pick(1_000_000, 10_000_000))
	s, err := alternate(b.ws, b.pick(3, 5), []variant{
		{name: "outside", argv: []string{b.probe, "getppid", n}, value: probeMS},
		{name: "inside", argv: b.jailArgv(nil, b.probe, "getppid", n), value: probeMS},
		{name: "floor", argv: []string{b.probe, "getppid-floor", n}, value: probeMS},
	})
	if err != nil {
		return err
	}
	b.add(row{"syscall", n + " x getppid, outside", med(s[0]), p90(s[0]), "ms", ""})
	b.add(row{"syscall", n + " x getppid, outside, allow-all filter", med(s[2]), p90(s[2]), "ms", ratio(med(s[2]), med(s[0]), "outside (floor of any filter)")})
	b.add(row{"syscall", n + " x getppid, inside", med(s[1]), p90(s[1]), "ms",
		ratio(med(s[1]), med(s[0]), "outside (target <= 1.05)") + "; " + ratio(med(s[1]), med(s[2]), "floor")})
	return nil
}

// execLoop: N x /bin/true from sh, with exec audit (seccomp user
// notification), without it, and outside. Target: audit/no audit <= 1.30.
func (b *bench) execLoop() error {
	n := b.pick(300, 2000)
	loop := []string{b.probe, "time", "sh", "-c", fmt.Sprintf("i=0; while [ $i -lt %d ]; do /bin/true; i=$((i+1)); done", n)}
	s, err := alternate(b.ws, b.pick(3, 5), []variant{
		{name: "outside", argv: loop, value: probeMS},
		{name: "inside, exec audit", argv: b.jailArgv(nil, loop...), value: probeMS},
		{name: "inside, --no-exec-audit", argv: b.jailArgv([]string{"--no-exec-audit"}, loop...), value: probeMS},
	})
	if err != nil {
		return err
	}
	out, audit, noAudit := med(s[0]), med(s[1]), med(s[2])
	name := fmt.Sprintf("%d x /bin/true via sh, ", n)
	b.add(row{"exec", name + "outside", out, p90(s[0]), "ms", fmt.Sprintf("%.0f us/exec", out*1000/float64(n))})
	b.add(row{"exec", name + "--no-exec-audit", noAudit, p90(s[2]), "ms", ratio(noAudit, out, "outside")})
	b.add(row{"exec", name + "exec audit", audit, p90(s[1]), "ms",
		ratio(audit, noAudit, "no audit (target <= 1.30)") + "; " + ratio(audit, out, "outside") +
			fmt.Sprintf("; +%.0f us/exec", (audit-noAudit)*1000/float64(n))})
	return nil
}

// openLoop: N open+close inside vs outside, for a file in the (writable)
// workspace and one in the read-only host view: Landlock's per-open cost.
func (b *bench) openLoop() error {
	n := b.pick(100_000, 500_000)
	deep := "/usr/share/zoneinfo/Etc/UTC"
	if _, err := os.Stat(deep); err != nil {
		deep = "/etc/passwd"
	}
	for _, path := range []string{filepath.Join(b.ws, "data.txt"), deep} {
		s, err := alternate(b.ws, b.pick(2, 5), []variant{
			{name: "outside", argv: []string{b.probe, "open", strconv.Itoa(n), path}, value: probeMS},
			{name: "inside", argv: b.jailArgv(nil, b.probe, "open", strconv.Itoa(n), path), value: probeMS},
		})
		if err != nil {
			return err
		}
		out, in := med(s[0]), med(s[1])
		b.add(row{"open", fmt.Sprintf("%d x open+close %s, outside", n, filepath.Base(path)), out, p90(s[0]), "ms", ""})
		b.add(row{"open", fmt.Sprintf("%d x open+close %s, inside", n, filepath.Base(path)), in, p90(s[1]), "ms",
			ratio(in, out, "outside") + fmt.Sprintf("; %+.0f ns/open", (in-out)*1e6/float64(n))})
	}
	return nil
}
