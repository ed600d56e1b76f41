package ns

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// swappedCopy makes dir/init a copy of /bin/true, opens it as initbin.Open
// does (O_PATH, no symlink followed: the descriptor that is checked) and
// then renames a copy of /bin/false over the name: the host, or a process
// of the user's, swapping the file between the check and the exec. It
// returns the checked descriptor (named by the path, as initbin names it)
// and one opened after the swap.
func swappedCopy(t *testing.T) (checked, after *os.File) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cp := func(src, dst string) {
		in, err := os.Open(src)
		if err != nil {
			t.Fatalf("open %s: %v", src, err)
		}
		defer in.Close()
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "init")
	cp("/bin/true", path)
	open := func() *os.File {
		fd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		f := os.NewFile(uintptr(fd), path)
		t.Cleanup(func() { f.Close() })
		return f
	}
	checked = open()
	cp("/bin/false", path+".swap")
	if err := os.Rename(path+".swap", path); err != nil {
		t.Fatal(err)
	}
	return checked, open()
}

// TestSpawnExecsCheckedDescriptor: the old way of starting init (spawn)
// execs the very file initbin checked, through its descriptor, not
// whatever is at its path by then. Seen failing with spawn's cmd.Path set
// to exe.Name() (the path): the swapped-in program ran (exit status 1).
// The control (the descriptor opened after the swap) shows the two
// programs apart.
func TestSpawnExecsCheckedDescriptor(t *testing.T) {
	checked, after := swappedCopy(t)
	run := func(exe *os.File) int {
		parent, child, err := Socketpair()
		if err != nil {
			t.Fatal(err)
		}
		defer parent.Close()
		defer child.Close()
		// No namespace: the test is about which file is exec'd, and
		// runs alike as root and as a user.
		s, err := spawn(Config{CgroupFD: -1}, &syscall.SysProcAttr{Setsid: true}, child, exe)
		if err != nil {
			t.Fatal(err)
		}
		ws, err := s.Wait()
		if err != nil {
			t.Fatal(err)
		}
		return ws.ExitStatus()
	}
	if got := run(after); got != 1 {
		t.Fatalf("control: the program swapped in exited %d, not 1 (false): the test cannot tell the two apart", got)
	}
	if got := run(checked); got != 0 {
		t.Fatalf("spawn exec'd what is at the checked copy's path now (exit %d), not the checked descriptor (true, exit 0)", got)
	}
}

// TestEntryExecsCheckedDescriptor: the same for the lean init's entry
// (spawnEntry): it is exec'd from the checked descriptor, fd 4 of its own
// (entryFiles), not by the copy's path. Neither program here is an entry:
// each exits at once, and the error names its exit status. Seen failing
// with entryProc's path set to cfg.Exe.Name(): exit status 1.
func TestEntryExecsCheckedDescriptor(t *testing.T) {
	checked, after := swappedCopy(t)
	run := func(exe *os.File) string {
		_, _, err := spawnEntry(Config{Exe: exe, CgroupFD: -1})
		if err == nil {
			t.Fatal("a program that is not the lean init started init through the entry path")
		}
		return err.Error()
	}
	if got := run(after); !strings.Contains(got, "exit status 1") {
		t.Fatalf("control: the program swapped in did not exit 1 (false): %s", got)
	}
	if got := run(checked); !strings.Contains(got, "exit status 0") {
		t.Fatalf("the entry exec'd what is at the checked copy's path now, not the checked descriptor (true): %s", got)
	}
}
