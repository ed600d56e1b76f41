//go:build linux

package tests

// A guarded agent settings path the host made odd -- a FIFO, a directory, a
// file larger than the guard parses -- cannot be snapshotted, so the guard
// leaves it out. It used to stay writable all the same: the agent removed or
// renamed away what the host put there and wrote a settings file of its own
// (hooks the host's next agent session runs) that stayed after the run
// (session 17, lane E). Such a path is masked for the run instead.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// oddAttack tries every way at a path P the agent can write through: remove
// it, rename it away, rename a file over it, rename its directory away and
// make a new one, and write into it. It never fails: what it left is judged
// on the host.
const oddAttack = `
hook='{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"touch /tmp/pwned"}]}]}}'
d=$(dirname "$P")
rm -rf "$P" 2>/dev/null
mv "$P" "$P.away" 2>/dev/null
rmdir "$P" 2>/dev/null
printf '%s' "$hook" > "$d/new.json" 2>/dev/null && mv -f "$d/new.json" "$P" 2>/dev/null
printf '%s' "$hook" > "$P" 2>/dev/null
mv "$d" "$d.old" 2>/dev/null && mkdir -p "$d" && printf '%s' "$hook" > "$P"
exit 0
`

func TestAgentConfigOddPathMasked(t *testing.T) {
	type tc struct {
		name string
		// make makes the odd thing at p (as the host).
		make func(t *testing.T, p string)
		// rel: the guarded path, under home ("~/") or the workspace.
		rel string
		// flags beyond -w ~/.claude.
		homeW, inPlace bool
	}
	fifo := func(t *testing.T, p string) {
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := func(t *testing.T, p string) {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	big := func(t *testing.T, p string) {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		// Sparse: 65 MiB of nothing, past the guard's 64 MiB.
		if err := f.Truncate(65 << 20); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	cases := []tc{
		{name: "fifo", make: fifo, rel: "~/.claude/settings.json"},
		{name: "dir", make: dir, rel: "~/.claude/settings.json"},
		{name: "big", make: big, rel: "~/.claude/settings.json"},
		{name: "fifo-home-writable", make: fifo, rel: "~/.claude/settings.local.json", homeW: true},
		{name: "big-in-place", make: big, rel: "~/.claude.json", inPlace: true},
		{name: "fifo-workspace", make: fifo, rel: ".claude/settings.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home, state, ws := workspace(t), workspace(t), workspace(t)
			for _, d := range []string{filepath.Join(home, ".claude"), filepath.Join(ws, ".claude")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			p := filepath.Join(ws, c.rel)
			if rest, ok := strings.CutPrefix(c.rel, "~/"); ok {
				p = filepath.Join(home, rest)
			}
			c.make(t, p)
			var before syscall.Stat_t
			if err := syscall.Lstat(p, &before); err != nil {
				t.Fatal(err)
			}
			flags := []string{"-w", filepath.Join(home, ".claude")}
			if c.homeW {
				flags = []string{"-w", home, "--allow-writable-home"}
			}
			if c.inPlace {
				flags = append(flags, "-w", p)
			}
			env := []string{"HOME=" + home, "XDG_STATE_HOME=" + state}
			r := sh(t, runOpts{dir: ws, env: env}, "P='"+p+"'\n"+oddAttack, flags...)
			mustCode(t, r, 0)
			var after syscall.Stat_t
			if err := syscall.Lstat(p, &after); err != nil {
				t.Fatalf("%s is gone after the run: %v\nstderr:\n%s", p, err, r.stderr)
			}
			if after.Ino != before.Ino || after.Mode != before.Mode || after.Size != before.Size {
				b, _ := os.ReadFile(p) // never a FIFO here: its inode changed
				t.Fatalf("the agent replaced %s (mode %o -> %o, inode %d -> %d): %.200q\nstderr:\n%s",
					p, before.Mode, after.Mode, before.Ino, after.Ino, b, r.stderr)
			}
			if c.name == "dir" {
				if ents, _ := os.ReadDir(p); len(ents) > 0 {
					t.Errorf("the agent wrote into the directory %s: %v", p, ents)
				}
			}
			for _, left := range []string{p + ".away", filepath.Dir(p) + ".old"} {
				if _, err := os.Lstat(left); err == nil {
					t.Errorf("the agent moved %s away to %s", p, left)
				}
			}
			if n := strings.Count(r.stderr, "agent configuration masked: "+p); n != 1 {
				t.Errorf("the mask is said %d times, want once\nstderr:\n%s", n, r.stderr)
			}
			if strings.Contains(r.stderr, "not guarded: "+p) {
				t.Errorf("still said as not guarded:\n%s", r.stderr)
			}
		})
	}
}
