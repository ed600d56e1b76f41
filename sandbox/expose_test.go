package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
)

// rustup's layout under a home: the proxies in ~/.cargo/bin (links to
// rustup, symbolic or hard), the toolchains in RUSTUP_HOME. Run as cargo,
// rustup cannot run without RUSTUP_HOME ("rustup could not choose a
// version of cargo to run"), and the rust profile's caches
// (~/.cargo/registry) were refused in the read-only ~/.cargo (exit 125).
func TestExposeRustup(t *testing.T) {
	type want struct {
		ro     []string // read-only binds, in plan order
		env    string   // RUSTUP_HOME inside
		notes  []string // parts of a note
		once   bool     // the notes are said once
		noNote bool
	}
	tests := []struct {
		name  string
		hard  bool     // proxies are hard links
		home  string   // RUSTUP_HOME on the host, relative to the home ("" unset)
		cache []string // caches (the rust profile's)
		cmd   string
		run   []string // runnable
		want  want
	}{
		{name: "the command", cmd: "cargo",
			want: want{ro: []string{".cargo", ".rustup"}, notes: []string{"command cargo: rustup's toolchains, ", ".rustup, made visible read-only"}}},
		{name: "hard links", hard: true, cmd: "rustc",
			want: want{ro: []string{".cargo", ".rustup"}, notes: []string{"command rustc: rustup's toolchains"}}},
		{name: "the rust profile's caches", cmd: "cargo", cache: []string{"rust:~/.cargo/registry", "rust:~/.cargo/git"},
			want: want{ro: []string{".cargo/bin", ".cargo/config.toml", ".rustup"}, notes: []string{"cargo's configuration, "}}},
		{name: "RUSTUP_HOME elsewhere", cmd: "cargo", home: "opt/rustup",
			want: want{ro: []string{".cargo", "opt/rustup"}, env: "opt/rustup"}},
		{name: "RUSTUP_HOME in a secret place", cmd: "cargo", home: ".aws/rustup",
			want: want{ro: []string{".cargo"}, env: ".aws/rustup"}},
		{name: "runnable, for the agent", cmd: "sh", run: []string{"cargo", "rustc", "absent-tool"}, cache: []string{"rust:~/.cargo/registry"},
			want: want{ro: []string{".cargo/bin", ".cargo/config.toml", ".rustup"}, notes: []string{"runnable cargo: ", "made visible read-only: "}, once: true}},
		{name: "runnable, found nowhere", cmd: "sh", run: []string{"absent-tool"},
			want: want{noNote: true, notes: []string{"not on PATH: runnable absent-tool"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			h := func(p string) string { return filepath.Join(f.home, p) }
			write(t, h(".cargo/bin/rustup"), "\x7fELF", 0o755)
			for _, p := range []string{"cargo", "rustc"} {
				if tt.hard {
					if err := os.Link(h(".cargo/bin/rustup"), h(".cargo/bin/"+p)); err != nil {
						t.Fatal(err)
					}
				} else {
					symlink(t, "rustup", h(".cargo/bin/"+p))
				}
			}
			write(t, h(".cargo/config.toml"), "[source]\n", 0o644)
			rh := ".rustup"
			env := withPath(f.env, h(".cargo/bin")+":/usr/bin:/bin")
			if tt.home != "" {
				rh = tt.home
				env = append(env, "RUSTUP_HOME="+h(rh))
			}
			write(t, h(rh+"/settings.toml"), "default_toolchain = \"stable\"\n", 0o644)
			pl, err := BuildPlan(f.policy(func(p *policy.Policy) {
				p.Command = []string{tt.cmd}
				p.Runnable = tt.run
				p.Cache = tt.cache
			}), env)
			if err != nil {
				t.Fatal(err)
			}
			ro := readOnlyIn(pl.Mounts, f.home)
			slices.Sort(tt.want.ro)
			if !slices.Equal(ro, tt.want.ro) {
				t.Errorf("read-only binds %q, want %q\nnotes: %q", ro, tt.want.ro, pl.Notes)
			}
			wantEnv := ""
			if tt.want.env != "" {
				wantEnv = h(tt.want.env)
			}
			if got := lookupEnv(pl.Env, "RUSTUP_HOME"); got != wantEnv {
				t.Errorf("RUSTUP_HOME inside %q, want %q", got, wantEnv)
			}
			for _, part := range tt.want.notes {
				if !hasNoteWith(pl.Notes, part) {
					t.Errorf("no note with %q: %q", part, pl.Notes)
				}
			}
			for _, n := range pl.Notes {
				if strings.HasPrefix(n, "not on PATH: ") && shownNote(n) {
					t.Errorf("an absent runnable said at start: %q", n)
				}
				if tt.want.noNote && (strings.HasPrefix(n, "runnable ") || strings.HasPrefix(n, "command ")) {
					t.Errorf("a note for what was not shown: %q", n)
				}
				if strings.HasPrefix(n, "runnable ") && !pl.onceNotes[n] {
					t.Errorf("a runnable's note said at every start: %q", n)
				}
				if strings.HasPrefix(n, "command ") && pl.onceNotes[n] {
					t.Errorf("the command's note said once: %q", n)
				}
			}
			// The caches are mounted, not refused, and in the hidden home.
			for _, c := range tt.cache {
				at := h(strings.TrimPrefix(c, "rust:~/"))
				if _, m := find(pl.Mounts, at); m.Kind != ns.KindBind {
					t.Errorf("cache %s: %+v", at, m)
				}
			}
		})
	}
}

// A link in a tree the sandbox can write (an activated venv's bin, first
// on PATH) is the sandbox's choice of where the command leads: it is
// followed into a hidden place only where the user's own PATH finds the
// same name (a venv's python3 into pyenv's tree), never into another
// private tree the link names (~/src/other/bin/tool showed ~/src/other).
// The #! line of a script there is the sandbox's choice the same way.
func TestExposeChosenChain(t *testing.T) {
	f := newFixture(t)
	h := func(p string) string { return filepath.Join(f.home, p) }
	w := func(p string) string { return filepath.Join(f.ws, p) }
	write(t, h("src/other/bin/tool"), "\x7fELF", 0o755)
	write(t, h("src/other/notes.txt"), "private", 0o644)
	write(t, h(".pyenv/versions/3.11/bin/python3.11"), "\x7fELF", 0o755)
	write(t, h(".pyenv/shims/python3"), "#!/bin/sh\n", 0o755)
	write(t, h(".pyenv/shims/python3.11"), "#!/bin/sh\n", 0o755)
	write(t, w("bin/run"), "#!"+h("src/other/bin/tool")+"\n", 0o755)
	write(t, w("bin/run311"), "#!"+h(".pyenv/versions/3.11/bin/python3.11")+"\n", 0o755)
	path := strings.Join([]string{w(".venv/bin"), w("bin"), h(".pyenv/shims"), "/usr/bin:/bin"}, ":")
	env := withPath(f.env, path)
	tests := []struct {
		name, link, cmd string
		want            []string // install trees shown
		refused         bool
	}{
		{"planted link", h("src/other/bin/tool"), "python3", nil, true},
		{"a venv's python into pyenv", h(".pyenv/versions/3.11/bin/python3.11"), "python3", []string{".pyenv/versions/3.11"}, false},
		{"planted #! line", "", "run", nil, true},
		{"a script's #! into pyenv", "", "run311", []string{".pyenv/versions/3.11"}, false},
		{"the user's own PATH", "", "python3.11", []string{".pyenv"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.RemoveAll(w(".venv"))
			if tt.link != "" {
				symlink(t, tt.link, w(".venv/bin/python3"))
			}
			pl, err := BuildPlan(f.policy(func(p *policy.Policy) { p.Command = []string{tt.cmd} }), env)
			if err != nil {
				t.Fatal(err)
			}
			var shown []string
			for _, m := range pl.Mounts {
				if m.Kind == ns.KindROBind && strings.HasPrefix(m.Why, "install tree") {
					shown = append(shown, strings.TrimPrefix(m.Path, f.home+"/"))
				}
			}
			if !slices.Equal(shown, tt.want) {
				t.Errorf("shown %q, want %q; notes %q", shown, tt.want, pl.Notes)
			}
			if got := hasNoteWith(pl.Notes, "reached through a place the sandbox can write"); got != tt.refused {
				t.Errorf("refusal said: %v, want %v; notes %q", got, tt.refused, pl.Notes)
			}
		})
	}
}

// mise's shims are links to mise, which runs the version its
// configuration names from its installs: without both, the sandbox's
// node was the next one on PATH (or "No version is set for shim").
// Shown read-only, with the variables set inside where the host's
// directories are not the sandbox's defaults. A shim that is also a
// runnable's interpreter (npm's #!/usr/bin/env node) is said once.
func TestExposeMise(t *testing.T) {
	for _, xdg := range []bool{false, true} {
		f := newFixture(t)
		h := func(p string) string { return filepath.Join(f.home, p) }
		conf := h(".config/mise")
		if xdg {
			conf = h("dotfiles/config/mise")
		}
		write(t, h(".local/bin/mise"), "\x7fELF", 0o755)
		symlink(t, h(".local/bin/mise"), h(".local/share/mise/shims/node"))
		write(t, h(".local/share/mise/installs/node/20/bin/node"), "\x7fELF", 0o755)
		write(t, filepath.Join(conf, "config.toml"), "[tools]\nnode = \"20\"\n", 0o644)
		write(t, h(".tool-versions"), "node 20\n", 0o644)
		write(t, h("npm/bin/npm"), "#!/usr/bin/env node\n", 0o755)
		env := withPath(f.env, h(".local/share/mise/shims")+":"+h("npm/bin")+":/usr/bin:/bin")
		if xdg {
			env = append(env, "XDG_CONFIG_HOME="+h("dotfiles/config"))
		}
		pl, err := BuildPlan(f.policy(func(p *policy.Policy) {
			p.Command = []string{"sh"}
			p.Runnable = []string{"node", "npm"}
		}), env)
		if err != nil {
			t.Fatal(err)
		}
		ro := readOnlyIn(pl.Mounts, f.home)
		want := []string{".local/bin", ".local/share/mise", strings.TrimPrefix(conf, f.home+"/"), ".tool-versions", "npm"}
		slices.Sort(want)
		if !slices.Equal(ro, want) {
			t.Errorf("xdg %v: read-only binds %q, want %q\nnotes %q", xdg, ro, want, pl.Notes)
		}
		wantEnv := ""
		if xdg {
			wantEnv = conf
		}
		if got := lookupEnv(pl.Env, "MISE_CONFIG_DIR"); got != wantEnv || lookupEnv(pl.Env, "MISE_DATA_DIR") != "" {
			t.Errorf("xdg %v: MISE_CONFIG_DIR %q (want %q), MISE_DATA_DIR %q", xdg, got, wantEnv, lookupEnv(pl.Env, "MISE_DATA_DIR"))
		}
		shim := 0
		for _, n := range pl.Notes {
			if strings.Contains(n, "shims/node -> ") {
				shim++
			}
		}
		if shim != 1 {
			t.Errorf("xdg %v: the shim said %d times: %q", xdg, shim, pl.Notes)
		}
	}
}

// A link recreated for one program (~/bin/node -> /bin/sh, a visible
// file) is not said again for the next that passes it (npm's
// #!/usr/bin/env node).
func TestExposeLinkSaidOnce(t *testing.T) {
	f := newFixture(t)
	h := func(p string) string { return filepath.Join(f.home, p) }
	target, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Skip("no /bin/sh")
	}
	symlink(t, target, h("bin/node"))
	write(t, h("npm/bin/npm"), "#!/usr/bin/env node\n", 0o755)
	env := withPath(f.env, h("bin")+":"+h("npm/bin")+":/usr/bin:/bin")
	pl, err := BuildPlan(f.policy(func(p *policy.Policy) {
		p.Command = []string{"true"}
		p.Runnable = []string{"node", "npm"}
	}), env)
	if err != nil {
		t.Fatal(err)
	}
	said := 0
	for _, n := range pl.Notes {
		if strings.Contains(n, "bin/node -> ") {
			said++
		}
	}
	if _, m := find(pl.Mounts, h("bin/node")); said != 1 || m.Kind != ns.KindSymlink {
		t.Errorf("the link said %d times, recreated as %+v: %q", said, m, pl.Notes)
	}
}

// withPath is env with PATH set to path.
func withPath(env []string, path string) []string {
	out := make([]string, 0, len(env))
	for _, e := range env {
		if strings.HasPrefix(e, "PATH=") {
			e = "PATH=" + path
		}
		out = append(out, e)
	}
	return out
}

// readOnlyIn lists the read-only binds under dir, relative to it, sorted.
func readOnlyIn(mounts []ns.Mount, dir string) []string {
	var ro []string
	for _, m := range mounts {
		if m.Kind == ns.KindROBind && strings.HasPrefix(m.Path, dir+"/") {
			ro = append(ro, strings.TrimPrefix(m.Path, dir+"/"))
		}
	}
	slices.Sort(ro)
	return ro
}
