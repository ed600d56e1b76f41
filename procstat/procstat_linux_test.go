package procstat

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

func TestStartTickSelfAndChild(t *testing.T) {
	self := StartTick(os.Getpid())
	if self == 0 {
		t.Fatal("StartTick(self) = 0")
	}
	if again := StartTick(os.Getpid()); again != self {
		t.Fatalf("StartTick(self) changed: %d then %d", self, again)
	}
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	if child := StartTick(cmd.Process.Pid); child < self {
		t.Fatalf("child started at %d, before its parent (%d)", child, self)
	}
	s, err := Read("", os.Getpid())
	if err != nil || s.Pid != os.Getpid() || s.PPid != os.Getppid() || s.StartTime != self {
		t.Fatalf("Read(self) = %+v, %v", s, err)
	}
}

func TestStartTickGone(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if got := StartTick(cmd.Process.Pid); got != 0 {
		// The pid may have been reused already; then it is not our child.
		if s, err := Read("", cmd.Process.Pid); err == nil && s.Comm == "true" {
			t.Fatalf("StartTick of a reaped child = %d", got)
		}
	}
}

func TestReadRoot(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "12"), 0o755)
	os.WriteFile(filepath.Join(root, "12", "stat"), line(12, "a b) c", tail), 0o644)
	os.MkdirAll(filepath.Join(root, "13"), 0o755)
	os.WriteFile(filepath.Join(root, "13", "stat"), []byte("garbage"), 0o644)
	if s, err := Read(root, 12); err != nil || s.StartTime != 4242 || s.Comm != "a b) c" {
		t.Fatalf("Read(12) = %+v, %v", s, err)
	}
	if _, err := Read(root, 13); !errors.Is(err, ErrFormat) {
		t.Fatalf("Read(13) err = %v, want ErrFormat", err)
	}
	if _, err := Read(root, 14); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Read(14) err = %v, want not exist", err)
	}
}

func TestSelfStartTick(t *testing.T) {
	want := StartTick(os.Getpid())
	if want == 0 {
		t.Fatal("StartTick(self) = 0")
	}
	for i := 0; i < 2; i++ { // the read, then the kept value
		if got := SelfStartTick(); got != want {
			t.Fatalf("SelfStartTick() = %d, want %d", got, want)
		}
	}
}

// TestAll: every process under a root of the test's own, a garbled or
// gone one left out, names that are not pids passed over; and the listing's
// error said.
func TestAll(t *testing.T) {
	root := t.TempDir()
	for pid, ppid := range map[int]string{10: "1", 11: "10", 12: "11"} {
		os.MkdirAll(filepath.Join(root, strconv.Itoa(pid)), 0o755)
		os.WriteFile(filepath.Join(root, strconv.Itoa(pid), "stat"), line(pid, "x) S 99", "S "+ppid+tail[3:]), 0o644)
	}
	os.MkdirAll(filepath.Join(root, "13"), 0o755)
	os.WriteFile(filepath.Join(root, "13", "stat"), []byte("garbage"), 0o644)
	os.MkdirAll(filepath.Join(root, "14"), 0o755) // gone: no stat
	os.MkdirAll(filepath.Join(root, "self"), 0o755)
	all, err := All(root)
	if err != nil || len(all) != 3 {
		t.Fatalf("All = %+v, %v; want 10, 11, 12", all, err)
	}
	if got := Descendants(all, 10); !slices.Equal(got, []int{11, 12}) {
		t.Fatalf("Descendants(10) = %v, want [11 12]", got)
	}
	if _, err := All(filepath.Join(root, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("All(missing) err = %v, want not exist", err)
	}
}
