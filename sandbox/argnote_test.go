package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/ns"
)

// The command's arguments that name a hidden host file are said, once
// each, with the flag; a visible path, a word, a path the host lacks too,
// a secret and jail's state directory are not.
func TestHiddenArgNotes(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "home")
	h := func(p string) string { return filepath.Join(home, p) }
	for _, p := range []string{"datasets/a.csv", "proj/x.py", "scripts/prep.py", ".ssh/id_ed25519", ".local/state/jail/x", "other/y"} {
		write(t, h(p), "x", 0o644)
	}
	symlink(t, h("datasets"), h("proj/data")) // a link in the workspace into the hidden home
	if err := os.MkdirAll(filepath.Join(root, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "tmp/t.txt"), "x", 0o644)
	mounts := []ns.Mount{
		{Kind: ns.KindTmpfs, Path: filepath.Join(root, "tmp")},
		{Kind: ns.KindTmpfs, Path: home},
		{Kind: ns.KindBind, Path: h("proj"), Dir: true},
		{Kind: ns.KindROBind, Path: h("other"), Dir: true}, // a --read path
	}
	cwd := h("proj")
	args := []string{"-v", h("datasets/a.csv"), "x.py", "~/scripts/prep.py", "--in=" + h("scripts/prep.py"), "data/a.csv",
		"commit message with ~/datasets", "https://example.com/a/b", h("missing/z"), h(".ssh/id_ed25519"), h(".local/state/jail/x"),
		h("other/y"), "../datasets/a.csv", filepath.Join(root, "tmp/t.txt")}
	got := hiddenArgNotes(args, cwd, home, h(".local/state/jail"), mounts, false)
	var named []string
	for _, n := range got {
		if !strings.HasPrefix(n, argNotePrefix) || !strings.Contains(n, "`read` ") {
			t.Errorf("note %q", n)
		}
		named = append(named, strings.Fields(strings.TrimPrefix(n, argNotePrefix))[0])
	}
	// At most argNoteMaxNotes: the first three hidden ones, each once.
	if want := []string{"~/datasets/a.csv", "~/scripts/prep.py", "~/proj/data/a.csv"}; !slices.Equal(named, want) {
		t.Errorf("named %v, want %v:\n%s", named, want, strings.Join(got, "\n"))
	}
	if !strings.Contains(got[0], "in your home, which the sandbox sees empty") {
		t.Errorf("the home not named: %q", got[0])
	}
	got = hiddenArgNotes([]string{filepath.Join(root, "tmp/t.txt")}, cwd, home, "", mounts, false)
	if len(got) != 1 || !strings.Contains(got[0], filepath.Join(root, "tmp")+", which the sandbox replaces with an empty one") {
		t.Errorf("a file in a hidden /tmp: %q", got)
	}
	if got := hiddenArgNotes([]string{h(".ssh/id_ed25519"), h(".local/state/jail/x"), h("other/y"), "x.py"}, cwd, home, h(".local/state/jail"), mounts, false); len(got) != 0 {
		t.Errorf("said %q", got)
	}
}

// The command's arguments that name a masked file are said, bare names
// included, with the rule and (for a liftable built-in) the lift of that
// path as typed; a readable file, a read-only one, a word and a message
// are not.
func TestMaskedArgNotes(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := func(p string) string { return filepath.Join(ws, p) }
	for _, p := range []string{".env", "a.txt", "certs/dev.pem", "secrets/x", ".git/config", "k.pem"} {
		write(t, w(p), "x", 0o644)
	}
	symlink(t, ".env", w("envlink"))
	symlink(t, "certs/dev.pem", w("devlink"))
	masks := []fsrules.Mask{
		{Path: w(".env"), Kind: fsrules.Hide, Rule: "default: .env"},
		{Path: w("certs/dev.pem"), Kind: fsrules.Hide, Rule: "default: *.pem"},
		{Path: w("secrets"), Kind: fsrules.Hide, Dir: true, Rule: "deny secrets"},
		{Path: w(".git/config"), Kind: fsrules.ReadOnly, Rule: "default: .git/config"},
		{Path: w("k.pem"), Kind: fsrules.Hide, Rule: "default: *.pem (hard link of /x/k.pem)"},
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{".env"}, []string{"argument .env is unreadable inside: the built-in protection .env hides it; `no-default-deny-at` .env shows it, and the rest stays protected"}},
		{[]string{"-in", "./certs/dev.pem"}, []string{"argument certs/dev.pem is unreadable inside: the built-in protection *.pem hides it; `no-default-deny-at` certs/dev.pem shows it, and the rest stays protected"}},
		{[]string{"--file=" + w("certs/dev.pem")}, []string{"argument " + w("certs/dev.pem") + " is unreadable inside: the built-in protection *.pem hides it; `no-default-deny-at` " + w("certs/dev.pem") + " shows it, and the rest stays protected"}},
		// Through a link: the lift names the file (a lift through a link
		// is refused); a link and its file named together, once.
		{[]string{"devlink"}, []string{"argument certs/dev.pem is unreadable inside: the built-in protection *.pem hides it; `no-default-deny-at` certs/dev.pem shows it, and the rest stays protected"}},
		{[]string{"envlink", ".env"}, []string{"argument .env is unreadable inside: the built-in protection .env hides it; `no-default-deny-at` .env shows it, and the rest stays protected"}},
		{[]string{"secrets/x", "secrets"}, []string{"argument secrets/x is unreadable inside: your `deny` secrets hides it", "argument secrets is unreadable inside: your `deny` secrets hides it"}},
		{[]string{"k.pem"}, []string{"argument k.pem is unreadable inside: jail's built-in protections hide it (*.pem (hard link of /x/k.pem))"}},
		{[]string{"a.txt", ".git/config", "add .env", "https://h/.env", "-v", "missing", "."}, nil},
	} {
		got := maskedArgNotes(tc.args, ws, "", masks, false)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q:\ngot  %q\nwant %q", tc.args, got, tc.want)
		}
	}
	// At most argNoteMaxNotes.
	if got := maskedArgNotes([]string{".env", "certs/dev.pem", "secrets", "secrets/x"}, ws, "", masks, false); len(got) != argNoteMaxNotes {
		t.Errorf("%d notes, want %d: %q", len(got), argNoteMaxNotes, got)
	}
}
