package audit

import (
	"errors"
	"github.com/jail-sandbox/jail/hostpath"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestDefaultPath(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 8, time.FixedZone("X", 3600))
	tests := []struct {
		name, dir, id, want string
		err                 error
	}{
		{"plain", "/x/state/jail/audit", "ab12", "/x/state/jail/audit/20260304T040607Z-ab12.jsonl", nil},
		{"relative dir", "rel/audit", "ab12", "", nil},
		{"id with slash", "/x", "../../etc/x", "", ErrBadID},
		{"dot id", "/x", ".hidden", "", ErrBadID},
		{"empty id", "/x", "", "", ErrBadID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DefaultPath(tt.dir, now, tt.id)
			if tt.want == "" && tt.err == nil && err == nil {
				t.Errorf("DefaultPath(%q) = %q, want an error", tt.dir, got)
			}
			if got != tt.want || (tt.err != nil && !errors.Is(err, tt.err)) {
				t.Errorf("DefaultPath = %q, %v; want %q, %v", got, err, tt.want, tt.err)
			}
		})
	}
	if id := NewID(); !validID(id) || len(id) != 12 || id == NewID() {
		t.Errorf("NewID = %q", id)
	}
}

// Adversarial: the trail inside a writable path is refused, also through a
// symlinked directory and for a file not yet created.
func TestCheckPlacement(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "work")
	os.MkdirAll(filepath.Join(ws, "sub"), 0o755)
	outside := filepath.Join(root, "state")
	os.MkdirAll(outside, 0o700)
	link := filepath.Join(outside, "ln")
	os.Symlink(ws, link)
	tests := []struct {
		name, path string
		bad        bool
	}{
		{"outside", filepath.Join(outside, "a.jsonl"), false},
		{"sibling with common prefix", filepath.Join(root, "workx", "a.jsonl"), false},
		{"inside", filepath.Join(ws, "a.jsonl"), true},
		{"deep and not yet created", filepath.Join(ws, "sub", "new", "a.jsonl"), true},
		{"via symlink", filepath.Join(link, "a.jsonl"), true},
		{"dotdot", filepath.Join(ws, "sub", "..", "a.jsonl"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPlacement(tt.path, []string{"/nonexistent/other", ws}, nil)
			if errors.Is(err, ErrWritableBySandbox) != tt.bad {
				t.Errorf("CheckPlacement(%s) = %v, want bad=%v", tt.path, err, tt.bad)
			}
		})
	}
	if err := CheckPlacement(filepath.Join(outside, "a"), []string{"/"}, nil); !errors.Is(err, ErrWritableBySandbox) {
		t.Errorf("writable / not caught: %v", err)
	}
	// Inside a writable path but under a directory the sandbox cannot reach
	// (jail's masked state directory): fine. Next to it: still refused.
	hidden := filepath.Join(ws, "state", "jail")
	if err := CheckPlacement(filepath.Join(hidden, "audit", "a.jsonl"), []string{ws}, []string{hidden}); err != nil {
		t.Errorf("trail in a masked directory refused: %v", err)
	}
	if err := CheckPlacement(filepath.Join(ws, "state", "jailx", "a.jsonl"), []string{ws}, []string{hidden}); !errors.Is(err, ErrWritableBySandbox) {
		t.Errorf("trail beside the masked directory not caught: %v", err)
	}
}

// Adversarial: a name on the trail's path that the sandbox can write can
// be changed by the agent after the check. A symlink in the workspace that
// leads out of it (ws/out -> outside): the trail is written outside, then
// the agent points ws/out at a copy of its own making in the workspace,
// and `jail audit --verify ws/out/t.jsonl` checks the forgery. A ".." out
// of a workspace directory (ws/sub/../../outside): the agent swaps ws/sub
// for a link and chooses where the ".." leads. And a ".." after a link is
// the link target's parent, not text to clean: outside/ln/../t.jsonl with
// ln -> ws/sub is ws/t.jsonl. Seen failing on main's CheckPlacement (all
// three accepted: it cleaned the path as text and looked only where the
// path led).
func TestCheckPlacementOnTheWay(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "work")
	outside := filepath.Join(root, "state")
	for _, d := range []string{filepath.Join(ws, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for l, target := range map[string]string{
		filepath.Join(ws, "out"):     outside,
		filepath.Join(outside, "ln"): filepath.Join(ws, "sub"),
		filepath.Join(outside, "me"): outside,
	} {
		if err := os.Symlink(target, l); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name, path string
		bad        bool
	}{
		{"a link in the workspace leading out", filepath.Join(ws, "out", "t.jsonl"), true},
		{"a link in the workspace, to a directory to be made", filepath.Join(ws, "out", "new", "t.jsonl"), true},
		{"dotdot out of a workspace directory", ws + "/sub/../../state/t.jsonl", true},
		{"dotdot after a link into the workspace", outside + "/ln/../t.jsonl", true},
		{"a link outside leading outside", filepath.Join(outside, "me", "t.jsonl"), false},
		{"dotdot after a link outside, staying outside", outside + "/me/../state/t.jsonl", false},
	} {
		err := CheckPlacement(tt.path, []string{ws}, nil)
		if errors.Is(err, ErrWritableBySandbox) != tt.bad {
			t.Errorf("%s: CheckPlacement(%s) = %v, want refused=%v", tt.name, tt.path, err, tt.bad)
		}
	}
}

// CheckPlacementWith, its lookups shared through one hostpath.Resolver,
// answers as CheckPlacement does, and resolves each path to what
// filepath.EvalSymlinks' loop gives: over links relative and absolute,
// chained, dangling, looping, a link to a file used as a directory,
// missing names, "..", and trails and writable paths through all of them,
// each checked after the others (what the pass saw first answers again).
func TestCheckPlacementWithSameAnswers(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "home", "u", "work")
	for _, d := range []string{filepath.Join(ws, "sub"), filepath.Join(root, "home", "u", ".cache", "jail", "c"), filepath.Join(root, "state")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"home/u/w":        "work",               // relative
		"home/u/abs":      ws,                   // absolute
		"home/u/chain":    "w/sub",              // through another link
		"home/u/dangling": "/nonexistent/x",     // target missing
		"home/u/loop1":    "loop2",              // ELOOP
		"home/u/loop2":    "loop1",              //
		"home/u/tofile":   "../../file",         // a file used as a directory below
		"state/out":       "../home/u/work/sub", // out of state into the workspace
		"state/up":        "../home/u/.cache/jail",
	}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(root, l)); err != nil {
			t.Fatal(err)
		}
	}
	var paths []string
	for _, p := range []string{"home/u/work", "home/u/w", "home/u/abs/sub", "home/u/chain", "home/u/chain/new/x", "home/u/dangling",
		"home/u/dangling/y", "home/u/loop1", "home/u/loop1/z", "home/u/tofile", "home/u/tofile/x", "missing/a/b",
		"home/u/.cache/jail/c", "home/u/w/../.cache", "state/out/t.jsonl", "state/up/c", "state", "state/t.jsonl", "file"} {
		paths = append(paths, filepath.Join(root, p))
	}
	paths = append(paths, root+"/home/u/w/../w/sub/../../abs", "/")
	res := hostpath.NewResolver()
	defer res.Close()
	for _, p := range paths {
		want, werr := resolveWith(nil, p)
		got, gerr := resolveWith(res, p)
		if got != want || (werr == nil) != (gerr == nil) || (werr != nil && errors.Is(werr, os.ErrNotExist) != errors.Is(gerr, os.ErrNotExist)) {
			t.Errorf("resolve %s: with a resolver %q, %v; EvalSymlinks %q, %v", p, got, gerr, want, werr)
		}
	}
	sets := [][]string{
		{ws},
		{filepath.Join(root, "home/u/w"), filepath.Join(root, "home/u/.cache/jail/c")},
		{filepath.Join(root, "home/u/chain"), filepath.Join(root, "home/u/dangling")},
		{filepath.Join(root, "home/u/loop1")},
		{filepath.Join(root, "home/u/tofile/x"), filepath.Join(root, "missing/a")},
	}
	hidden := [][]string{nil, {filepath.Join(root, "state")}, {filepath.Join(root, "home/u/w/sub")}}
	n, refused := 0, 0
	for _, trail := range paths {
		for _, w := range sets {
			for _, h := range hidden {
				want := CheckPlacement(trail, w, h)
				got := CheckPlacementWith(res, trail, w, h)
				n++
				if errors.Is(want, ErrWritableBySandbox) {
					refused++
				}
				// The same answer: accepted, refused as writable (the same
				// words), or not checkable (a link loop, a file used as a
				// directory: refused too, the resolver's words naming the
				// path where EvalSymlinks' did not).
				same := (got == nil) == (want == nil) && errors.Is(got, ErrWritableBySandbox) == errors.Is(want, ErrWritableBySandbox)
				if same && errors.Is(want, ErrWritableBySandbox) {
					same = got.Error() == want.Error()
				}
				if !same {
					t.Errorf("trail %s, writable %v, hidden %v:\n with a resolver %v\n without        %v", trail, w, h, got, want)
				}
			}
		}
	}
	if refused == 0 || refused == n {
		t.Fatalf("%d of %d placements refused: the cases do not tell the two apart", refused, n)
	}
}
