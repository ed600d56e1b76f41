package hostpath

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
)

func tree(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestResolve(t *testing.T) {
	root := tree(t)
	j := func(p ...string) string { return filepath.Join(append([]string{root}, p...)...) }
	os.MkdirAll(j("dots", "bin"), 0o755)
	os.MkdirAll(j("share", "app", "v1"), 0o755)
	os.WriteFile(j("share", "app", "v1", "app"), []byte("x"), 0o755)
	os.MkdirAll(j(".local"), 0o755)
	os.Symlink("../dots/bin", j(".local", "bin"))                       // relative, a directory
	os.Symlink(j("share", "app", "v1", "app"), j("dots", "bin", "app")) // absolute
	os.Symlink("loop2", j("loop1"))
	os.Symlink("loop1", j("loop2"))

	final, links, err := Resolve(j(".local", "bin", "app"))
	if err != nil {
		t.Fatal(err)
	}
	if final != j("share", "app", "v1", "app") {
		t.Errorf("final %s", final)
	}
	want := []Link{{j(".local", "bin"), "../dots/bin"}, {j("dots", "bin", "app"), j("share", "app", "v1", "app")}}
	if !reflect.DeepEqual(links, want) {
		t.Errorf("links %+v, want %+v", links, want)
	}
	if _, _, err := Resolve(j("loop1")); !errors.Is(err, ErrLoop) {
		t.Errorf("loop: %v", err)
	}
	if _, _, err := Resolve(j("missing", "x")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if _, _, err := Resolve("relative"); err == nil {
		t.Error("a relative path resolved")
	}
	// .. after a link goes up from the link's target, as the kernel does.
	// (Spelled by hand: filepath.Join would clean the ".." away as text,
	// to .local/marker, which does not exist.)
	os.WriteFile(j("dots", "marker"), nil, 0o644)
	final, _, err = Resolve(j(".local", "bin") + "/../marker")
	if err != nil || final != j("dots", "marker") {
		t.Errorf("dotdot: %s %v", final, err)
	}
	// A path that does not exist yet: the rest as named, from the missing part.
	final, links, err = ResolveAsNamed(j(".local", "bin") + "/../new/x")
	if err != nil || final != j("dots", "new", "x") || len(links) != 1 {
		t.Errorf("as named: %s %v %v", final, links, err)
	}
}

func TestInterpreter(t *testing.T) {
	dir := tree(t)
	tests := []struct {
		body   string
		interp string
		env    bool
	}{
		{"#!/bin/sh\necho\n", "/bin/sh", false},
		{"#! /usr/bin/python3 -u\n", "/usr/bin/python3", false},
		{"#!/usr/bin/env node\n", "node", true},
		{"#!/usr/bin/env -S node --no-warnings\n", "node", true},
		{"#!/usr/bin/env -Snode\n", "node", true},
		{"#!/usr/bin/env -i PATH=/x python3\n", "python3", true},
		{"#!/usr/bin/env\n", "", false},
		{"#!\n", "", false},
		{"\x7fELF...", "", false},
		{"", "", false},
	}
	for i, tt := range tests {
		p := filepath.Join(dir, "f")
		os.WriteFile(p, []byte(tt.body), 0o755)
		interp, env := Interpreter(p)
		if interp != tt.interp || env != tt.env {
			t.Errorf("%d %q: %q %v, want %q %v", i, tt.body, interp, env, tt.interp, tt.env)
		}
	}
}

func FuzzInterpreter(f *testing.F) {
	f.Add([]byte("#!/usr/bin/env -S node --x\n"))
	f.Add([]byte("#!/bin/sh"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		interp, _ := Interpreter(p)
		if len(b) < 2 || string(b[:2]) != "#!" {
			if interp != "" {
				t.Fatalf("no #! but interpreter %q", interp)
			}
		}
	})
}

func TestInstallTree(t *testing.T) {
	data := []string{"/h/.local/share"}
	broad := []string{"/h", "/h/.local", "/h/.config", "/h/.local/share"}
	tests := []struct{ final, want string }{
		{"/h/.local/share/claude/versions/2.1.0", "/h/.local/share/claude"},
		{"/h/.nvm/versions/node/v22/bin/node", "/h/.nvm/versions/node/v22"},
		{"/h/.nvm/versions/node/v22/lib/node_modules/x/cli.js", "/h/.nvm/versions/node/v22/lib/node_modules/x"},
		{"/h/.local/bin/tool", "/h/.local/bin"}, // ~/.local is too broad: its bin only
		{"/h/bin/tool", "/h/bin"},
		{"/h/.pyenv/shims/python3", "/h/.pyenv"},
		{"/h/tool", "/h/tool"}, // the home itself: the file alone
		{"/h/.local/share/tool", "/h/.local/share/tool"},
		{"/opt/x/bin/x", "/opt/x"},
		{"/bin/x", "/bin"}, // "/" is too broad
	}
	npm := File{Final: "/h/.nvm/v1/lib/node_modules/x/cli.js", Links: []Link{{"/h/.nvm/v1/bin/x", "../lib/node_modules/x/cli.js"}}}
	if got := InstallTree(npm, data, broad); got != "/h/.nvm/v1" {
		t.Errorf("npm global: %s", got)
	}
	for _, tt := range tests {
		if got := InstallTree(File{Final: tt.final}, data, broad); got != tt.want {
			t.Errorf("InstallTree(%s) = %s, want %s", tt.final, got, tt.want)
		}
	}
}

func TestFindCommand(t *testing.T) {
	root := tree(t)
	j := func(p ...string) string { return filepath.Join(append([]string{root}, p...)...) }
	os.MkdirAll(j("a"), 0o755)
	os.MkdirAll(j("b"), 0o755)
	os.WriteFile(j("a", "notexec"), []byte("x"), 0o644)
	os.WriteFile(j("b", "notexec"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(j("b", "fakenode"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(j("b", "cli"), []byte("#!/usr/bin/env fakenode\n"), 0o755)
	path := j("a") + ":" + j("b")

	c, err := FindCommand("notexec", path, "/")
	if err != nil || len(c.Files) != 2 || c.Files[0].Path != j("b", "notexec") || c.Files[1].Final != "/bin/sh" && c.Files[1].Path != "/bin/sh" {
		t.Fatalf("notexec: %+v %v", c, err)
	}
	c, err = FindCommand("cli", path, "/")
	if err != nil || len(c.Files) != 3 || c.Files[1].Path != j("b", "fakenode") {
		t.Fatalf("cli: %+v %v", c, err)
	}
	if _, err := FindCommand("nothere", path, "/"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("nothere: %v", err)
	}
	c, err = FindCommand("./cli", "", j("b"))
	if err != nil || c.Files[0].Path != j("b", "cli") {
		t.Fatalf("./cli: %+v %v", c, err)
	}
}

// Walk visits every name it looks up, in order, links before they are
// followed; an error from visit ends it; a missing name is visited with
// its error.
func TestWalk(t *testing.T) {
	root := tree(t)
	j := func(p ...string) string { return filepath.Join(append([]string{root}, p...)...) }
	os.MkdirAll(j("a", "b"), 0o755)
	os.Symlink("a/b", j("l"))
	var got []string
	visit := func(s Step) error {
		switch {
		case s.Err != nil:
			got = append(got, "missing "+s.Path)
		case s.Link():
			got = append(got, "link "+s.Path+" -> "+s.Target)
		case s.Info.IsDir():
			got = append(got, "dir "+s.Path)
		}
		return nil
	}
	final, err := Walk(j("l")+"/../b/new/x", visit)
	if err != nil || final != j("a", "b", "new", "x") {
		t.Errorf("Walk = %s, %v", final, err)
	}
	want := []string{"link " + j("l") + " -> a/b", "dir " + j("a"), "dir " + j("a", "b"), "dir " + j("a", "b"), "missing " + j("a", "b", "new")}
	// The directories above root are visited too: compare the tail.
	if len(got) < len(want) || !reflect.DeepEqual(got[len(got)-len(want):], want) {
		t.Errorf("steps %q, want them to end with %q", got, want)
	}
	stop := errors.New("stop")
	if _, err := Walk(j("l", "x"), func(s Step) error {
		if s.Link() {
			return stop
		}
		return nil
	}); err != stop {
		t.Errorf("visit's error: %v, want it as is", err)
	}
	// A chain of 40 links resolves, one more is a loop, as the kernel has it.
	prev := j("a")
	for i := range 41 {
		l := j("c" + strconv.Itoa(i))
		os.Symlink(prev, l)
		prev = l
	}
	if final, _, err := Resolve(j("c39")); err != nil || final != j("a") {
		t.Errorf("40 links: %s, %v", final, err)
	}
	if _, _, err := Resolve(j("c40")); !errors.Is(err, ErrLoop) {
		t.Errorf("41 links: %v, want ErrLoop", err)
	}
}
