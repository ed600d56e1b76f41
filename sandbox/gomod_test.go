package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

func TestGoModRequires(t *testing.T) {
	for _, tt := range []struct {
		mod  string
		want bool
	}{
		{"module m\n\ngo 1.22\n", false},
		{"module m\ngo 1.22\nrequire golang.org/x/sys v0.1.0\n", true},
		{"module m\nrequire (\n\tgolang.org/x/sys v0.1.0 // indirect\n)\n", true},
		{"module m\nrequire (\n)\n", false},
		{"module m\nrequire ()\n", false},
		{"module m\nrequire(\n\ta v1\n)\n", true},
		{"module m\nrequire ( a v1 )\n", true},
		{"module m\n// require a v1\n", false},
		{"module m\nreplace a => ../a\n", false},
		{"module m\ntool (\n\tgolang.org/x/tools/cmd/stringer\n)\n", false},
	} {
		if got := goModRequires([]byte(tt.mod)); got != tt.want {
			t.Errorf("%q: %v, want %v", tt.mod, got, tt.want)
		}
	}
}

// The module cache note is for a module that may need the cache: the
// go.mod found from the command's directory upwards, unless it requires
// nothing or vendors it (and no go.work is beside it).
func TestGoModNeedsCache(t *testing.T) {
	mk := func(files map[string]string) string {
		d := t.TempDir()
		for name, body := range files {
			p := filepath.Join(d, name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		os.MkdirAll(filepath.Join(d, "sub", "pkg"), 0o755)
		return d
	}
	for _, tt := range []struct {
		name  string
		files map[string]string
		want  bool
	}{
		{"no go.mod", map[string]string{"x.go": "package x\n"}, true},
		{"no dependencies", map[string]string{"go.mod": "module m\ngo 1.22\n"}, false},
		{"dependencies", map[string]string{"go.mod": "module m\nrequire a.example/b v1.0.0\n"}, true},
		{"vendored", map[string]string{"go.mod": "module m\nrequire a.example/b v1.0.0\n", "vendor/modules.txt": "# a.example/b v1.0.0\n"}, false},
		{"a workspace", map[string]string{"go.mod": "module m\n", "go.work": "go 1.22\nuse .\n"}, true},
	} {
		d := mk(tt.files)
		for _, dir := range []string{d, filepath.Join(d, "sub", "pkg")} {
			if got := goModNeedsCache(dir); got != tt.want {
				t.Errorf("%s, from %s: %v, want %v", tt.name, dir, got, tt.want)
			}
		}
	}
}

// FuzzGoModRequires: any go.mod parses without a panic, and a require
// line appended after a complete file is always seen.
func FuzzGoModRequires(f *testing.F) {
	f.Add("module m\nrequire (\n\ta v1\n)\n")
	f.Add("module m\nrequire ()\n")
	f.Add("require(")
	f.Fuzz(func(t *testing.T, mod string) {
		goModRequires([]byte(mod))
		if !goModRequires([]byte(mod + "\n)\nrequire a.example/b v1.0.0\n")) {
			t.Errorf("%q with a require line appended: not seen", mod)
		}
	})
}
