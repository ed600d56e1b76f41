package fsrules

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// cpuTime is this process's user+system time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkMatch isolates pattern matching from the filesystem: 10k paths
// against the built-ins plus 100 user patterns.
func BenchmarkMatch(b *testing.B) {
	var deny []string
	for i := 0; i < 100; i++ {
		deny = append(deny, []string{"**/*.ext%d", "pkg%d/**/secret*", "**/name%d[0-9].txt", "pkg%d/sub1/deep/file.go"}[i%4])
		deny[i] = fmt.Sprintf(deny[i], i)
	}
	c, err := compile(Input{Workspace: "/ws", Deny: deny})
	if err != nil {
		b.Fatal(err)
	}
	var dirs, bases []string
	for i := 0; i < 10000; i++ {
		dirs = append(dirs, fmt.Sprintf("/ws/pkg%d/sub%d/deep", i%20, i%10))
		bases = append(bases, fmt.Sprintf("file%d.go", i))
	}
	var scratch []byte
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range dirs {
			for k := range c.all {
				c.all[k].pat.matchEntryBuf(&scratch, dirs[j], bases[j], false)
			}
		}
	}
}

// mk creates files (and their directories) under base; a name ending in '/'
// is a directory.
func mk(t testing.TB, base string, names ...string) {
	t.Helper()
	for _, n := range names {
		p := filepath.Join(base, n)
		if strings.HasSuffix(n, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func tmp(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// summary renders masks as "kind rel" lines relative to base.
func summary(base string, ms []Mask) []string {
	var out []string
	for _, m := range ms {
		rel, _ := filepath.Rel(base, m.Path)
		if m.Dir {
			rel += "/"
		}
		out = append(out, m.Kind.String()+" "+rel)
	}
	return out
}

func eq(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got: %q\nwant: %q", what, got, want)
	}
}

func TestExpandDefaults(t *testing.T) {
	base := tmp(t)
	ws := filepath.Join(base, "ws")
	mk(t, ws, ".env", ".env.local", ".envrc", "deep/a/b/c/server.pem", "deep/a/b/c/server.pub",
		".git/hooks/pre-commit", ".git/config", ".git/HEAD", ".gitmodules", ".bashrc",
		"src/main.go", ".vscode/settings.json", ".vscode/.env", ".ssh/id_rsa", ".ssh/known_hosts",
		".docker/config.json", ".docker/other.json", "id_ed25519", "k/x.key", "notes.txt",
		".claude/commands/c.md", ".claude/settings.json")
	in := Input{Workspace: ws, Home: filepath.Join(base, "home"), Writable: []string{ws}}
	plan, err := Expand(in)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "masks", summary(ws, plan.Masks), []string{
		"read-only .bashrc",
		"read-only .claude/commands/",
		"hide .docker/config.json",
		"hide .env",
		"hide .env.local",
		"hide .envrc", // direnv: runs on cd, often holds credentials
		"read-only .git/config",
		"read-only .git/hooks/",
		"read-only .gitmodules",
		"hide .ssh/",
		"read-only .vscode/",
		"hide .vscode/.env", // hide inside read-only: mounted after its parent
		"hide deep/a/b/c/server.pem",
		"hide id_ed25519",
		"hide k/x.key",
	})
	// Sorted parents first.
	if !sort.SliceIsSorted(plan.Masks, func(i, j int) bool { return plan.Masks[i].Path < plan.Masks[j].Path }) {
		t.Error("masks not sorted")
	}
	for _, m := range plan.Masks {
		if m.Rule == "" {
			t.Errorf("mask %s has no rule", m.Path)
		}
	}
	// Absent protections are reported, not silently skipped.
	notes := strings.Join(plan.Notes, "\n")
	for _, n := range []string{".mcp.json", ".idea/", ".claude/agents/", ".aws/"} {
		if !strings.Contains(notes, n) {
			t.Errorf("notes do not mention absent %s:\n%s", n, notes)
		}
	}

	in.AllowGitConfig = true
	plan, _ = Expand(in)
	for _, m := range plan.Masks {
		if strings.Contains(m.Path, ".git") {
			t.Errorf("--allow-git-config left %s %s", m.Kind, m.Path)
		}
	}
	in.NoDefaultDeny = true
	plan, _ = Expand(in)
	if len(plan.Masks) != 0 {
		t.Errorf("--no-default-deny left %v", plan.Masks)
	}
}

func TestExpandUserDeny(t *testing.T) {
	base := tmp(t)
	ws, home, other := filepath.Join(base, "ws"), filepath.Join(base, "home"), filepath.Join(base, "other")
	mk(t, ws, "secrets/a.txt", "secrets/sub/b.txt", "db/x.sqlite", "y.sqlite", "build/", "buildfile", "keep.txt")
	mk(t, home, ".cache/tok", ".config/app/token")
	mk(t, other, "srv/1/secret", "srv/2/secret", "srv/2/public")
	in := Input{Workspace: ws, Home: home, NoDefaultDeny: true, Writable: []string{ws},
		Readable: []string{filepath.Join(home, ".config")},
		Deny: []string{"secrets/", "**/*.sqlite", "build/", "~/.config/app/token", other + "/srv/*/secret",
			"nothing-here-*", "~/.cache/tok"}}
	plan, err := Expand(in)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "masks", summary(base, plan.Masks), []string{
		"hide home/.config/app/token",
		"hide other/srv/1/secret",
		"hide other/srv/2/secret",
		"hide ws/build/",
		"hide ws/db/x.sqlite",
		"hide ws/secrets/",
		"hide ws/y.sqlite",
	})
	notes := strings.Join(plan.Notes, "\n")
	if !strings.Contains(notes, "deny nothing-here-* matched nothing") {
		t.Errorf("no note for the empty match:\n%s", notes)
	}
	if !strings.Contains(notes, "deny ~/.cache/tok") || !strings.Contains(notes, "home directory") {
		t.Errorf("no note for a pattern under the hidden home:\n%s", notes)
	}
}

// TestExpandLinkTricks: a symlink named like a secret masks its target, and a
// hard link to a hidden file is hidden too.
func TestExpandLinkTricks(t *testing.T) {
	base := tmp(t)
	ws, shared := filepath.Join(base, "ws"), filepath.Join(base, "shared")
	mk(t, ws, "real.env.txt", ".git/config")
	mk(t, shared, "prod-credentials", "keys/k1")
	must(t, os.Symlink(filepath.Join(shared, "prod-credentials"), filepath.Join(ws, ".env")))
	must(t, os.Symlink(filepath.Join(shared, "keys"), filepath.Join(ws, ".ssh")))
	must(t, os.Symlink("/nonexistent/x", filepath.Join(ws, ".npmrc")))
	mk(t, ws, ".netrc")
	must(t, os.Link(filepath.Join(ws, ".netrc"), filepath.Join(ws, "innocent.txt")))
	must(t, os.Link(filepath.Join(ws, ".netrc"), filepath.Join(shared, "also")))
	plan, err := Expand(Input{Workspace: ws, Writable: []string{ws}, Readable: []string{shared}})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "masks", summary(base, plan.Masks), []string{
		"hide shared/also",
		"hide shared/keys/",
		"hide shared/prod-credentials",
		"read-only ws/.git/config",
		"hide ws/.netrc",
		"hide ws/innocent.txt",
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestValidate(t *testing.T) {
	base := tmp(t)
	ws, home := filepath.Join(base, "home/u/proj"), filepath.Join(base, "home/u")
	for _, c := range []struct {
		name string
		in   Input
		flag string
		err  error
	}{
		{"deny root", Input{Deny: []string{"/"}}, "deny", ErrDenyRoot},
		{"deny root glob", Input{Deny: []string{"/**"}}, "deny", ErrDenyRoot},
		{"escape", Input{Deny: []string{"../x"}}, "deny", ErrEscapesWorkspace},
		{"bad glob", Input{Deny: []string{"a["}}, "deny", ErrBadPattern},
		{"write under deny", Input{Deny: []string{"/data"}, Writable: []string{"/data/out"}}, "write", ErrConflict},
		{"write under deny glob", Input{Deny: []string{"/d*"}, Writable: []string{"/data/out"}}, "write", ErrConflict},
		{"read under deny", Input{Deny: []string{"~/.config"}, Readable: []string{home + "/.config/x"}}, "read", ErrConflict},
		{"workspace under deny", Input{Deny: []string{home}}, "workspace", ErrConflict},
		{"workspace is denied", Input{Deny: []string{"."}}, "workspace", ErrConflict},
		{"read builtin secret", Input{Readable: []string{home + "/.ssh"}}, "read", ErrConflict},
		{"write builtin read-only", Input{Writable: []string{ws + "/.vscode"}}, "write", ErrConflict},
		{"write git hooks", Input{Writable: []string{ws + "/.git/hooks"}}, "write", ErrConflict},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.in.Workspace, c.in.Home = ws, home
			err := Validate(c.in)
			var fe *Error
			if !errors.Is(err, c.err) || !errors.As(err, &fe) || fe.Key != c.flag || fe.Hint == "" {
				t.Fatalf("Validate = %v; want %v naming %s with a hint", err, c.err, c.flag)
			}
			if !strings.Contains(err.Error(), c.flag) {
				t.Errorf("message %q does not name %s", err, c.flag)
			}
			// The value may come from a file or a profile: no flag spelling.
			if strings.Contains(err.Error(), "--") {
				t.Errorf("message %q spells a flag; name the option key", err)
			}
		})
	}
	// The ancestors no rule matches are checked once for all the roots
	// (compile); one a rule matches is checked for each root. A read-only
	// workspace in a kept-read-only directory goes first, and a writable
	// root beside it, in the same directory, is still refused.
	shared := Input{Workspace: ws + "/.vscode/a", Home: home, Readable: []string{ws + "/.vscode/a"}, Writable: []string{ws + "/.vscode/b"}}
	if err := Validate(shared); !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), ws+"/.vscode/b") {
		t.Errorf("Validate(a writable root beside a read-only one in .vscode) = %v; want the writable one refused", err)
	}
	// Allowed: reading a built-in read-only path, --allow-git-config for hooks,
	// --no-default-deny for .ssh, masks *inside* a writable path.
	for _, in := range []Input{
		{Readable: []string{ws + "/.vscode"}},
		{Writable: []string{ws + "/.git/hooks"}, AllowGitConfig: true},
		{Readable: []string{home + "/.ssh"}, NoDefaultDeny: true},
		{Writable: []string{home}, Deny: []string{"~/.cache"}},
	} {
		in.Workspace, in.Home = ws, home
		if err := Validate(in); err != nil {
			t.Errorf("Validate(%+v) = %v", in, err)
		}
	}
}

func TestExpandTooMany(t *testing.T) {
	ws := tmp(t)
	for i := 0; i < 20; i++ {
		mk(t, ws, fmt.Sprintf("f%d", i))
	}
	_, err := Expand(Input{Workspace: ws, Writable: []string{ws}, MaxEntries: 10})
	if !errors.Is(err, ErrTooMany) {
		t.Fatalf("err = %v, want ErrTooMany", err)
	}
}

// BenchmarkExpand: 10k files, 100 patterns (the target: < 50 ms).
func BenchmarkExpand(b *testing.B) {
	ws := tmp(b)
	exts := []string{"go", "txt", "json", "md", "ts", "py", "rs", "c", "h", "yaml"}
	n := 0
	for d1 := 0; d1 < 20 && n < 10000; d1++ {
		for d2 := 0; d2 < 10 && n < 10000; d2++ {
			dir := filepath.Join(ws, fmt.Sprintf("pkg%d/sub%d/deep", d1, d2))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			for f := 0; f < 50 && n < 10000; f++ {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%d.%s", f, exts[f%len(exts)])), nil, 0o644); err != nil {
					b.Fatal(err)
				}
				n++
			}
		}
	}
	mk(b, ws, ".env", "pkg3/.env.local", "pkg7/sub1/deep/k.pem", ".git/config", ".git/hooks/x")
	var deny []string
	for i := 0; len(deny) < 1000; i++ {
		switch i % 4 {
		case 0:
			deny = append(deny, fmt.Sprintf("**/*.ext%d", i))
		case 1:
			deny = append(deny, fmt.Sprintf("pkg%d/**/secret%d*", i%20, i))
		case 2:
			deny = append(deny, fmt.Sprintf("**/name%d[0-9].txt", i))
		case 3:
			deny = append(deny, fmt.Sprintf("pkg%d/sub%d/deep/file%d.go", i%20, i%10, i))
		}
	}
	for _, np := range []int{0, 100, 1000} {
		b.Run(fmt.Sprintf("10k-files-%d-patterns", np), func(b *testing.B) {
			in := Input{Workspace: ws, Writable: []string{ws}, Deny: deny[:np]}
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				if _, err := Expand(in); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time is steadier than wall time on a shared machine.
			b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}

// Found lists the .git and HEAD entries the walk saw (git dirs, .git files,
// bare repositories), at any depth and in read-only roots too, but not
// inside a hidden directory; git names inside a git dir are not listed as
// absent (package gitguard watches those), .gitmodules still is.
func TestExpandFound(t *testing.T) {
	base := tmp(t)
	ws, ro := filepath.Join(base, "ws"), filepath.Join(base, "ro")
	mk(t, ws, ".git/HEAD", ".git/objects/", ".git/logs/HEAD", "sub/.git", "deep/a/b/bare.git/HEAD",
		"secret/.git/HEAD")
	mk(t, ro, ".git/HEAD")
	plan, err := Expand(Input{Workspace: ws, Writable: []string{ws}, Readable: []string{ro}, Deny: []string{"secret/"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range plan.Found {
		r, _ := filepath.Rel(base, p)
		got = append(got, r)
	}
	sort.Strings(got)
	eq(t, "found", got, []string{"ro/.git", "ro/.git/HEAD", "ws/.git", "ws/.git/HEAD", "ws/.git/logs/HEAD",
		"ws/deep/a/b/bare.git/HEAD", "ws/sub/.git"})
	var absent []string
	for _, a := range plan.Absent {
		absent = append(absent, strings.TrimPrefix(a.Path, ws+"/"))
	}
	for _, a := range absent {
		if strings.HasPrefix(a, ".git/") {
			t.Errorf("absent lists %s: gitguard's", a)
		}
	}
	if !contains(absent, ".gitmodules") {
		t.Errorf("absent lacks .gitmodules: %v", absent)
	}
}

// A .envrc the agent creates at the top of a writable root, of a home
// inside one, or of a repository found inside one is watched (absent),
// although it is a Hide name: direnv runs it outside jail when the user
// enters the directory (a [whitelist] in direnv.toml without asking).
// Other secret names missing in a project are not (projectSecret). On the
// code before, no .envrc was listed: a new one stayed on the host.
func TestExpandEnvrcAbsent(t *testing.T) {
	base := tmp(t)
	ws := filepath.Join(base, "ws")
	mk(t, ws, ".git/HEAD", "sub/.git/HEAD", "mod/.git", "has/.envrc", "has/.git/HEAD", "deep/a/x.go")
	plan, err := Expand(Input{Workspace: ws, Writable: []string{ws}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Kind{}
	for _, a := range plan.Absent {
		got[strings.TrimPrefix(a.Path, ws+"/")] = a.Kind
	}
	for _, p := range []string{".envrc", "sub/.envrc", "mod/.envrc"} {
		if k, ok := got[p]; !ok || k != Hide {
			t.Errorf("%s not watched as absent (hide): %v", p, got)
		}
	}
	for _, p := range []string{"has/.envrc", "deep/.envrc", "deep/a/.envrc", ".env"} {
		if _, ok := got[p]; ok {
			t.Errorf("%s watched: %v", p, got)
		}
	}
}
