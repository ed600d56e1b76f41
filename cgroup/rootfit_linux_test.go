package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// rootFitTree is a fake cgroup2 tree that keeps the kernel's rule the
// early exit (rootFit) relies on: a group's cgroup.controllers is its
// parent's subtree_control, a subset of the parent's own controllers.
// The root offers rootCtrls (and hugetlb, as a hybrid host's does), hands
// them all down, and the current group's parent hands down those minus
// drop.
func rootFitTree(t *testing.T, current string, rootCtrls []string, drop string) *fakeTree {
	t.Helper()
	ft := newFakeTree(t, current)
	all := append([]string{"hugetlb"}, rootCtrls...)
	ft.file("", "cgroup.controllers", strings.Join(all, " "))
	ft.file("", "cgroup.subtree_control", strings.Join(rootCtrls, " "))
	parent := filepath.Dir(current)
	ft.file(parent, "cgroup.controllers", strings.Join(rootCtrls, " "))
	var down []string
	for _, c := range rootCtrls {
		if c != drop {
			down = append(down, c)
		}
	}
	ft.file(parent, "cgroup.subtree_control", strings.Join(down, " "))
	ft.file(current, "cgroup.controllers", strings.Join(down, " "))
	return ft
}

// TestV2RootFitDecidesAsBefore: skipping the leaf, sibling and root
// strategies when the hierarchy's root lacks a controller the limits need
// never changes what Open decides (mode, strategy, the cpu let go, the
// refusal, the scope asked), across roots offering every subset of cpu,
// memory and pids, delegated or not, root or not, every kind of limit,
// with and without --require-limits. Seen failing with rootFit's partial
// argument forced to false (a root without cpu then gave "none" where the
// leaf had taken memory and pids without cpu).
func TestV2RootFitDecidesAsBefore(t *testing.T) {
	// The table makes over 500 fake trees: on a tmpfs where there is one
	// (a disk's file creations made it 25 s under load).
	if shm, err := os.MkdirTemp("/dev/shm", "jail-cgroup-test-"); err == nil {
		t.Cleanup(func() { os.RemoveAll(shm) })
		t.Setenv("TMPDIR", shm)
	}
	ctrls := []string{"cpu", "memory", "pids"}
	lims := []Limits{
		{MemoryBytes: 64 << 20, Pids: 64},
		{MemoryBytes: 64 << 20, CPUs: 1, Pids: 64},
		{CPUs: 0.5, Pids: -1},
	}
	// The leaf (delegated), the sibling (only the parent delegated), the
	// root strategy (nothing delegated, as root).
	places := []struct {
		cur  string
		euid int
	}{{"/a.slice/term.scope", 1000}, {"/a.slice/ro-term.scope", 1000}, {"/ro.slice/ro-term.scope", 0}}
	type outcome struct {
		mode, strategy string
		warnings       string
		err            string
		scopeAsks      int
	}
	open := func(t *testing.T, skip bool, mask int, drop, cur string, euid int, lim Limits, require bool) outcome {
		rootFitSkips = skip
		defer func() { rootFitSkips = true }()
		var root []string
		for i, c := range ctrls {
			if mask&(1<<i) != 0 {
				root = append(root, c)
			}
		}
		ft := rootFitTree(t, cur, root, drop)
		geteuid = func() int { return euid }
		opts := ft.opts()
		opts.Require = require
		asks := 0
		if euid != 0 {
			// As the supervisor does for an ordinary user; the manager
			// answers with an error, so the tree stays as it is.
			opts.Scope = func() (string, error) { asks++; return "", errors.New("no user manager") }
		}
		g, rep, err := Open("x", lim, opts)
		// Each tree has a directory of its own: the warnings name it.
		o := outcome{mode: rep.Mode, strategy: rep.Strategy, warnings: strings.ReplaceAll(strings.Join(rep.Warnings, "|"), ft.root, "ROOT"), scopeAsks: asks}
		if err != nil {
			o.err = fmt.Sprint(errors.Is(err, ErrNoCgroup))
		}
		if g != nil {
			if err := g.Delete(); err != nil {
				t.Fatal(err)
			}
		}
		return o
	}
	n, skipped := 0, 0
	for mask := 0; mask < 1<<len(ctrls); mask++ {
		for _, drop := range []string{"", "cpu"} {
			for _, pl := range places {
				for li, lim := range lims {
					for _, require := range []bool{false, true} {
						name := fmt.Sprintf("root%03b-drop%s-%s-uid%d-lim%d-req%v", mask, drop, strings.ReplaceAll(pl.cur, "/", "_"), pl.euid, li, require)
						before := open(t, false, mask, drop, pl.cur, pl.euid, lim, require)
						after := open(t, true, mask, drop, pl.cur, pl.euid, lim, require)
						if before != after {
							t.Errorf("%s: every strategy tried: %+v; with the root's early answer: %+v", name, before, after)
						}
						n++
						if before.mode == "none" || before.err != "" {
							skipped++
						}
					}
				}
			}
		}
	}
	// Both kinds of outcome were compared, not only failures.
	if skipped == 0 || skipped == n {
		t.Fatalf("%d of %d cases without a cgroup: the table does not reach both outcomes", skipped, n)
	}
}

// TestV2RootFitSkipsStrategies: when the hierarchy's root lacks a
// controller the limits need (a hybrid host's cgroup2, which offers only
// what v1 does not hold), Open makes and moves nothing, reads nothing
// below the root, still asks for the scope (the user is told what the user
// manager said), and says why in one reason. Seen failing with rootFit's
// answer ignored (the leaf's and sibling's reasons instead).
func TestV2RootFitSkipsStrategies(t *testing.T) {
	ft := rootFitTree(t, scope, []string{"cpu"}, "")
	// Were the strategies tried, they would read these and fail on them.
	for _, d := range []string{scope, filepath.Dir(scope)} {
		if err := os.Remove(filepath.Join(ft.root, d, "cgroup.controllers")); err != nil {
			t.Fatal(err)
		}
	}
	opts := ft.opts()
	asks := 0
	opts.Scope = func() (string, error) { asks++; return "", errors.New("no user manager") }
	g, rep, err := Open("x", Limits{MemoryBytes: 64 << 20, Pids: 64, WatchMemory: true}, opts)
	if err != nil || g.Mode() != "none" {
		t.Fatalf("mode %v, err %v", g, err)
	}
	want := ft.root + " lacks controllers [memory pids], so no group below it has them; systemd user scope: no user manager"
	if rep.Reason != "cgroup v2: "+want || asks != 1 || rep.ScopeErr == nil {
		t.Errorf("reason %q (want %q), scope asked %d times, scope error %v", rep.Reason, "cgroup v2: "+want, asks, rep.ScopeErr)
	}
	ents, _ := os.ReadDir(filepath.Join(ft.root, scope))
	for _, e := range ents {
		if e.IsDir() {
			t.Errorf("made %s", e.Name())
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ft.root, scope, "cgroup.procs")); strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("cgroup.procs now %q", b)
	}
	if !slices.Contains(strings.Fields(ft.read(filepath.Join(ft.root, filepath.Dir(scope), "cgroup.subtree_control"))), "cpu") {
		t.Errorf("subtree_control changed")
	}
}
