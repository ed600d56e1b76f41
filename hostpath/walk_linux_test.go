//go:build linux

package hostpath

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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
