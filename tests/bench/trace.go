package main

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The startup section's breakdown: where the milliseconds of
// `jail -- /bin/true` go, from JAIL_TRACE=1 runs (separate from the timed
// ones: tracing adds its own lines). Every trace line is put on the
// supervisor's clock (ms since its main began; init's lines carry the time
// they arrived), the lines of a run are ordered by that time, and each step
// is charged with the time since the line before it. A row is the median of
// a step's share over the runs; the first row is what precedes main and
// follows the last line (exec, the Go runtime and package init, the exit):
// the run's wall time less the trace's last time.

var (
	supLine  = regexp.MustCompile(`^jail: supervisor (.+?)\s+([0-9.]+) ms \(\+[0-9.]+\)$`)
	initLine = regexp.MustCompile(`^jail: init (.+?)\s+[0-9.]+ ms \(at ([0-9.]+) ms\)$`)
)

// stepWhat says what happens in the time charged to a step (the time
// before its line).
var stepWhat = map[string]string{
	"sup flags, config":      "main: flags, config files, profiles",
	"sup killed runs":        "killed runs' exit checks",
	"sup check":              "the user's values checked (init starting)",
	"sup plan":               "plan: file rules, program roots, git identity",
	"sup net policy":         "network policy",
	"sup exec guard":         "exec guard rails",
	"sup hooks":              "init's hook configuration",
	"sup trail":              "audit trail opened",
	"sup agentcfg":           "agent-config guard",
	"sup sentinel":           "sentinel (inotify) started",
	"sup cgroup":             "cgroup made",
	"sup before start":       "interrupt check",
	"sup init started":       "wait for init (cloned before the plan), spec sent",
	"sup control":            "control socket, registry entry",
	"sup retention":          "trail retention check, stale cgroups",
	"init main":              "init: exec, Go runtime, package init",
	"init spec":              "init: spec received and decoded",
	"init network":           "init: network (loopback, DNS, refusals)",
	"init mounts":            "init: mount tree, pivot_root",
	"init rlimits":           "init: rlimits, pty, cwd, command lookup",
	"init caps":              "init: cgroup ns, capabilities dropped",
	"init landlock":          "init: Landlock",
	"init seccomp":           "init: seccomp filters",
	"sup init ready":         "init's report reaches the supervisor",
	"init go":                "supervisor: start event, servers; go",
	"init started":           "init: fork + exec of the agent",
	"init agent exit":        "the agent runs and exits (init's wait4)",
	"init reaped":            "init: the rest killed and reaped",
	"sup exit message":       "init's exit message reaches the supervisor",
	"sup quiet":              "the kernel's word: init exiting, nothing else left",
	"sup init exited":        "init exits (the kernel tears it down)",
	"sup bg wait":            "servers stopped",
	"sup cgroup stats":       "cgroup events and stats read",
	"sup servers done":       "servers' end, the trail's fsync awaited",
	"sup agentcfg check":     "agent-config guard's last check",
	"sup home left":          "the sandbox's home listed (homeleft)",
	"sup exit check":         "exit checks (sentinel, git)",
	"sup done":               "exit event written and synced",
	"sup unregistered":       "registry entry, control socket removed",
	"sup cgroup removed":     "cgroup removed",
	"sup init cloned":        "init's entry: exec, namespaces, clone (Begin, from the cgroup on)",
	"sup watches closed":     "inotify descriptors closed (fsnotify's reaper)",
	"sup trail synced":       "the exit event on disk, awaited",
	"sup mounts dropped":     "init's mount namespace released, awaited",
	"sup returned":           "held notices said, the trail's path",
	"exec, Go runtime, exit": "before main and after the last line",
}

type step struct {
	name string
	at   float64
}

// parseTrace returns a run's steps in time order.
func parseTrace(stderr []byte) []step {
	var steps []step
	for _, l := range bytes.Split(stderr, []byte("\n")) {
		if m := supLine.FindSubmatch(l); m != nil {
			at, _ := strconv.ParseFloat(string(m[2]), 64)
			steps = append(steps, step{"sup " + string(m[1]), at})
		} else if m := initLine.FindSubmatch(l); m != nil {
			at, _ := strconv.ParseFloat(string(m[2]), 64)
			steps = append(steps, step{"init " + string(m[1]), at})
		}
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].at < steps[j].at })
	return steps
}

func (b *bench) startupTrace() error {
	shares, names, walls, lasts, err := b.traceShares(b.jailArgv(nil, "/bin/true"), nil, b.pick(5, 20))
	if err != nil {
		return err
	}
	fmt.Println("  where jail's milliseconds go (JAIL_TRACE=1, median share of each step):")
	sum := 0.0
	for _, name := range names {
		v := med(shares[name])
		if math.IsNaN(v) {
			continue
		}
		sum += v
		b.add(row{"startup", "  " + stepName(name), v, p90(shares[name]), "ms", "trace: " + name})
	}
	b.add(row{"startup", "  traced runs: wall (sum of the medians)", med(walls), p90(walls), "ms", fmt.Sprintf("sum %.1f ms; trace's last line at %.1f ms", sum, med(lasts))})
	return nil
}

// stepName says what a trace step's share is spent on.
func stepName(step string) string {
	if what := stepWhat[step]; what != "" {
		return what
	}
	return step
}

// traceShares runs argv (with env added) runs times with JAIL_TRACE=1 and
// returns each step's share of every run (the time since the line before
// it, see above), the steps in the order they first came (the time before
// main and after the last line first), and each run's wall time and last
// line's time.
func (b *bench) traceShares(argv, env []string, runs int) (shares map[string][]float64, names []string, walls, lasts []float64, err error) {
	shares = map[string][]float64{}
	const outside = "exec, Go runtime, exit"
	names = []string{outside}
	add := func(name string, v float64) {
		if _, ok := shares[name]; !ok && name != outside {
			names = append(names, name)
		}
		shares[name] = append(shares[name], v)
	}
	for i := 0; i < runs; i++ {
		cmd := command(argv)
		cmd.Dir = b.ws
		cmd.Env = append(append(cmd.Environ(), env...), "JAIL_TRACE=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		t := time.Now()
		if err := cmd.Run(); err != nil {
			return nil, nil, nil, nil, fmt.Errorf("JAIL_TRACE=1 %s: %v: %s", strings.Join(argv, " "), err, lastLine(stderr.String()))
		}
		wall := float64(time.Since(t)) / 1e6
		steps := parseTrace(stderr.Bytes())
		if len(steps) == 0 {
			return nil, nil, nil, nil, fmt.Errorf("JAIL_TRACE=1 printed no trace line: %s", lastLine(stderr.String()))
		}
		prev := 0.0
		for _, s := range steps {
			add(s.name, s.at-prev)
			prev = s.at
		}
		walls, lasts = append(walls, wall), append(lasts, prev)
		add(outside, wall-prev)
	}
	return shares, names, walls, lasts, nil
}
