package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/dircache"
)

// memoFixture: a data place opt with opt/a/bin/tool and opt/b/bin/tool, a
// PATH directory usr/bin whose tool links to opt/a's, and a workspace ws;
// old enough for records to be kept. start runs programRoots with a
// directory cache in state and says whether the memo answered.
func memoFixture(t *testing.T) (root, state string, start func(writable ...string) (string, bool)) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	state = t.TempDir()
	for _, d := range []string{"opt/a/bin", "opt/b/bin", "usr/bin", "ws/x"} {
		must(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	for _, f := range []string{"opt/a/bin/tool", "opt/b/bin/tool", "ws/x/tool"} {
		must(t, os.WriteFile(filepath.Join(root, f), []byte("x"), 0o755))
	}
	must(t, os.Symlink(filepath.Join(root, "opt/a/bin/tool"), filepath.Join(root, "usr/bin/tool")))
	must(t, os.Symlink("ls", filepath.Join(root, "usr/bin/dir")))
	// A directory changed less than dircache.Margin ago is not kept.
	time.Sleep(dircache.Margin + 100*time.Millisecond)
	return root, state, func(writable ...string) (string, bool) {
		t.Helper()
		c, err := dircache.Open(state)
		if err != nil {
			t.Fatal(err)
		}
		h0 := rootsMemoHits.Load()
		got := programRoots([]string{filepath.Join(root, "opt")}, nil, writable, filepath.Join(root, "usr/bin"), nil, filepath.Join(root, "ws"), c)
		must(t, c.Save())
		return strings.Join(got, " "), rootsMemoHits.Load() > h0
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestProgramRootsMemoSeesRetarget is the memo's adversarial test: the
// host retargets a PATH directory's symlink between two starts, from one
// data place directory to another, and puts the directory's mtime back.
// The start after must show the new target's directory. Before that, an
// unchanged start must be answered by the memo, or the test would prove
// nothing.
func TestProgramRootsMemoSeesRetarget(t *testing.T) {
	root, _, start := memoFixture(t)
	opt, bin := filepath.Join(root, "opt"), filepath.Join(root, "usr/bin")
	if got, _ := start(); got != opt+"/a" {
		t.Fatalf("first start: %q, want %q", got, opt+"/a")
	}
	if got, memo := start(); got != opt+"/a" || !memo {
		t.Fatalf("unchanged start: %q, from the memo %v; want %q from the memo", got, memo, opt+"/a")
	}
	fi, err := os.Stat(bin)
	must(t, err)
	must(t, os.Symlink(filepath.Join(opt, "b/bin/tool"), filepath.Join(bin, ".tool.new")))
	must(t, os.Rename(filepath.Join(bin, ".tool.new"), filepath.Join(bin, "tool")))
	must(t, os.Chtimes(bin, fi.ModTime(), fi.ModTime()))
	if got, memo := start(); got != opt+"/b" || memo {
		t.Fatalf("after the host retargeted usr/bin/tool (mtime put back): %q (memo %v), want %q read afresh", got, memo, opt+"/b")
	}
}

// TestProgramRootsMemoResolvesAfresh: the memo keeps where the symlinks
// lead, never what that resolves to. Between two starts the data place's
// opt/a/bin (not a PATH directory: usr/bin is unchanged) becomes a
// symlink into the writable workspace: the target now lies in a writable
// root, and its directory must not be shown (the sandbox could have made
// it), though the memo answers.
func TestProgramRootsMemoResolvesAfresh(t *testing.T) {
	root, _, start := memoFixture(t)
	opt, ws := filepath.Join(root, "opt"), filepath.Join(root, "ws")
	if got, _ := start(ws); got != opt+"/a" {
		t.Fatalf("first start: %q, want %q", got, opt+"/a")
	}
	if got, memo := start(ws); got != opt+"/a" || !memo {
		t.Fatalf("unchanged start: %q, from the memo %v; want %q from the memo", got, memo, opt+"/a")
	}
	must(t, os.Rename(filepath.Join(opt, "a/bin"), filepath.Join(opt, "a/bin.old")))
	must(t, os.Symlink(filepath.Join(ws, "x"), filepath.Join(opt, "a/bin")))
	if got, memo := start(ws); got != "" || !memo {
		t.Fatalf("opt/a/bin now leads into the workspace: %q (memo %v), want nothing, with the memo answering", got, memo)
	}
}

// TestProgramRootsMemoRecentNotKept: a PATH directory changed less than
// dircache.Margin before the start read it is not kept (a second change
// within the same clock tick could leave its ctime as it was): the next
// start reads it again.
func TestProgramRootsMemoRecentNotKept(t *testing.T) {
	root, _, start := memoFixture(t)
	must(t, os.Symlink("ls", filepath.Join(root, "usr/bin/vdir")))
	start()
	if got, memo := start(); memo || got != filepath.Join(root, "opt/a") {
		t.Fatalf("a start right after usr/bin changed: %q, answered by the memo %v; want it read", got, memo)
	}
}

// TestProgramRootsMemoBadState: a state that is not exactly what the memo
// writes (here well framed by the cache, its content garbage) answers
// nothing: the start reads afresh.
func TestProgramRootsMemoBadState(t *testing.T) {
	for _, b := range [][]byte{{0xff}, []byte("\x01\x03abc\x00\x00"), encodeRoots([]rootsEntry{{dir: "rel/dir"}})} {
		if _, ok := decodeRoots(b); ok {
			t.Errorf("decodeRoots(%q) accepted", b)
		}
	}
	root, state, start := memoFixture(t)
	opt := filepath.Join(root, "opt")
	start()
	if _, memo := start(); !memo {
		t.Fatal("the unchanged start was not answered by the memo: the test proves nothing")
	}
	// The state replaced by garbage, framed as the cache frames it.
	c, err := dircache.Open(state)
	must(t, err)
	name := rootsMemoName([]string{opt}, nil)
	if c.State(name) == nil {
		t.Fatal("no state under the memo's name")
	}
	c.SetState(name, []byte("\x01\x08/usr/bin\x01garbage"))
	must(t, c.Save())
	if got, memo := start(); got != opt+"/a" || memo {
		t.Fatalf("start with a garbage state: %q (memo %v), want %q read afresh", got, memo, opt+"/a")
	}
}

func FuzzDecodeRoots(f *testing.F) {
	f.Add(encodeRoots([]rootsEntry{{dir: "/usr/bin", deps: []rootsDep{{"/usr/bin", dircache.Key{Dev: 1, Ino: 2, Ctime: -3}}}, cands: []string{"/opt/x/bin/y"}}}))
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, b []byte) {
		es, ok := decodeRoots(b)
		if ok && string(encodeRoots(es)) != string(b) {
			t.Fatalf("decode/encode of %q gave %q", b, encodeRoots(es))
		}
	})
}
