package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"task1", true}, {"a", true}, {"A.b_c-9", true}, {strings.Repeat("x", 63), true},
		{"", false}, {strings.Repeat("x", 64), false}, {"-x", false}, {".x", false},
		{"a/b", false}, {"..", false}, {"a b", false}, {"a\x00", false}, {"é", false},
	} {
		if err := ValidName(tc.name); (err == nil) != tc.ok {
			t.Errorf("ValidName(%q) = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// A name is this supervisor's until released; a claim whose process is
// gone is stale and taken over; a live one is refused.
func TestClaimName(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	release, err := claimName("one")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := claimName("one"); err == nil || !strings.Contains(err.Error(), "running") {
		t.Fatalf("a second claim of a live name: %v", err)
	}
	release()
	release2, err := claimName("one")
	if err != nil {
		t.Fatalf("claim after release: %v", err)
	}
	release2()
	dir, _ := registryDir()
	// A dead supervisor's claim (a pid that cannot run: start time 1).
	os.WriteFile(filepath.Join(dir, "name.two"), []byte(fmt.Sprintf("%d 1\n", os.Getpid())), 0o600)
	if _, err := claimName("two"); err != nil {
		t.Fatalf("a stale claim was not taken over: %v", err)
	}
	if _, err := claimName("../x"); err == nil {
		t.Fatal("a name with a slash was claimed")
	}
}

func TestCheckStdio(t *testing.T) {
	r, w, _ := os.Pipe()
	defer r.Close()
	defer w.Close()
	null, _ := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	defer null.Close()
	file, _ := os.Create(filepath.Join(t.TempDir(), "f"))
	defer file.Close()
	dir, _ := os.Open(t.TempDir())
	defer dir.Close()
	pathFD, _ := unix.Open(file.Name(), unix.O_PATH|unix.O_CLOEXEC, 0)
	opath := os.NewFile(uintptr(pathFD), "opath")
	defer opath.Close()
	ok := []*os.File{r, w, null, file}
	if err := checkStdio(ok); err != nil {
		t.Fatalf("pipes, /dev/null and a file refused: %v", err)
	}
	for _, bad := range []*os.File{dir, opath} {
		if err := checkStdio([]*os.File{null, bad, null}); err == nil {
			t.Errorf("%s accepted as stdio", bad.Name())
		}
	}
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	defer master.Close()
	if err := checkStdio([]*os.File{master, null, null}); err == nil || !strings.Contains(err.Error(), "terminal") {
		t.Errorf("a pty accepted as stdio: %v", err)
	}
}
