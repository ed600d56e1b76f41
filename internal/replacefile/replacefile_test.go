package replacefile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWrite: the bytes replace the file, a symlink at the name is replaced
// (its target untouched), the file is the user's only, no temporary file
// stays, and a failure says the path and leaves nothing either.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "record")
	if err := os.Symlink(target, file); err != nil {
		t.Fatal(err)
	}
	for _, sync := range []bool{false, true} {
		if err := Write(file, "", []byte("new\n"), sync); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("written through the symlink: target holds %q", b)
	}
	fi, err := os.Lstat(file)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("record: %v %v, want a regular file of mode 0600", fi, err)
	}
	if b, _ := os.ReadFile(file); string(b) != "new\n" {
		t.Fatalf("record holds %q", b)
	}
	// A name that is a non-empty directory cannot be replaced.
	sub := filepath.Join(dir, "sub")
	os.MkdirAll(filepath.Join(sub, "x"), 0o755)
	if err := Write(sub, ".sub-*", []byte("x"), false); err == nil || !strings.Contains(err.Error(), sub) {
		t.Fatalf("Write over a directory: %v, want an error naming %s", err, sub)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 { // target, record, sub
		t.Fatalf("left in the directory: %v", ents)
	}
}
