//go:build linux

package hostpath

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// kernelResolve asks the kernel where p leads: open(O_PATH) follows every
// link, the last one too, and /proc/self/fd names what was opened. An
// ELOOP is asked again: seen while fuzzing, a path of 27 links was ELOOP
// in the fuzzer and ENOENT on every run after, with other tests'
// sandboxes mounting meanwhile. Most likely the kernel's lock-free (RCU)
// lookup gave up and its retry with locks kept the links the first try
// had counted (the count is set once per lookup, not per try).
func kernelResolve(p string) (string, error) {
	var fd int
	var err error
	for range 5 {
		if fd, err = unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0); !errors.Is(err, unix.ELOOP) {
			break
		}
	}
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	return os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
}

// walkTree makes a tree with the shapes a path can take on its way: a
// directory, a file, relative and absolute links, a link up (".."), one
// to a file, a dangling one and a loop.
func walkTree(t testing.TB) string {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a/b"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "a", "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for l, target := range map[string]string{
		"rel": "a/b", "a/up": "..", "a/b/abs": root, "lf": "a/f",
		"dangling": "nowhere", "loop": "loop", "a/b/chain": "../up/rel",
	} {
		if err := os.Symlink(target, filepath.Join(root, l)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

var walkNames = []string{"a", "b", "f", "rel", "up", "abs", "lf", "dangling", "loop", "chain", "..", ".", "", "x"}

// walkPath spells a path under root from data, a byte a name.
func walkPath(root string, data []byte) string {
	var b strings.Builder
	b.WriteString(root)
	for _, c := range data {
		b.WriteString("/" + walkNames[int(c)%len(walkNames)])
	}
	return b.String()
}

// Resolve agrees with the kernel: the same final path for a path the
// kernel opens, an error for one it cannot (ENOENT, ENOTDIR, ELOOP), on
// the tree's shapes in any order.
func FuzzResolveAsKernel(f *testing.F) {
	root := walkTree(f)
	for _, seed := range []string{"\x00\x01", "\x03\x0a\x00", "\x00\x02\x0a", "\x06\x0a", "\x00\x04\x04\x0a\x09", "\x08", "\x07", "\x00\x01\x05\x03\x0c"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64 {
			return
		}
		p := walkPath(root, data)
		want, kerr := kernelResolve(p)
		got, _, err := Resolve(p)
		switch {
		case kerr != nil && err == nil:
			t.Fatalf("Resolve(%s) = %s, the kernel: %v", p, got, kerr)
		case kerr == nil && err != nil:
			t.Fatalf("Resolve(%s): %v, the kernel: %s", p, err, want)
		case kerr == nil && got != want:
			t.Fatalf("Resolve(%s) = %s, the kernel: %s", p, got, want)
		case errors.Is(kerr, unix.ELOOP) && !errors.Is(err, ErrLoop):
			t.Fatalf("Resolve(%s): %v, the kernel: %v", p, err, kerr)
		}
	})
}

// deepLinks makes under root a directory depth names deep (x/x/...) and
// 40 links L0..L39, each going down the whole depth and back up by ".."
// to the next (the last to "."): a path of the most links the kernel
// follows, each as long as a link may be (4 KiB).
func deepLinks(t testing.TB, root string, depth int) string {
	if err := os.MkdirAll(filepath.Join(root, strings.Repeat("x/", depth)), 0o755); err != nil { // under PATH_MAX
		t.Fatal(err)
	}
	for i := range maxLinks {
		target := strings.Repeat("x/", depth) + strings.Repeat("../", depth) + "L" + strconv.Itoa(i+1)
		if i == maxLinks-1 {
			target = "."
		}
		if err := os.Symlink(target, filepath.Join(root, "L"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(root, "L0") + "/"
}

// Adversarial: Walk on a tree that a writable place can hold (the agent's
// workspace, where the plan resolves the paths that settings and git's
// config name) costs about what the kernel's own lookup costs, not the
// square of the path's depth. Seen failing on main's Walk (an lstat of
// the whole path at each name): 12 s for the 40 links 800 deep at a
// shallow base, where the kernel's open took 14 ms, and 23 s under this
// test's base (load 13); a dozen such names would hold every start for
// minutes. The walk by descriptors: 0.5 s here (load 10-13; 0.33 s of
// CPU, 64,000 opens); the bound is far from both.
func TestWalkDeepLinksCost(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// Under a base 900 directories deep (as a workspace deep in a tree
	// is, more so): main's lstats re-walked it at every name.
	base := filepath.Join(root, strings.Repeat("z/", 900))
	p := deepLinks(t, base, 800)
	start := time.Now()
	final, err := Walk(p, func(Step) error { return nil })
	took := time.Since(start)
	if err != nil || final != filepath.Clean(base) {
		t.Fatalf("Walk(%s) = %q, %v; want %q", p, final, err, base)
	}
	if took > 4*time.Second {
		t.Errorf("Walk took %v on 40 links 800 directories deep: a lookup re-walks the path", took)
	}
	t.Logf("Walk took %v", took)
}

// A directory deeper than PATH_MAX (4096 bytes), reached by a relative
// link: the kernel opens a path through it (each name is looked up in the
// last), and Walk resolves it as the kernel does. Seen failing on main's
// Walk: its lstat of the whole path was ENAMETOOLONG, and ResolveAsNamed
// then took the rest "as named" (no error) where the kernel went on.
func TestWalkBeyondPathMax(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// Two links of 330 names each: 7 KiB of real path (made through the
	// first link: no path given to the kernel is over PATH_MAX).
	sub := strings.Repeat("yyyyyyyyyy/", 330)
	for _, at := range []string{root, root + "/down"} {
		if err := os.MkdirAll(at+"/"+sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(sub, at+"/down"); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(root+"/down/down/../f", nil, 0o644); err != nil {
		t.Fatalf("the kernel does not reach it either: %v", err)
	}
	p := root + "/down/down/../f"
	var last Step
	final, err := Walk(p, func(s Step) error { last = s; return nil })
	if err != nil || last.Err != nil {
		t.Fatalf("Walk(%s): %v (step %v)", p, err, last.Err)
	}
	want := filepath.Join(root, sub, strings.Repeat("yyyyyyyyyy/", 329), "f")
	if final != want {
		t.Errorf("Walk = ...%q, want ...%q", final[len(final)-40:], want[len(want)-40:])
	}
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var k unix.Stat_t
	if err := unix.Fstat(fd, &k); err != nil {
		t.Fatal(err)
	}
	if st := last.Info.Sys().(*syscall.Stat_t); st.Ino != k.Ino || st.Dev != k.Dev {
		t.Errorf("Walk's last step is not the file the kernel opens")
	}
	if _, _, err := Resolve(p); err != nil {
		t.Errorf("Resolve: %v", err)
	}
}
