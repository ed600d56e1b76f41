//go:build amd64 || arm64

package ns

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/procstat"
)

// TestForkExecReaperOrphans: a command started by forkExecReaper is its
// own child subreaper: what it double-forks with setsid (parent, group and
// session gone) is re-parented to it, not to this process's reaper, and
// proctree finds it by that parent link (execreap). With syscall.ForkExec
// (main, f8cc28d) the orphan's parent was the test's own reaper (init, or
// the host's), never the command.
func TestForkExecReaperOrphans(t *testing.T) {
	fd := devNullFD(t)
	pidfd := -1
	attr := &syscall.ProcAttr{Dir: "/", Env: []string{"PATH=/usr/bin:/bin"}, Files: []uintptr{fd, fd, fd},
		Sys: &syscall.SysProcAttr{Setpgid: true, PidFD: &pidfd}}
	pid, err := forkExecReaper("/bin/sh", []string{"sh", "-c", "setsid /bin/sh -c 'sleep 30 & exit 0'; exec sleep 31"}, attr)
	if err != nil {
		t.Fatalf("forkExecReaper: %v", err)
	}
	if pidfd < 0 {
		t.Errorf("no pidfd back (CLONE_PIDFD)")
	} else {
		unix.Close(pidfd)
	}
	defer func() {
		all, _ := procstat.All("")
		for _, p := range procstat.Descendants(all, pid) {
			unix.Kill(p, unix.SIGKILL)
		}
		unix.Kill(pid, unix.SIGKILL)
		unix.Wait4(pid, nil, 0, nil)
	}()
	if st, err := procstat.Read("", pid); err != nil || st.Pgrp != pid {
		t.Errorf("command's process group: %+v %v, want its own (Setpgid)", st, err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		all, _ := procstat.All("")
		for _, st := range all {
			if st.PPid == pid && st.Session != pid && st.Comm == "sleep" {
				return // the orphaned sleep is the command's child
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the double-forked sleep is not the command's (pid %d) child: not its own subreaper", pid)
		}
	}
}

// TestForkExecReaperFails: a command that cannot start is the shell's exit
// code with the reason, and leaves no child.
func TestForkExecReaperFails(t *testing.T) {
	fd := devNullFD(t)
	for _, c := range []struct {
		path, dir string
		code      int
		errno     error
	}{
		{"/nonexistent/cmd", "/", 127, os.ErrNotExist},
		{"/", "/", 126, unix.EACCES},
		{"/bin/true", "/nonexistent", 127, os.ErrNotExist},
	} {
		attr := &syscall.ProcAttr{Dir: c.dir, Files: []uintptr{fd, fd, fd}, Sys: &syscall.SysProcAttr{Setpgid: true}}
		_, err := forkExecReaper(c.path, []string{c.path}, attr)
		var se *setupError
		if !errors.As(err, &se) || se.code != c.code || !errors.Is(err, c.errno) {
			t.Errorf("%s in %s: %v, want exit %d and %v", c.path, c.dir, err, c.code, c.errno)
		}
	}
}

// devNullFD is an fd of /dev/null, closed at the test's end.
func devNullFD(t *testing.T) uintptr {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { null.Close() })
	return null.Fd()
}
