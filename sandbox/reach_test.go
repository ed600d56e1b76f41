package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/hostgit"
	"github.com/jail-sandbox/jail/hosttool"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
)

func write(t *testing.T, p, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

func hasNoteWith(notes []string, parts ...string) bool {
	for _, n := range notes {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(n, p)
		}
		if ok {
			return true
		}
	}
	return false
}

func TestWorkspaceGitTopLevel(t *testing.T) {
	f := newFixture(t)
	write(t, filepath.Join(f.ws, ".git", "HEAD"), "ref: refs/heads/main\n", 0o644)
	write(t, filepath.Join(f.ws, ".git", "config"), "[core]\n", 0o644)
	f.mkdir(t, ".git/hooks", "a/b")
	sub := filepath.Join(f.ws, "a", "b")
	write(t, filepath.Join(f.home, ".git", "HEAD"), "ref: refs/heads/main\n", 0o644)
	inHome := filepath.Join(f.home, "proj")
	os.MkdirAll(inHome, 0o755)

	tests := []struct {
		name, workspace, cwd string
		wantWS, wantCwd      string
		note                 string
	}{
		{"subfolder", "", sub, f.ws, sub, "top level of the git work tree"},
		{"top level", "", f.ws, f.ws, f.ws, ""},
		{"--workspace overrides", sub, sub, sub, sub, ""},
		{"cwd outside --workspace", sub, f.home, sub, sub, ""},
		{"a repository holding the home", "", inHome, inHome, inHome, "holds your home"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := BuildPlan(f.policy(func(p *policy.Policy) { p.Workspace, p.Cwd = tt.workspace, tt.cwd }), f.env)
			if err != nil {
				t.Fatal(err)
			}
			if pl.Workspace != tt.wantWS || pl.Cwd != tt.wantCwd {
				t.Errorf("workspace %s cwd %s, want %s %s", pl.Workspace, pl.Cwd, tt.wantWS, tt.wantCwd)
			}
			if tt.note != "" && !hasNoteWith(pl.Notes, tt.note) {
				t.Errorf("no note %q: %v", tt.note, pl.Notes)
			}
			if tt.note == "" && (hasNoteWith(pl.Notes, "workspace: ") || hasNoteWith(pl.Notes, "git: ")) {
				t.Errorf("unexpected note: %v", pl.Notes)
			}
			// The top level gets the workspace's protections, no more.
			if pl.Workspace == f.ws {
				for _, p := range []string{".git/config", ".git/hooks"} {
					if _, m := find(pl.Mounts, filepath.Join(f.ws, p)); m.Kind != ns.KindReadOnly {
						t.Errorf("%s: %q, want read-only", p, m.Kind)
					}
				}
			}
		})
	}
}

func TestGitIdentityEnv(t *testing.T) {
	f := newFixture(t)
	old := readGitIdentity
	defer func() { readGitIdentity = old }()
	var asked string
	readGitIdentity = func(dir string, env []string, _ hosttool.Writable) hostgit.Identity {
		asked = dir
		return hostgit.Identity{Name: "N", Email: "e@x"}
	}
	pl, err := BuildPlan(f.policy(nil), f.env)
	if err != nil {
		t.Fatal(err)
	}
	if asked != f.ws || lookupEnv(pl.Env, "GIT_AUTHOR_NAME") != "N" || lookupEnv(pl.Env, "GIT_COMMITTER_EMAIL") != "e@x" {
		t.Errorf("asked in %q, env %v", asked, pl.Env)
	}
	// The user's own choice wins, whole.
	pl, err = BuildPlan(f.policy(func(p *policy.Policy) { p.SetEnv = []string{"GIT_AUTHOR_EMAIL=mine@x"} }), f.env)
	if err != nil {
		t.Fatal(err)
	}
	if lookupEnv(pl.Env, "GIT_AUTHOR_NAME") != "" || lookupEnv(pl.Env, "GIT_AUTHOR_EMAIL") != "mine@x" {
		t.Errorf("--setenv overridden: %v", pl.Env)
	}
}

func TestExposeCommand(t *testing.T) {
	f := newFixture(t)
	h := func(p ...string) string { return filepath.Join(append([]string{f.home}, p...)...) }
	write(t, h(".local/share/app/versions/1"), "\x7fELF", 0o755)
	symlink(t, "../share/app/versions/1", h(".local/bin/app"))
	write(t, h(".ssh/bin/sneaky"), "\x7fELF", 0o755)
	write(t, h(".cargo/bin/cargo"), "\x7fELF", 0o755)
	write(t, h(".cargo/credentials.toml"), "token", 0o600)
	write(t, h(".nvm/v1/bin/node"), "\x7fELF", 0o755)
	write(t, h(".nvm/v1/lib/node_modules/x/cli.js"), "#!/usr/bin/env node\n", 0o755)
	symlink(t, "../lib/node_modules/x/cli.js", h(".nvm/v1/bin/x"))
	path := strings.Join([]string{h(".local/bin"), h(".ssh/bin"), h(".cargo/bin"), h(".nvm/v1/bin"), "/usr/bin:/bin"}, ":")
	env := append([]string{}, f.env...)
	for i, e := range env {
		if strings.HasPrefix(e, "PATH=") {
			env[i] = "PATH=" + path
		}
	}
	tests := []struct {
		cmd   string
		binds []string
		links []string
		note  string
	}{
		{"app", []string{h(".local/share/app")}, []string{h(".local/bin/app")}, "made visible read-only"},
		{"sneaky", nil, nil, "not made visible"},
		{"cargo", []string{h(".cargo/bin")}, nil, "made visible read-only"},
		{"x", []string{h(".nvm/v1")}, nil, "command x: "}, // node, its interpreter, is in the same tree
		{"sh", nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			pl, err := BuildPlan(f.policy(func(p *policy.Policy) { p.Command = []string{tt.cmd} }), env)
			if err != nil {
				t.Fatal(err)
			}
			var binds, links []string
			for _, m := range pl.Mounts {
				switch {
				case m.Kind == ns.KindROBind && strings.HasPrefix(m.Why, "install tree"):
					binds = append(binds, m.Path)
				case m.Kind == ns.KindSymlink:
					links = append(links, m.Path)
				}
			}
			if strings.Join(binds, " ") != strings.Join(tt.binds, " ") || strings.Join(links, " ") != strings.Join(tt.links, " ") {
				t.Errorf("binds %v links %v, want %v %v", binds, links, tt.binds, tt.links)
			}
			if tt.note != "" && !hasNoteWith(pl.Notes, tt.note) {
				t.Errorf("no note %q: %v", tt.note, pl.Notes)
			}
			for _, n := range pl.Notes {
				if tt.note == "" && (strings.HasPrefix(n, "command ") || strings.HasPrefix(n, "interpreter ")) {
					t.Errorf("a visible command got a note: %q", n)
				}
			}
		})
	}
}

func TestSymlinkedReadWrite(t *testing.T) {
	f := newFixture(t)
	write(t, filepath.Join(f.home, "real", "conf"), "x", 0o644)
	symlink(t, "real", filepath.Join(f.home, "link"))
	pl, err := BuildPlan(f.policy(func(p *policy.Policy) { p.Read = []string{filepath.Join(f.home, "link", "conf")} }), f.env)
	if err != nil {
		t.Fatal(err)
	}
	i, m := find(pl.Mounts, filepath.Join(f.home, "link"))
	j, b := find(pl.Mounts, filepath.Join(f.home, "real", "conf"))
	if m.Kind != ns.KindSymlink || m.Link != "real" || b.Kind != ns.KindROBind || i < j {
		t.Errorf("link %+v (at %d), bind %+v (at %d)", m, i, b, j)
	}
	// A link in the visible host view is the host's own: nothing to create.
	// (/proc/self was the example: a path in init's own /proc, refused
	// now; refuseOwnPlaces.) /etc/os-release links to ../usr/lib on
	// systemd hosts; elsewhere a link of the test's own in /etc is not
	// for a test to make, and the fixture's link above stands in.
	visible := "/etc/os-release"
	if fi, err := os.Lstat(visible); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return
	}
	pl, err = BuildPlan(f.policy(func(p *policy.Policy) { p.Read = []string{visible} }), f.env)
	if err != nil {
		t.Fatal(err)
	}
	if _, m := find(pl.Mounts, visible); m.Kind == ns.KindSymlink {
		t.Errorf("a visible link recreated: %+v", m)
	}
}

func TestGoCacheNote(t *testing.T) {
	f := newFixture(t)
	mod := filepath.Join(f.home, "go", "pkg", "mod")
	os.MkdirAll(mod, 0o755)
	for _, tt := range []struct {
		cmd  string
		read []string
		note bool
	}{
		{"go", nil, true},
		{"/usr/local/go/bin/go", nil, true},
		{"go", []string{mod}, false},
		{"make", nil, false},
	} {
		pl, err := BuildPlan(f.policy(func(p *policy.Policy) { p.Command, p.Read = []string{tt.cmd, "test"}, tt.read }), f.env)
		if err != nil {
			t.Fatal(err)
		}
		if got := hasNoteWith(pl.Notes, "go: ", "`read` "+mod); got != tt.note {
			t.Errorf("%s read %v: note %v, want %v (%v)", tt.cmd, tt.read, got, tt.note, pl.Notes)
		}
	}
}
