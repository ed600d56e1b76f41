package dircache

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLstatKeyNoAlloc: a directory's key is taken without a heap copy of
// its path (two passes a run, one per directory: each copy was a fresh
// page now and then, 18-30 us each on a paravirtualized VM), and it is
// unix.Lstat's key, for a directory, a symlink to one, a file, a missing
// path and a path too long for the stack buffer.
func TestLstatKeyNoAlloc(t *testing.T) {
	d := t.TempDir()
	sub := filepath.Join(d, "sub")
	long := filepath.Join(d, strings.Repeat("x", 200), strings.Repeat("y", 200), strings.Repeat("z", 200))
	if err := os.MkdirAll(long, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sub, filepath.Join(d, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{d, sub, long, filepath.Join(d, "link"), filepath.Join(d, "file"), filepath.Join(d, "none"), d + "/\x00x"} {
		want, wantOK := Key{}, false
		var st unix.Stat_t
		if unix.Lstat(p, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			want, wantOK = keyOf(&st), true
		}
		if k, ok := lstatKey(p); k != want || ok != wantOK {
			t.Errorf("lstatKey(%q) = %+v, %v; unix.Lstat: %+v, %v", p, k, ok, want, wantOK)
		}
	}
	if sysFstatat == 0 {
		t.Skip("no fstatat number for this architecture: unix.Lstat (allocates)")
	}
	if n := testing.AllocsPerRun(100, func() { lstatKey(sub) }); n != 0 {
		t.Fatalf("lstatKey allocates %v times a call, want 0", n)
	}
}
