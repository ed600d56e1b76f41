package ns

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // umask
		t.Fatal(err)
	}
}

func TestLookPath(t *testing.T) {
	base := t.TempDir()
	bin1 := filepath.Join(base, "bin1") // non-executable copies, a dir
	bin2 := filepath.Join(base, "bin2") // the executables
	empty := filepath.Join(base, "empty")
	for _, d := range []string{bin1, bin2, empty, filepath.Join(bin1, "tool")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(bin1, "both"), 0o644)
	writeFile(t, filepath.Join(bin2, "both"), 0o755)
	writeFile(t, filepath.Join(bin1, "noexec"), 0o644)
	writeFile(t, filepath.Join(bin2, "exe"), 0o755)
	writeFile(t, filepath.Join(bin2, "userx"), 0o744)
	writeFile(t, filepath.Join(bin2, "tool"), 0o755)
	if err := os.Symlink("exe", filepath.Join(bin2, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("missing", filepath.Join(bin2, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("noexec", filepath.Join(bin1, "linknoexec")); err != nil {
		t.Fatal(err)
	}
	env := func(path string) []string { return []string{"HOME=/x", "PATH=" + path, "TERM=dumb"} }
	path := strings.Join([]string{empty, bin1, bin2}, ":")

	tests := []struct {
		name     string
		file     string
		env      []string
		want     string // path found, when code == 0
		wantCode int
	}{
		{"found in PATH", "exe", env(path), filepath.Join(bin2, "exe"), 0},
		{"user-executable only", "userx", env(path), filepath.Join(bin2, "userx"), 0},
		{"symlink to executable", "link", env(path), filepath.Join(bin2, "link"), 0},
		{"non-executable first, executable later", "both", env(path), filepath.Join(bin2, "both"), 0},
		{"directory first, executable later", "tool", env(path), filepath.Join(bin2, "tool"), 0},
		{"absolute executable", filepath.Join(bin2, "exe"), nil, filepath.Join(bin2, "exe"), 0},
		{"relative path with slash is not searched", "bin2/exe", env(base), "", 127},
		{"only non-executable in PATH", "noexec", env(path), "", 126},
		{"symlink to non-executable", "linknoexec", env(path), "", 126},
		{"absolute non-executable", filepath.Join(bin1, "noexec"), env(path), "", 126},
		{"absolute directory", bin1, env(path), "", 126},
		{"directory in PATH only", "tool", env(bin1), "", 126},
		{"not found", "nosuchcmd", env(path), "", 127},
		{"absolute missing", filepath.Join(bin2, "nosuch"), env(path), "", 127},
		{"dangling symlink", "dangling", env(path), "", 127},
		{"missing PATH dir", "exe", env(filepath.Join(base, "nodir")), "", 127},
		{"no PATH at all", "exe", []string{"HOME=/x"}, "", 127},
		{"empty PATH", "exe", env(""), "", 127},
		{"PATH= inside another variable is ignored", "exe", []string{"XPATH=" + bin2}, "", 127},
		{"last PATH wins", "exe", []string{"PATH=" + empty, "PATH=" + bin2}, filepath.Join(bin2, "exe"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := lookPath(tt.file, tt.env)
			if tt.wantCode == 0 {
				if err != nil || got != tt.want {
					t.Fatalf("lookPath(%q) = %q, %v; want %q", tt.file, got, err, tt.want)
				}
				return
			}
			var se *setupError
			if !errors.As(err, &se) {
				t.Fatalf("lookPath(%q) = %q, %v; want a setupError with code %d", tt.file, got, err, tt.wantCode)
			}
			if se.code != tt.wantCode {
				t.Errorf("lookPath(%q): code %d (%v), want %d", tt.file, se.code, err, tt.wantCode)
			}
			if !strings.Contains(err.Error(), tt.file) {
				t.Errorf("error %q does not name %q", err, tt.file)
			}
			if got != "" {
				t.Errorf("path %q returned with an error", got)
			}
		})
	}
}

// An empty PATH element means the current directory, as for execvp.
func TestLookPathEmptyElementIsCwd(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "here"), 0o755)
	t.Chdir(dir)
	for _, p := range []string{":", "/nonexistent:", ":/nonexistent"} {
		got, err := lookPath("here", []string{"PATH=" + p})
		if err != nil {
			t.Errorf("PATH=%q: %v", p, err)
			continue
		}
		if fi, err := os.Stat(got); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("PATH=%q: got %q, which is not the file in the cwd (%v)", p, got, err)
		}
	}
}

func TestFollowLinks(t *testing.T) {
	d := t.TempDir()
	mk := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(d, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(d, "run", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(d, "file"), 0o644)
	mk("file", "rel")                              // -> file
	mk(filepath.Join(d, "file"), "abs")            // -> /abs/file
	mk("rel", "chain")                             // -> rel -> file
	mk("run/sub/resolv.conf", "dangling")          // missing target
	mk("../../file", "run/sub/up")                 // relative with ..
	mk("./run/./sub/../sub/x", "messy")            // cleaned
	mk("loop2", "loop1")                           // loop
	mk("loop1", "loop2")                           //
	mk(filepath.Join(d, "dangling"), "todangling") // -> dangling -> missing
	mk("run", "rundir")                            // link to a directory
	tests := []struct{ in, want string }{
		{filepath.Join(d, "file"), filepath.Join(d, "file")},
		{filepath.Join(d, "missing"), filepath.Join(d, "missing")},
		{filepath.Join(d, "rel"), filepath.Join(d, "file")},
		{filepath.Join(d, "abs"), filepath.Join(d, "file")},
		{filepath.Join(d, "chain"), filepath.Join(d, "file")},
		{filepath.Join(d, "dangling"), filepath.Join(d, "run/sub/resolv.conf")},
		{filepath.Join(d, "todangling"), filepath.Join(d, "run/sub/resolv.conf")},
		{filepath.Join(d, "run/sub/up"), filepath.Join(d, "file")},
		{filepath.Join(d, "messy"), filepath.Join(d, "run/sub/x")},
		{filepath.Join(d, "rundir"), filepath.Join(d, "run")},
	}
	for _, tt := range tests {
		if got := followLinks(tt.in); got != tt.want {
			t.Errorf("followLinks(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// A loop ends (after a bounded number of steps) on one of its links.
	got := followLinks(filepath.Join(d, "loop1"))
	if got != filepath.Join(d, "loop1") && got != filepath.Join(d, "loop2") {
		t.Errorf("followLinks(loop) = %q", got)
	}
}
