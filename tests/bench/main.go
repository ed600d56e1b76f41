// Command bench measures the built jail binary against baselines measured in
// the same run (`make bench`, or `JAIL_BIN=bin/jail go run ./tests/bench`).
// It is not a timed test: every number is a median (and p90) of alternating
// runs, printed next to its baseline as a ratio. -quick takes about 30 s.
// Run it as root on an otherwise idle machine for stable numbers.
//
// Sections (each issue's "Measured" list): startup vs bubblewrap and
// /bin/true, one jail process's own start vs an empty Go program (and its
// package inits), startup with limits, startup with --deny patterns, a syscall
// loop, an exec loop with and without exec audit, an open/close loop, the
// kill of 500 processes, and egress through the proxy. A section whose
// feature errors prints why and is skipped; the others still run.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// bench holds what every section needs.
type bench struct {
	jail    string // the binary under test
	quick   bool
	scratch string // private to this run; removed at the end
	ws      string // workspace for most runs; holds the probe
	probe   string // the workload program, inside ws
	rows    []row
}

type row struct {
	section, name string
	med, p90      float64 // NaN when not applicable
	unit          string
	note          string
}

var sections = []struct {
	name string
	run  func(*bench) error
}{
	{"startup", (*bench).startup},
	{"procstart", (*bench).procStart},
	{"limits", (*bench).limits},
	{"profile", (*bench).profile},
	{"deny", (*bench).deny},
	{"tree", (*bench).tree},
	{"repo", (*bench).repo},
	{"homelinks", (*bench).homeLinks},
	{"syscall", (*bench).syscallLoop},
	{"exec", (*bench).execLoop},
	{"open", (*bench).openLoop},
	{"kill", (*bench).kill},
	{"net", (*bench).net},
	{"session", (*bench).session},
}

func main() {
	quick := flag.Bool("quick", false, "fewer rounds and smaller loops (about 30 s)")
	only := flag.String("only", "", "comma-separated sections to run (default all)")
	keep := flag.Bool("keep", false, "keep the scratch directory")
	flag.Parse()
	b := &bench{quick: *quick}
	if err := b.setup(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if !*keep {
		defer os.RemoveAll(b.scratch)
	}
	if os.Geteuid() != 0 {
		fmt.Println("note: not root; `make bench` numbers are meant to be taken as root")
	}
	fmt.Printf("jail %s, %s mode, scratch %s\n\n", b.jail, map[bool]string{true: "quick", false: "full"}[b.quick], b.scratch)
	fmt.Println(row{}.header())
	start := time.Now()
	for _, s := range sections {
		if *only != "" && !strings.Contains(","+*only+",", ","+s.name+",") {
			continue
		}
		t := time.Now()
		if err := s.run(b); err != nil {
			b.add(row{section: s.name, name: "SKIPPED", med: nanF, p90: nanF, note: err.Error()})
		}
		fmt.Printf("  [%s: %.1f s]\n", s.name, time.Since(t).Seconds())
	}
	fmt.Printf("\nSummary (%.0f s total)\n%s\n", time.Since(start).Seconds(), row{}.header())
	for _, r := range b.rows {
		fmt.Println(r)
	}
}

func (b *bench) setup() error {
	b.jail = os.Getenv("JAIL_BIN")
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	if b.scratch, err = os.MkdirTemp("", "jail-bench-"); err != nil {
		return err
	}
	b.ws = filepath.Join(b.scratch, "ws")
	auditDir = filepath.Join(b.scratch, "audit")
	// jail's state of the bench's own (every run's, inherited). Why: the
	// user's holds what earlier runs could write (package pastwrite), and
	// once that named the scratch's parent (an earlier `jail -w /tmp`)
	// every start here refused its trail (exit 125); it also made the
	// measures depend on the user's records. Removed with the scratch.
	state := filepath.Join(b.scratch, "state")
	if err := os.Setenv("XDG_STATE_HOME", state); err != nil {
		return err
	}
	for _, d := range []string{b.scratch, b.ws, auditDir, state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		os.Chmod(d, 0o755)
	}
	if b.jail == "" {
		b.jail = filepath.Join(b.scratch, "jail")
		if err := goBuild(root, b.jail, "./cmd/jail"); err != nil {
			return err
		}
	}
	if b.jail, err = filepath.Abs(b.jail); err != nil {
		return err
	}
	b.probe = filepath.Join(b.ws, "probe")
	if err := goBuild(root, b.probe, "./tests/bench/probe"); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(b.ws, "data.txt"), []byte("hello\n"), 0o644)
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 || string(bytes.TrimSpace(out)) == os.DevNull {
		return "", fmt.Errorf("run from inside the jail module (go env GOMOD: %v)", err)
	}
	return filepath.Dir(string(bytes.TrimSpace(out))), nil
}

func goBuild(root, out, pkg string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, msg)
	}
	return os.Chmod(out, 0o755)
}

// jailArgv is `jail --quiet --audit FILE FLAGS... -- CMD...`. jail refuses
// to reuse an audit file, so FILE is a placeholder that run replaces with a
// fresh name in the scratch directory (outside every workspace; $HOME is not
// littered with hundreds of trails).
func (b *bench) jailArgv(flags []string, cmd ...string) []string {
	argv := []string{b.jail, "--quiet", "--audit", auditPlaceholder}
	argv = append(argv, flags...)
	return append(append(argv, "--"), cmd...)
}

const auditPlaceholder = "\x00audit"

var (
	auditDir string
	nAudit   int
)

func (b *bench) add(r row) {
	b.rows = append(b.rows, r)
	fmt.Println(r)
}

func (r row) String() string {
	return fmt.Sprintf("%-8s %-46s %10s %10s %-6s %s", r.section, r.name, num(r.med), num(r.p90), r.unit, r.note)
}

func (row) header() string {
	return fmt.Sprintf("%-8s %-46s %10s %10s %-6s %s", "section", "case", "median", "p90", "unit", "ratio / note")
}

func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// ratio formats a/b as "x1.23 NAME" (or "" when either is missing).
func ratio(a, b float64, name string) string {
	if math.IsNaN(a) || math.IsNaN(b) || b == 0 {
		return ""
	}
	return fmt.Sprintf("x%.2f %s", a/b, name)
}

// result of one run of a command.
type result struct {
	wall   time.Duration
	out    string
	rusage *syscall.Rusage
	self   time.Duration // this process's own CPU meanwhile (servers the bench runs)
}

// run runs argv in dir to completion; a nonzero exit is an error that quotes
// the last line of stderr.
func run(dir string, argv ...string) (result, error) { return runEnv(dir, nil, argv...) }

// runEnv is run with env added to the bench's environment.
func runEnv(dir string, env []string, argv ...string) (result, error) {
	var stdout, stderr bytes.Buffer
	cmd := command(argv)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &stdout, &stderr
	t, self := time.Now(), selfCPU()
	err := cmd.Run()
	res := result{wall: time.Since(t), out: stdout.String(), self: selfCPU() - self}
	if cmd.ProcessState != nil {
		res.rusage, _ = cmd.ProcessState.SysUsage().(*syscall.Rusage)
	}
	if err != nil {
		return res, fmt.Errorf("%s: %v: %s", filepath.Base(argv[0]), err, lastLine(stderr.String()))
	}
	return res, nil
}

// command is exec.Command with the audit placeholder made a fresh file name.
func command(argv []string) *exec.Cmd {
	argv = append([]string(nil), argv...)
	for i, a := range argv {
		if a == auditPlaceholder {
			nAudit++
			argv[i] = filepath.Join(auditDir, fmt.Sprintf("%d.jsonl", nAudit))
		}
	}
	return exec.Command(argv[0], argv[1:]...)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// exitedWith reports whether err (run's) is an exit with status code.
func exitedWith(err error, code int) bool {
	return strings.Contains(err.Error(), fmt.Sprintf("exit status %d:", code))
}

// variant is one command of a comparison; value turns a run into a sample
// (default: wall time in ms).
type variant struct {
	name  string
	argv  []string
	value func(result) (float64, error)
	// exit is the exit status a run of it ends with (0 unless set): the
	// lean init, run as a command, says it is no command and exits 2.
	exit int
	// env is added to the bench's environment for its runs (HOME=...).
	env []string
}

func wallMS(r result) (float64, error) { return float64(r.wall) / 1e6, nil }

// selfCPU is the CPU time (user+system, all threads) this process used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// probeMS is the ns= figure the probe printed, in ms.
func probeMS(r result) (float64, error) {
	v, err := field(r.out, "ns")
	return v / 1e6, err
}

// field returns the number after "name=" in the first line that has one.
func field(out, name string) (float64, error) {
	for _, f := range strings.Fields(out) {
		if v, ok := strings.CutPrefix(f, name+"="); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	return 0, fmt.Errorf("no %s= in probe output %q", name, out)
}

// alternate runs one warm-up of each variant, then rounds of all variants in
// turn (rotating which goes first), and returns the samples of each. Any
// failing run aborts the comparison with that variant's error.
func alternate(dir string, rounds int, vs []variant) ([][]float64, error) {
	samples := make([][]float64, len(vs))
	for round := -1; round < rounds; round++ {
		for k := range vs {
			i := (k + max(round, 0)) % len(vs)
			v := vs[i]
			res, err := runEnv(dir, v.env, v.argv...)
			if err != nil && (v.exit == 0 || res.rusage == nil || !exitedWith(err, v.exit)) {
				return nil, fmt.Errorf("%s: %w", v.name, err)
			}
			value := v.value
			if value == nil {
				value = wallMS
			}
			x, err := value(res)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", v.name, err)
			}
			if round >= 0 {
				samples[i] = append(samples[i], x)
			}
		}
	}
	return samples, nil
}

// quantile is the nearest-rank q-quantile (0.5 median, 0.9 p90).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func med(xs []float64) float64 { return quantile(xs, 0.5) }
func p90(xs []float64) float64 { return quantile(xs, 0.9) }

// pick returns quick or full.
func (b *bench) pick(quick, full int) int {
	if b.quick {
		return quick
	}
	return full
}

var nanF = math.NaN()
