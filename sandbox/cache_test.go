package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
)

func TestCacheMounts(t *testing.T) {
	home := t.TempDir()
	xdg := filepath.Join(t.TempDir(), "xdg")
	env := []string{"HOME=" + home, "XDG_CACHE_HOME=" + xdg}
	cases := []struct {
		name    string
		pol     policy.Policy
		binds   []ns.Mount
		src     string // want Source of the first mount ("" = Path)
		target  string
		wantErr string
	}{
		{name: "profile's", pol: policy.Policy{Cache: []string{"go:~/.cache/go-build"}},
			src: filepath.Join(xdg, "jail/cache/go/home/.cache/go-build"), target: filepath.Join(home, ".cache/go-build")},
		{name: "flag's", pol: policy.Policy{Cache: []string{"~/.npm"}},
			src: filepath.Join(xdg, "jail/cache/default/home/.npm"), target: filepath.Join(home, ".npm")},
		{name: "outside home", pol: policy.Policy{Cache: []string{"rust:/opt/cargo"}},
			src: filepath.Join(xdg, "jail/cache/rust/root/opt/cargo"), target: "/opt/cargo"},
		{name: "host-caches", pol: policy.Policy{Cache: []string{"go:~/go/pkg/mod"}, HostCaches: true},
			src: "", target: filepath.Join(home, "go/pkg/mod")},
		{name: "inside a writable path", pol: policy.Policy{Cache: []string{"codex:~/.codex/packages"}},
			binds: []ns.Mount{{Kind: ns.KindBind, Path: filepath.Join(home, ".codex"), Why: "write"}},
			src:   filepath.Join(xdg, "jail/cache/codex/home/.codex/packages"), target: filepath.Join(home, ".codex/packages")},
		{name: "a visible path itself", pol: policy.Policy{Cache: []string{"go:~/.cache"}},
			binds: []ns.Mount{{Kind: ns.KindBind, Path: filepath.Join(home, ".cache"), Why: "write"}}, wantErr: "already visible"},
		{name: "inside a read-only path", pol: policy.Policy{Cache: []string{"~/ro/x"}},
			binds: []ns.Mount{{Kind: ns.KindROBind, Path: filepath.Join(home, "ro"), Why: "read"}}, wantErr: "read-only"},
		{name: "a symlink in a writable path", pol: policy.Policy{Cache: []string{"~/w/link"}},
			binds: []ns.Mount{{Kind: ns.KindBind, Path: filepath.Join(home, "w"), Why: "write"}}, wantErr: "not a directory"},
		// ~/.claude -> w/claude, w writable: mounted where the link leads
		// (the host's directory there), named as the profile names it.
		{name: "a symlink on the way into a writable path", pol: policy.Policy{Cache: []string{"claude:~/.claude/projects"}},
			binds: []ns.Mount{{Kind: ns.KindBind, Path: filepath.Join(home, "w"), Why: "workspace"}},
			src:   filepath.Join(xdg, "jail/cache/claude/home/.claude/projects"), target: filepath.Join(home, "w/claude/projects")},
		{name: "a symlink on the way, host-caches", pol: policy.Policy{Cache: []string{"claude:~/.claude/file-history"}, HostCaches: true},
			binds: []ns.Mount{{Kind: ns.KindBind, Path: filepath.Join(home, "w"), Why: "workspace"}},
			src:   "", target: filepath.Join(home, "w/claude/file-history")},
		{name: "a symlink on the way, the cache a link", pol: policy.Policy{Cache: []string{"claude:~/.claude/link"}},
			binds: []ns.Mount{{Kind: ns.KindBind, Path: filepath.Join(home, "w"), Why: "workspace"}}, wantErr: "not a directory"},
		{name: "a symlink on the way, not writable", pol: policy.Policy{Cache: []string{"claude:~/.claude/projects"}},
			src: filepath.Join(xdg, "jail/cache/claude/home/.claude/projects"), target: filepath.Join(home, ".claude/projects")},
	}
	if err := os.MkdirAll(filepath.Join(home, "w"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(home, "w", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, "w", "claude", "projects"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(home, "w", "claude", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("w/claude", filepath.Join(home, ".claude")); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := cacheMounts(&c.pol, env, home, c.binds)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || len(got) != 1 {
				t.Fatalf("cacheMounts = %v, %v", got, err)
			}
			m := got[0]
			if m.Kind != ns.KindBind || m.Path != c.target || m.Source != c.src || !m.Dir {
				t.Errorf("mount = %+v, want bind %s from %q", m, c.target, c.src)
			}
		})
	}
}

// evalUnder, the caches' resolution with their parents resolved once,
// answers as filepath.EvalSymlinks does: through a linked parent, a linked
// last element, a link to a link, a missing last element or parent, a
// dangling link, and a plain directory.
func TestEvalUnderIsEvalSymlinks(t *testing.T) {
	base := t.TempDir()
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(base, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ln := func(target, p string) {
		if err := os.Symlink(target, filepath.Join(base, p)); err != nil {
			t.Fatal(err)
		}
	}
	mk("real/a/b")
	mk("other/c")
	ln("real", "lparent")                           // a linked parent
	ln(filepath.Join(base, "other/c"), "real/a/lc") // a linked last element, absolute
	ln("lc", "real/a/llc")                          // a link to a link, relative
	ln("nowhere", "real/a/dangling")
	ln("../other", "real/up") // a relative link out of its directory
	for _, p := range []string{
		"real/a/b", "lparent/a/b", "real/a/lc", "lparent/a/llc", "real/a/missing",
		"missing/x", "real/a/dangling", "real/up/c", "lparent/up/c", "real/a/b/.", "real",
	} {
		full := filepath.Join(base, p)
		want, werr := filepath.EvalSymlinks(full)
		calls := 0
		got, gerr := evalUnder(full, func(d string) string { calls++; return resolveExisting(d) })
		if (gerr == nil) != (werr == nil) || got != want {
			t.Errorf("%s: evalUnder %q (%v), EvalSymlinks %q (%v)", p, got, gerr, want, werr)
		}
		if calls == 0 && werr == nil && filepath.Base(full) != "." {
			t.Errorf("%s: the parent was not asked of resolveDir", p)
		}
	}
}
