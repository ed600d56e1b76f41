package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/ns"
)

// An agent's `cargo build` or `uv run` is "command not found" inside when
// the host's PATH finds it in the hidden home: the first start says which
// PATH directories are hidden, with a few of their programs, and the fix.
func TestHiddenPathNote(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "home")
	other := filepath.Join(root, "other") // another user's home, hidden too
	h := func(p string) string { return filepath.Join(home, p) }
	for _, p := range []string{".local/bin/uv", ".local/bin/ruff", ".local/bin/claude", ".cargo/bin/cargo", ".cargo/bin/rustc",
		".cargo/bin/rustfmt", "bin/tool", ".ssh/bin/sneaky", ".local/state/jail/bin/x", "go/bin/gopls", ".deno/bin/deno"} {
		write(t, h(p), "\x7fELF", 0o755)
	}
	write(t, h(".local/bin/notes.txt"), "text", 0o644)
	write(t, h(".local/bin/.hidden"), "\x7fELF", 0o755)
	write(t, filepath.Join(other, ".cargo/bin/cargo"), "\x7fELF", 0o755)
	if err := os.MkdirAll(h("empty/bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, ".local/bin", h("linkbin"))
	hideHome := []ns.Mount{{Kind: ns.KindTmpfs, Path: home}, {Kind: ns.KindTmpfs, Path: other}}
	sd := h(".local/state/jail")
	tests := []struct {
		name   string
		path   []string
		mounts []ns.Mount
		want   []string // parts of the note, in order
		not    []string
	}{
		{"one directory", []string{h(".local/bin"), "/usr/bin"}, hideHome,
			[]string{"PATH: ~/.local/bin (claude, ruff, ...) is hidden inside with your home", "`runnable` NAME"}, []string{"notes.txt", ".hidden"}},
		{"two", []string{h(".cargo/bin"), h("bin")}, hideHome,
			[]string{"~/.cargo/bin (cargo, rustc, ...) and ~/bin (tool) are hidden"}, nil},
		{"the command's link is found", []string{h(".local/bin")},
			append(hideHome, ns.Mount{Kind: ns.KindSymlink, Path: h(".local/bin/claude")}),
			[]string{"~/.local/bin (ruff, uv) is hidden"}, []string{"claude"}},
		{"a shown directory is not named", []string{h(".cargo/bin"), h(".local/bin")},
			append(hideHome, ns.Mount{Kind: ns.KindROBind, Path: h(".cargo/bin")}),
			[]string{"~/.local/bin ("}, []string{".cargo"}},
		{"secret places, jail's state, empty and other users' directories", []string{h(".ssh/bin"), filepath.Join(sd, "bin"), h("empty/bin"), filepath.Join(other, ".cargo/bin"), "relative/bin", ""}, hideHome,
			nil, nil},
		{"a link to a directory: named as PATH names it, once", []string{h("linkbin"), h(".local/bin")}, hideHome,
			[]string{"~/linkbin (claude, ruff, ...) is hidden"}, []string{"~/.local/bin"}},
		{"at most four", []string{h(".cargo/bin"), h(".local/bin"), h("bin"), h("go/bin"), h(".deno/bin")}, hideHome,
			[]string{"~/.cargo/bin (cargo, rustc, ...), ~/.local/bin (claude, ruff, ...), ~/bin (tool), ~/go/bin (gopls) and more are hidden"}, []string{"deno"}},
		{"nothing hidden", []string{h(".local/bin")}, nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := hiddenPathNote(strings.Join(tt.path, ":"), home, sd, tt.mounts)
			if len(tt.want) == 0 && n != "" {
				t.Fatalf("a note: %q", n)
			}
			rest := n
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("note %q lacks %q (in order)", n, w)
				}
				rest = rest[i+len(w):]
			}
			for _, w := range tt.not {
				if strings.Contains(n, w) {
					t.Errorf("note %q names %q", n, w)
				}
			}
			if n != "" && !shownNote(n) {
				t.Errorf("not said at start: %q", n)
			}
		})
	}
	if n := hiddenPathNote(h(".local/bin"), "", sd, hideHome); n != "" {
		t.Errorf("no home, yet a note: %q", n)
	}
}
