package dirnames

import (
	"os"
	"path/filepath"
	"testing"
)

func TestNames(t *testing.T) {
	d := t.TempDir()
	for _, n := range []string{"a", "b", ".hidden"} {
		if err := os.WriteFile(filepath.Join(d, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(d, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		dir  string
		max  int
		ok   bool
		n    int
	}{
		{"all", d, 0, true, 3},
		{"at the bound", d, 3, true, 3},
		{"over the bound", d, 2, false, 0},
		{"a symlink to a directory is not followed", link, 0, false, 0},
		{"a file", filepath.Join(d, "a"), 0, false, 0},
		{"absent", filepath.Join(d, "nope"), 0, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Names(tc.dir, tc.max)
			if ok != tc.ok || len(got) != tc.n {
				t.Fatalf("Names(%s, %d) = %v, %v; want %d names, %v", tc.dir, tc.max, got, ok, tc.n, tc.ok)
			}
			if ok && (!got["a"] || !got[".hidden"] || got["."] || got[".."]) {
				t.Fatalf("names %v", got)
			}
		})
	}
}
