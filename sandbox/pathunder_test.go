package sandbox

import (
	"strings"
	"testing"
)

// FuzzPathUnder: pathUnder answers as deepestMount's old test did
// (path == dir, or a prefix of dir without its trailing "/" plus "/"),
// without building a string per mount.
func FuzzPathUnder(f *testing.F) {
	for _, c := range [][2]string{{"/a/b", "/a"}, {"/a", "/a"}, {"/ab", "/a"}, {"/a/b", "/"}, {"/", "/"}, {"/a/", "/a/"}, {"/a/b", "/a/"}, {"a", ""}, {"", ""}, {"/a", "//"}} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, path, dir string) {
		want := path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
		if got := pathUnder(path, dir); got != want {
			t.Fatalf("pathUnder(%q, %q) = %v, want %v", path, dir, got, want)
		}
	})
}
