//go:build linux

// End-to-end tests of real limits without root (issue 14): an ordinary user
// whose cgroup is not delegated gets jail to ask the systemd user manager,
// over the user's D-Bus, for a transient scope with Delegate=yes. Here the
// bus is a private dbus-daemon and the manager a fake (package
// userscope/userscopetest) that records what it was asked; it cannot move
// jail into a cgroup, so jail must notice (the kernel's /proc/self/cgroup,
// not the manager, is believed) and fall back with one line that says why.
// Where there is no bus at all, the line says that. Root never asks.
package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jail-sandbox/jail/userscope/userscopetest"
)

func TestUserScopeAskedAndVerified(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	addr := userscopetest.StartBus(t, dir)
	var mu sync.Mutex
	var exes []string
	m := &userscopetest.Manager{OnStart: func(name string, pids []uint32) (string, string) {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range pids {
			exe, _ := os.Readlink("/proc/" + strconv.Itoa(int(p)) + "/exe")
			exes = append(exes, exe)
		}
		return "/user.slice/user-1000.slice/user@1000.service/app.slice/" + name, "done"
	}}
	m.Serve(t, addr)
	env := []string{"DBUS_SESSION_BUS_ADDRESS=" + addr}

	r := run(t, runOpts{env: env}, "-v", "--memory", "256M", "--cpus", "1", "--", "/bin/true")
	if os.Geteuid() == 0 {
		mustCode(t, r, 0)
		if n := len(m.Starts()); n != 0 {
			t.Errorf("started by root, jail asked the user manager %d times; root makes its cgroups itself", n)
		}
		return
	}
	mustCode(t, r, 0)
	st := m.Starts()
	if len(st) != 1 {
		t.Fatalf("the user manager was asked %d times, want once:\n%s", len(st), r.stderr)
	}
	jailExe, _ := filepath.EvalSymlinks(jail(t))
	if d, _ := st[0].Props["Delegate"].Value().(bool); !d || !strings.HasPrefix(st[0].Name, "jail-run-") || len(exes) != 1 || exes[0] != jailExe {
		t.Errorf("asked for %q Delegate=%v with the processes of %q; want a delegated jail-run-* scope holding jail (%s)", st[0].Name, st[0].Props["Delegate"], exes, jailExe)
	}
	want := "jail: no delegated cgroup from the systemd user manager (the manager reported /user.slice/user-1000.slice/user@1000.service/app.slice/" + st[0].Name + ", but this process is in "
	if !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "limits: cgroup none") || !strings.Contains(r.stderr, "memory: watched, not kernel-enforced") {
		t.Errorf("jail did not say, in one line, that the scope it was told about is not where it is:\n%s", r.stderr)
	}

	r = run(t, runOpts{env: env}, "--require-limits", "--", "/bin/true")
	mustCode(t, r, 125)
	if !strings.Contains(r.stderr, "systemd user scope: the manager reported") || !strings.Contains(r.stderr, "systemd user session that delegates") {
		t.Errorf("--require-limits does not say why and what to do:\n%s", r.stderr)
	}
}

func TestUserScopeJobFails(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root never asks the user manager (TestUserScopeAskedAndVerified checks that)")
	}
	dir := t.TempDir()
	addr := userscopetest.StartBus(t, dir)
	(&userscopetest.Manager{OnStart: func(string, []uint32) (string, string) { return "", "failed" }}).Serve(t, addr)
	r := run(t, runOpts{env: []string{"DBUS_SESSION_BUS_ADDRESS=" + addr}}, "--memory", "256M", "--", "/bin/true")
	mustCode(t, r, 0)
	if !strings.Contains(r.stderr, "jail: no delegated cgroup from the systemd user manager (systemd user manager: starting jail-run-") || !strings.Contains(r.stderr, ": job failed)") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	// A bus without a manager.
	addr2 := userscopetest.StartBus(t, t.TempDir())
	r = run(t, runOpts{env: []string{"DBUS_SESSION_BUS_ADDRESS=" + addr2}}, "--memory", "256M", "--", "/bin/true")
	if !strings.Contains(r.stderr, "no systemd user manager on the user bus") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
}

// No user bus (WSL2, CI runners, containers): one line names what is
// missing, the memory watch takes over, --require-limits refuses.
func TestUserScopeNoBus(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root never asks the user manager")
	}
	if _, err := os.Stat("/run/user/" + strconv.Itoa(os.Getuid()) + "/bus"); err == nil {
		t.Skip("this user has a real user bus")
	}
	env := []string{"DBUS_SESSION_BUS_ADDRESS=", "XDG_RUNTIME_DIR=" + t.TempDir()}
	r := run(t, runOpts{env: env}, "--memory", "256M", "--", "/bin/true")
	mustCode(t, r, 0)
	if !strings.Contains(r.stderr, "jail: no delegated cgroup from the systemd user manager (no user D-Bus: DBUS_SESSION_BUS_ADDRESS is unset") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	r = run(t, runOpts{env: env}, "--require-limits", "--", "/bin/true")
	mustCode(t, r, 125)
	if !strings.Contains(r.stderr, "no user D-Bus") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
}
