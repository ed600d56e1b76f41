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
			want: want{noNote: true}},
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
			env := []string{}
			for _, e := range f.env {
				if strings.HasPrefix(e, "PATH=") {
					e = "PATH=" + h(".cargo/bin") + ":/usr/bin:/bin"
				}
				env = append(env, e)
			}
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
			var ro []string
			for _, m := range pl.Mounts {
				if m.Kind == ns.KindROBind && strings.HasPrefix(m.Path, f.home+"/") {
					ro = append(ro, strings.TrimPrefix(m.Path, f.home+"/"))
				}
			}
			slices.Sort(ro)
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
