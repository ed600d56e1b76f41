//go:build linux

package tests

// A guarded agent settings path whose way holds a symlink the host made
// (ws/.claude -> cfg/claude, a shared configuration), or that its owner
// cannot open (a directory or file of mode 0), could not be snapshotted:
// the guard left it out and only said so. The agent then wrote its hooks
// through the link, replaced the link with a directory of its own, or gave
// itself back the access and wrote them: the host's next agent session in
// the workspace ran them (session 18, lane F).

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wayAttack writes a hooks settings file at $P every way the agent can:
// through the path, and with every directory on the way replaced by one of
// its own, after giving itself back the access. It never fails.
const wayAttack = `
hook='{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"touch /tmp/pwned"}]}]}}'
d=$(dirname "$P")
chmod u+rwx "$d" 2>/dev/null; chmod u+rw "$P" 2>/dev/null
printf '%s' "$hook" > "$P" 2>/dev/null
rm -f "$d" 2>/dev/null || mv "$d" "$d.old" 2>/dev/null
mkdir -p "$d" 2>/dev/null && printf '%s' "$hook" > "$P" 2>/dev/null
exit 0
`

func TestAgentConfigWayHeld(t *testing.T) {
	cases := []struct {
		name string
		// make makes the way to ws/.claude/settings.json odd (as the host).
		make func(t *testing.T, ws string)
		// root: only where the host's user cannot read what it made.
		unreadable bool
	}{
		{name: "symlink-in-workspace", make: func(t *testing.T, ws string) {
			mkdirs(t, filepath.Join(ws, "cfg", "claude"))
			writeFile(t, filepath.Join(ws, "cfg", "claude", "settings.json"), "{}")
			symlink(t, "cfg/claude", filepath.Join(ws, ".claude"))
		}},
		{name: "symlink-absent-file", make: func(t *testing.T, ws string) {
			mkdirs(t, filepath.Join(ws, "cfg", "claude"))
			symlink(t, "cfg/claude", filepath.Join(ws, ".claude"))
		}},
		{name: "symlink-outside", make: func(t *testing.T, ws string) {
			out := workspace(t)
			writeFile(t, filepath.Join(out, "settings.json"), "{}")
			symlink(t, out, filepath.Join(ws, ".claude"))
		}},
		{name: "unsearchable-dir", unreadable: true, make: func(t *testing.T, ws string) {
			d := filepath.Join(ws, ".claude")
			mkdirs(t, d)
			writeFile(t, filepath.Join(d, "settings.json"), "{}")
			chmod(t, d, 0)
		}},
		{name: "unreadable-file", unreadable: true, make: func(t *testing.T, ws string) {
			d := filepath.Join(ws, ".claude")
			mkdirs(t, d)
			writeFile(t, filepath.Join(d, "settings.json"), "{}")
			chmod(t, filepath.Join(d, "settings.json"), 0)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.unreadable && os.Geteuid() == 0 {
				// root reads a mode-0 file: the guard snapshots it.
				t.Log("as root the guard opens what mode 0 closes: checked as the unprivileged user")
			}
			home, state, ws := workspace(t), workspace(t), workspace(t)
			c.make(t, ws)
			t.Cleanup(func() { chmodTree(ws) })
			p := filepath.Join(ws, ".claude", "settings.json")
			env := []string{"HOME=" + home, "XDG_STATE_HOME=" + state}
			r := sh(t, runOpts{dir: ws, env: env}, "P='"+p+"'\n"+wayAttack)
			// Refused is safe but not the answer: the host's own set-up
			// (a shared configuration, a locked directory) runs.
			mustCode(t, r, 0)
			chmodTree(ws)
			// What the host's claude reads in the workspace, through
			// whatever is there now.
			b, _ := os.ReadFile(p)
			if strings.Contains(string(b), "pwned") {
				t.Fatalf("the agent's hooks are in %s after the run: %s\nstderr:\n%s", p, b, r.stderr)
			}
			fi, err := os.Lstat(filepath.Join(ws, ".claude"))
			if strings.HasPrefix(c.name, "symlink") && (err != nil || fi.Mode()&os.ModeSymlink == 0) {
				t.Fatalf("the host's link %s is gone after the run (%v)\nstderr:\n%s", filepath.Join(ws, ".claude"), err, r.stderr)
			}
			if strings.Contains(r.stderr, "not guarded") {
				t.Errorf("still said as not guarded:\n%s", r.stderr)
			}
		})
	}
}

func mkdirs(t *testing.T, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, to, at string) {
	t.Helper()
	if err := os.Symlink(to, at); err != nil {
		t.Fatal(err)
	}
}

func chmod(t *testing.T, p string, m os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, m); err != nil {
		t.Fatal(err)
	}
}

// chmodTree gives the owner back its access to what the test made
// unreadable (so that the checks and the cleanup read it).
func chmodTree(ws string) {
	for _, p := range []string{filepath.Join(ws, ".claude"), filepath.Join(ws, ".claude", "settings.json")} {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink == 0 {
			m := os.FileMode(0o644)
			if fi.IsDir() {
				m = 0o755
			}
			os.Chmod(p, m)
		}
	}
}

// TestAgentConfigWayLoop: a symlink loop on the way to a guarded settings
// path refused every later start there ("changed while the sandbox was
// being made ... start jail again": the plan kept the target as it was and
// the guard cannot open its way). The agent makes one in a run of the
// workspace below it, where no guarded path of that run lies (sub/.claude ->
// .claude), and every later jail in sub refused. The later run must start,
// and its agent, which may replace the loop with a directory of its own,
// must leave no hooks the host's claude reads there.
func TestAgentConfigWayLoop(t *testing.T) {
	for _, c := range []struct{ name, make string }{
		{"self", "ln -s .claude .claude"},
		{"two-links", "ln -s a .claude && ln -s .claude a"},
		{"through-a-dir", "ln -s a/c .claude && mkdir b && ln -s b/../.claude a"},
	} {
		t.Run(c.name, func(t *testing.T) {
			home, state, ws := workspace(t), workspace(t), workspace(t)
			sub := filepath.Join(ws, "sub")
			mkdirs(t, sub)
			env := []string{"HOME=" + home, "XDG_STATE_HOME=" + state}
			r := sh(t, runOpts{dir: ws, env: env}, "cd sub && "+c.make)
			mustCode(t, r, 0)
			if fi, err := os.Lstat(filepath.Join(sub, ".claude")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("precondition: no loop at %s after the first run (%v)\nstderr:\n%s", filepath.Join(sub, ".claude"), err, r.stderr)
			}
			p := filepath.Join(sub, ".claude", "settings.json")
			r = sh(t, runOpts{dir: sub, env: env}, "P='"+p+"'\n"+wayAttack)
			// Refused, every later start there would be: the agent's to
			// deny the user's runs.
			mustCode(t, r, 0)
			b, _ := os.ReadFile(p)
			if strings.Contains(string(b), "pwned") {
				t.Fatalf("the agent's hooks are in %s after the run: %s\nstderr:\n%s", p, b, r.stderr)
			}
			if fi, err := os.Lstat(filepath.Join(sub, ".claude")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("the link %s is gone after the run (%v)\nstderr:\n%s", filepath.Join(sub, ".claude"), err, r.stderr)
			}
		})
	}
}

// TestAgentConfigWayDirLeft: a host-made link on the way to agent settings
// that passes a directory and leaves it (ws/.claude -> b/../cfg/claude).
// The guard held the links and the file, not b: the agent swapped b for a
// link to a tree of its own (b -> evil/x), and the host's claude read
// evil/cfg/claude/settings.json's hooks through the unchanged link. A
// normal run pins b; a degraded one (no mounts, so no pins) left it open
// (session 19): it refuses to start, naming b and the flag.
func TestAgentConfigWayDirLeft(t *testing.T) {
	dirLeftModes(t, func(t *testing.T, flags []string) {
		home, state, ws := workspace(t), workspace(t), workspace(t)
		mkdirs(t, filepath.Join(ws, "b"))
		mkdirs(t, filepath.Join(ws, "cfg", "claude"))
		writeFile(t, filepath.Join(ws, "cfg", "claude", "settings.json"), "{}")
		symlink(t, "b/../cfg/claude", filepath.Join(ws, ".claude"))
		p := filepath.Join(ws, ".claude", "settings.json")
		env := []string{"HOME=" + home, "XDG_STATE_HOME=" + state}
		r := sh(t, runOpts{dir: ws, env: env}, `
hook='{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"touch /tmp/pwned"}]}]}}'
mkdir -p evil/x evil/cfg/claude && printf '%s' "$hook" > evil/cfg/claude/settings.json
mv b b.old 2>/dev/null || rm -rf b 2>/dev/null
ln -s evil/x b 2>/dev/null
exit 0`, flags...)
		pinnedOrRefused(t, r, flags, filepath.Join(ws, "b")+" and leaves it")
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), "pwned") {
			t.Fatalf("the agent's hooks are read through %s after the run: %s\nstderr:\n%s", p, b, r.stderr)
		}
	})
}

// dirLeftModes runs f as a normal run and as a degraded one (flags
// --x-degraded): the tests of a guarded link whose way passes a directory
// the sandbox can write and leaves it.
func dirLeftModes(t *testing.T, f func(t *testing.T, flags []string)) {
	t.Helper()
	for _, mode := range []struct {
		name  string
		flags []string
	}{{"normal", nil}, {"degraded", []string{"--x-degraded"}}} {
		t.Run(mode.name, func(t *testing.T) { f(t, mode.flags) })
	}
}

// pinnedOrRefused fails t unless the run r exited 0 or, degraded (flags
// set: no mounts, so no pin), was refused (125) with a message naming
// --degraded and holding named (the directory passed and left), after
// the line saying why the run is degraded.
func pinnedOrRefused(t *testing.T, r result, flags []string, named string) {
	t.Helper()
	if r.code == 125 && flags != nil {
		if !strings.Contains(r.stderr, "--degraded") || !strings.Contains(r.stderr, named) {
			t.Errorf("the refusal names neither the directory nor the flag:\n%s", r.stderr)
		}
		// Why degraded, said before the refusal (a degraded start
		// exited before its "degraded mode: ..." line: session 19).
		if !strings.Contains(r.stderr, "degraded mode: forced") {
			t.Errorf("the refusal does not say why the run is degraded:\n%s", r.stderr)
		}
		return
	}
	mustCode(t, r, 0)
}
