package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// procstart: what one start of the jail binary costs before it does any
// work. Every jail process pays it: the supervisor, the sandbox's init (a
// re-exec of the same binary) and each `jail exec` client. `jail version`
// (a verb: no flag table, no config) against an empty static Go program
// and /bin/true, wall and CPU, alternating; then the sum of the package
// inits that GODEBUG=inittrace=1 reports for `jail version`, and the
// largest of them. The difference between jail and the empty Go program
// is the binary's own start: its size (page faults, the runtime's tables)
// and its package inits. The fourth program is the lean init jail embeds
// (cmd/jail-init, package initbin), run as a plain command: it reaches
// main and exits at once. Its difference to `jail version` is what each
// sandbox's init saves by being it rather than a re-exec of jail.
func (b *bench) procStart() error {
	empty, err := b.emptyGo()
	if err != nil {
		return err
	}
	lean, err := b.leanInit()
	if err != nil {
		return err
	}
	vs := []variant{
		{name: "/bin/true", argv: []string{"/bin/true"}},
		{name: "empty Go program", argv: []string{empty}},
		{name: "jail version", argv: []string{b.jail, "version"}},
		{name: "lean init (cmd/jail-init)", argv: []string{lean}, exit: 2},
	}
	cpu := make([][]float64, len(vs))
	for i := range vs {
		vs[i].value = func(r result) (float64, error) {
			if r.rusage != nil {
				cpu[i] = append(cpu[i], float64(r.rusage.Utime.Nano()+r.rusage.Stime.Nano())/1e6)
			}
			return wallMS(r)
		}
	}
	s, err := alternate(b.ws, b.pick(30, 100), vs)
	if err != nil {
		return err
	}
	for i := range cpu { // the warm-up round is not a sample
		if len(cpu[i]) > len(s[i]) {
			cpu[i] = cpu[i][len(cpu[i])-len(s[i]):]
		}
	}
	b.add(row{"procstart", "/bin/true", med(s[0]), p90(s[0]), "ms", ""})
	b.add(row{"procstart", "empty static Go program", med(s[1]), p90(s[1]), "ms", ratio(med(s[1]), med(s[0]), "/bin/true")})
	b.add(row{"procstart", "jail version (one jail process start)", med(s[2]), p90(s[2]), "ms",
		ratio(med(s[2]), med(s[1]), "empty Go") + fmt.Sprintf(" (+%.1f ms)", med(s[2])-med(s[1]))})
	b.add(row{"procstart", "CPU of the empty Go program", med(cpu[1]), p90(cpu[1]), "ms", "user+sys"})
	b.add(row{"procstart", "CPU of jail version", med(cpu[2]), p90(cpu[2]), "ms",
		ratio(med(cpu[2]), med(cpu[1]), "empty Go") + fmt.Sprintf(" (+%.1f ms)", med(cpu[2])-med(cpu[1]))})
	b.add(row{"procstart", "lean init (cmd/jail-init), to main", med(s[3]), p90(s[3]), "ms",
		ratio(med(s[3]), med(s[1]), "empty Go") + fmt.Sprintf("; jail version %+.1f ms", med(s[2])-med(s[3]))})
	b.add(row{"procstart", "CPU of the lean init", med(cpu[3]), p90(cpu[3]), "ms",
		fmt.Sprintf("jail version %+.1f ms: what the lean init saves each run", med(cpu[2])-med(cpu[3]))})
	return b.initTrace()
}

// initTrace runs `GODEBUG=inittrace=1 jail version` and reports the median
// sum of the package inits' clock, their allocations and the three largest.
func (b *bench) initTrace() error {
	var sums []float64
	per := map[string][]float64{}
	allocs, bytes, pkgs := 0, 0, 0
	for i := 0; i < b.pick(10, 30); i++ {
		cmd := exec.Command(b.jail, "version")
		cmd.Dir = b.ws
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("GODEBUG=inittrace=1 jail version: %v: %s", err, lastLine(string(out)))
		}
		sum := 0.0
		allocs, bytes, pkgs = 0, 0, 0
		for _, l := range strings.Split(string(out), "\n") {
			var pkg string
			var at, clock float64
			var by, al int
			if _, err := fmt.Sscanf(l, "init %s @%f ms, %f ms clock, %d bytes, %d allocs", &pkg, &at, &clock, &by, &al); err != nil {
				continue
			}
			sum += clock
			per[pkg] = append(per[pkg], clock)
			allocs, bytes, pkgs = allocs+al, bytes+by, pkgs+1
		}
		if pkgs == 0 {
			return fmt.Errorf("GODEBUG=inittrace=1 jail version printed no init line")
		}
		sums = append(sums, sum)
	}
	names := make([]string, 0, len(per))
	for n := range per {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return med(per[names[i]]) > med(per[names[j]]) })
	var top []string
	for _, n := range names[:min(3, len(names))] {
		top = append(top, fmt.Sprintf("%s %.2f", strings.TrimPrefix(n, "github.com/jail-sandbox/jail/"), med(per[n])))
	}
	b.add(row{"procstart", "  package inits (GODEBUG=inittrace=1, sum)", med(sums), p90(sums), "ms",
		fmt.Sprintf("%d packages, %d allocs, %d KB; largest: %s", pkgs, allocs, bytes>>10, strings.Join(top, ", "))})
	return nil
}

// leanInit builds the lean init (cmd/jail-init) as make build does
// (static, stripped).
func (b *bench) leanInit() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(b.ws, "leaninit")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, "./cmd/jail-init")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/jail-init: %v\n%s", err, msg)
	}
	return out, os.Chmod(out, 0o755)
}

// emptyGo builds a static Go program that does nothing, the floor of any
// Go process's start on this machine.
func (b *bench) emptyGo() (string, error) {
	dir := filepath.Join(b.scratch, "emptygo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	files := map[string]string{
		"go.mod":  "module emptygo\n\ngo 1.26\n",
		"main.go": "package main\n\nfunc main() {}\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return "", err
		}
	}
	out := filepath.Join(b.ws, "emptygo")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-mod=mod")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build the empty program: %v\n%s", err, msg)
	}
	return out, os.Chmod(out, 0o755)
}
