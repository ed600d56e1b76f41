package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const appSlice = "/user.slice/user-1000.slice/user@1000.service/app.slice"

// fakeScope stands in for the systemd user manager on the fake tree: it
// creates the scope's group (its controllers are what app.slice hands
// down, as systemd enables them for a delegated unit), moves this process
// there (cgroup.procs and /proc/self/cgroup) and returns its path.
func (ft *fakeTree) fakeScope(calls *int) func() (string, error) {
	return func() (string, error) {
		*calls++
		unit := fmt.Sprintf("%s/jail-run-%d-0a1b2c3d.scope", appSlice, os.Getpid())
		if err := ft.mkdir(filepath.Join(ft.root, unit)); err != nil {
			return "", err
		}
		ft.file(unit, "cgroup.subtree_control", "")
		ft.file(unit, "cgroup.procs", strconv.Itoa(os.Getpid())+"\n")
		ft.file(scope, "cgroup.procs", "4242\n")
		ft.file("", "self-cgroup", "0::"+unit+"\n")
		return unit, nil
	}
}

// An ordinary user on a systemd desktop: jail's cgroup (the terminal's
// scope) holds the shell too, so "leaf" cannot work; the user manager's
// delegated scope gives real limits, and systemd's slice is left alone.
func TestV2ScopeFromUserManager(t *testing.T) {
	ft := newFakeTree(t, scope)
	ft.file(scope, "cgroup.procs", fmt.Sprintf("4242\n%d\n", os.Getpid()))
	calls := 0
	opts := ft.opts()
	opts.Scope = ft.fakeScope(&calls)
	g, rep, err := Open("agent", Limits{MemoryBytes: 512 << 20, CPUs: 1, Pids: 100}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Delete()
	unit := filepath.Join(ft.root, appSlice, fmt.Sprintf("jail-run-%d-0a1b2c3d.scope", os.Getpid()))
	if calls != 1 || rep.Mode != "v2" || rep.Strategy != "scope" || filepath.Dir(g.Path()) != unit || rep.ScopeErr != nil {
		t.Fatalf("calls %d, report %+v, group %s", calls, rep, g.Path())
	}
	if got := ft.read(filepath.Join(unit, fmt.Sprintf("jail-%d-supervisor", os.Getpid()), "cgroup.procs")); got != strconv.Itoa(os.Getpid()) {
		t.Errorf("supervisor leaf in the scope holds %q", got)
	}
	for f, want := range map[string]string{"memory.max": "536870912", "memory.swap.max": "0", "pids.max": "100", "cpu.max": "100000 100000"} {
		if got := ft.read(filepath.Join(g.Path(), f)); got != want {
			t.Errorf("%s = %q, want %q", f, got, want)
		}
	}
	if strings.Join(rep.Enforced, " ") != "memory=512M(cgroup-v2) cpus=1(cgroup-v2) pids=100(cgroup-v2)" {
		t.Errorf("enforced %v", rep.Enforced)
	}
	ents, _ := os.ReadDir(filepath.Join(ft.root, appSlice))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "jail-") && !strings.HasPrefix(e.Name(), "jail-run-") {
			t.Errorf("a group was made in systemd's slice: %s", e.Name())
		}
	}
}

// Already alone in a delegated cgroup (systemd-run --user --scope -p
// Delegate=yes jail ...): the manager is not asked.
func TestV2ScopeNotAskedWhenLeafWorks(t *testing.T) {
	ft := newFakeTree(t, scope)
	calls := 0
	opts := ft.opts()
	opts.Scope = ft.fakeScope(&calls)
	g, rep, err := Open("", Limits{Pids: 10}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Delete()
	if calls != 0 || rep.Strategy != "leaf" {
		t.Errorf("calls %d, strategy %s", calls, rep.Strategy)
	}
}

// Without a user manager (or when it lies about where the process went),
// Open goes on as before, says why in the first warning and in Reason, and
// --require-limits refuses with that reason.
func TestV2ScopeFailures(t *testing.T) {
	noBus := errors.New("no user D-Bus: DBUS_SESSION_BUS_ADDRESS is unset and there is no /run/user/1000/bus")
	for _, c := range []struct {
		name string
		hook func(ft *fakeTree) func() (string, error)
		want string
	}{
		{"no bus", func(*fakeTree) func() (string, error) { return func() (string, error) { return "", noBus } }, noBus.Error()},
		{"process not moved", func(*fakeTree) func() (string, error) {
			return func() (string, error) { return appSlice + "/elsewhere.scope", nil }
		}, "the manager reported " + appSlice + "/elsewhere.scope, but this process is in " + "/ro.slice/ro-term.scope"},
		{"controllers not delegated", func(ft *fakeTree) func() (string, error) {
			return func() (string, error) {
				unit := appSlice + "/jail-run-1.scope"
				ft.mkdir(filepath.Join(ft.root, unit))
				ft.file(unit, "cgroup.controllers", "pids")
				ft.file(unit, "cgroup.procs", strconv.Itoa(os.Getpid())+"\n")
				ft.file("", "self-cgroup", "0::"+unit+"\n")
				return unit, nil
			}
		}, "lacks controllers [cpu memory]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ft := newFakeTree(t, "/ro.slice/ro-term.scope")
			os.MkdirAll(filepath.Join(ft.root, appSlice), 0o755)
			ft.file(appSlice, "cgroup.subtree_control", "cpu memory pids")
			opts := ft.opts()
			opts.Scope = c.hook(ft)
			lim := Limits{MemoryBytes: 64 << 20, CPUs: 1, WatchMemory: true}
			g, rep, err := Open("", lim, opts)
			if err != nil {
				t.Fatal(err)
			}
			if g.Mode() != "none" || rep.ScopeErr == nil || !strings.Contains(rep.ScopeErr.Error(), c.want) {
				t.Fatalf("mode %s, scope error %v, want %q", g.Mode(), rep.ScopeErr, c.want)
			}
			if !strings.Contains(rep.Reason, "systemd user scope: ") || !strings.Contains(rep.Reason, c.want) {
				t.Errorf("reason %q", rep.Reason)
			}
			if !strings.HasPrefix(rep.Warnings[0], "no delegated cgroup from the systemd user manager (") || !strings.Contains(rep.Warnings[0], c.want) {
				t.Errorf("first warning %q", rep.Warnings[0])
			}
			opts.Require = true
			if _, _, err := Open("", lim, opts); !errors.Is(err, ErrNoCgroup) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "systemd user session") {
				t.Errorf("Require: %v", err)
			}
		})
	}
}

// systemd before 252 delegates memory and pids but not cpu to user
// sessions: memory and pids are still enforced for real, --cpus is said not
// to be, and --require-limits refuses.
func TestV2ScopeWithoutCPUController(t *testing.T) {
	ft := newFakeTree(t, scope)
	ft.file(scope, "cgroup.procs", fmt.Sprintf("4242\n%d\n", os.Getpid()))
	ft.file(appSlice, "cgroup.subtree_control", "memory pids")
	calls := 0
	opts := ft.opts()
	opts.Scope = ft.fakeScope(&calls)
	lim := Limits{MemoryBytes: 512 << 20, CPUs: 2, Pids: 100}
	g, rep, err := Open("", lim, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Delete()
	if rep.Strategy != "scope" || strings.Join(rep.Enforced, " ") != "memory=512M(cgroup-v2) pids=100(cgroup-v2)" {
		t.Fatalf("report %+v", rep)
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "`cpus` 2 is not enforced") {
		t.Errorf("warnings %q", rep.Warnings)
	}
	if got := ft.read(filepath.Join(g.Path(), "memory.max")); got != "536870912" {
		t.Errorf("memory.max = %q", got)
	}
	if got := ft.read(filepath.Join(g.Path(), "cpu.max")); got != "" {
		t.Errorf("cpu.max written without a cpu controller: %q", got)
	}

	ft2 := newFakeTree(t, scope)
	ft2.file(scope, "cgroup.procs", fmt.Sprintf("4242\n%d\n", os.Getpid()))
	ft2.file(appSlice, "cgroup.subtree_control", "memory pids")
	opts2 := ft2.opts()
	opts2.Scope = ft2.fakeScope(&calls)
	opts2.Require = true
	if _, _, err := Open("", lim, opts2); !errors.Is(err, ErrNoCgroup) || !strings.Contains(err.Error(), "lacks controllers [cpu]") {
		t.Errorf("--require-limits without a cpu controller: %v", err)
	}
}
