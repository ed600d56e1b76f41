//go:build linux

package tests

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// jail gc run by an ordinary user collects only that user's leftovers: a
// dead supervisor's cgroup and private TMPDIR of another owner (root's)
// are left without a word of failure, and gc exits 0 when its own work
// succeeded. Root's gc then collects root's. Run from the root pass, which
// alone can make things of two owners; gc runs as jailtest (or nobody).
func TestGCOnlyOwnersLeftovers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make leftovers of another owner (the root pass runs jail gc as jailtest)")
	}
	uid, gid := 65534, 65534
	if u, err := user.Lookup("jailtest"); err == nil {
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
	}
	// A dead supervisor: a reaped child's pid with start tick 1, which no
	// process that could have its pid now has.
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	dead, id := c.Process.Pid, strings.ReplaceAll(marker(), ".", "")
	name := func(tag string) string { return fmt.Sprintf("jail-%d-t1-%s%s", dead, tag, id) }

	// The user's delegated cgroup (as systemd gives one), holding one
	// stale group of the user's and one of root's (which the kernel lets
	// the user remove: the parent is the user's); and one of root's where
	// the user may not write (not at the hierarchy's root, where any root
	// jail's start would collect it).
	base := "/sys/fs/cgroup/pids"
	if _, err := os.Stat(base + "/cgroup.procs"); err != nil {
		base = "/sys/fs/cgroup"
	}
	deleg, rootDir := filepath.Join(base, "jailtest-gcowner-"+id), filepath.Join(base, "jailtest-gcowner-root-"+id)
	for _, d := range []string{deleg, rootDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatalf("no cgroup hierarchy to make a group in: %v", err)
		}
	}
	userCg, rootInDeleg, rootCg := filepath.Join(deleg, name("user")), filepath.Join(deleg, name("rootd")), filepath.Join(rootDir, name("root"))
	t.Cleanup(func() {
		for _, d := range []string{userCg, rootInDeleg, deleg, rootCg, rootDir} {
			syscall.Rmdir(d)
		}
	})
	for _, d := range []string{userCg, rootInDeleg, rootCg} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{deleg, userCg} {
		if err := os.Chown(d, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	// A shared temp directory (sticky, as /tmp) with a private TMPDIR of
	// each owner's dead supervisor.
	tmp := workspace(t)
	os.Chmod(tmp, os.ModeSticky|0o777)
	userTmp, rootTmp := filepath.Join(tmp, name("tmp-user")), filepath.Join(tmp, name("tmp-root"))
	for _, d := range []string{userTmp, rootTmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.Chown(userTmp, uid, gid)

	// The user's own home and state, and a jail binary the user can run.
	bin := workspace(t)
	b, err := os.ReadFile(jail(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "jail"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	home := workspace(t)
	os.Chown(home, uid, gid)
	gc := func(asUser bool) result {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, "jail"), "gc")
		cmd.Dir = home
		env := []string{"HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state"), "TMPDIR=" + tmp, "PATH=/usr/bin:/bin"}
		if asUser {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		} else {
			env[0], env[1] = "HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir()
		}
		cmd.Env = env
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		r := result{stdout: out.String(), stderr: errb.String()}
		r.code = exitCode(t, err)
		return r
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	r := gc(true)
	if r.code != 0 || strings.Contains(r.stdout+r.stderr, "permission denied") {
		t.Errorf("jail gc as uid %d: exit %d, want 0 and no failure:\n%s%s", uid, r.code, r.stdout, r.stderr)
	}
	if exists(userCg) || exists(userTmp) {
		t.Errorf("jail gc as uid %d left its own leftovers (cgroup %v, TMPDIR %v):\n%s", uid, exists(userCg), exists(userTmp), r.stdout)
	}
	if !exists(rootCg) || !exists(rootInDeleg) || !exists(rootTmp) {
		t.Fatalf("jail gc as uid %d touched root's leftovers (kept: cgroup %v, cgroup in the user's %v, TMPDIR %v):\n%s",
			uid, exists(rootCg), exists(rootInDeleg), exists(rootTmp), r.stdout)
	}
	if n := strings.Count(r.stdout+r.stderr, "\n"); n > 2+1 {
		// removed cgroup, removed TMPDIR, at most one note on the others
		t.Errorf("jail gc as uid %d said more than its work and one note:\n%s%s", uid, r.stdout, r.stderr)
	}

	r = gc(false)
	mustCode(t, r, 0)
	if exists(rootCg) || exists(rootInDeleg) || exists(rootTmp) {
		t.Errorf("jail gc as root left root's leftovers (cgroup %v, cgroup in the user's %v, TMPDIR %v):\n%s",
			exists(rootCg), exists(rootInDeleg), exists(rootTmp), r.stdout)
	}
}
