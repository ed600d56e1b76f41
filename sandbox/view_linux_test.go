package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// symlinksIn (getdents and readlinkat) finds exactly what os.ReadDir and
// os.Readlink find: every symlink with its text, none of the other
// entries, across several getdents buffers, and in the host's own PATH
// directories. A symlink it missed would be a program directory not
// shown; one too many, a data place shown for nothing.
func TestSymlinksInMatchesPortable(t *testing.T) {
	d := t.TempDir()
	for i := 0; i < 1500; i++ { // > 32 KiB of dirents: several reads
		name := fmt.Sprintf("l%04d-%s", i, strings.Repeat("x", i%40))
		var err error
		switch i % 3 {
		case 0:
			err = os.Symlink(fmt.Sprintf("/opt/t%d/bin/%s", i, name), filepath.Join(d, name))
		case 1:
			err = os.WriteFile(filepath.Join(d, name), nil, 0o644)
		default:
			err = os.Symlink("../"+name, filepath.Join(d, name)) // dangling, relative
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(d, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	dirs := []string{d}
	for _, p := range filepath.SplitList(os.Getenv("PATH")) {
		if filepath.IsAbs(p) {
			dirs = append(dirs, p)
		}
	}
	for _, dir := range dirs {
		var got, want []string
		symlinksIn(dir, func(n, l string) { got = append(got, n+" -> "+l) })
		symlinksPortable(dir, func(n, l string) { want = append(want, n+" -> "+l) })
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: symlinksIn found %d, ReadDir %d; first difference near %q", dir, len(got), len(want), firstDiff(got, want))
		}
		if dir == d && len(got) != 1000 {
			t.Errorf("%s: %d symlinks, want 1000", dir, len(got))
		}
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] + " | " + b[i]
		}
	}
	return "the end"
}
