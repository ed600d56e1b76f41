package ns

import (
	"encoding/binary"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The lean init's entry (cmd/jail-init/entry_linux_amd64.s) holds these
// three names as bytes: a change here must be made there too, within its
// 16- and 10-byte buffers (NUL included).
func TestEntryArgs(t *testing.T) {
	if EntryArg0 != "jail:init-entry" || InitArg0 != "jail:init" {
		t.Fatalf("EntryArg0 %q, InitArg0 %q: entry_linux_amd64.s compares and execs \"jail:init-entry\" and \"jail:init\"; change both places", EntryArg0, InitArg0)
	}
	// Its exec-less start names init with prctl(PR_SET_NAME, "jail-init").
	if InitComm != "jail-init" {
		t.Fatalf("InitComm %q: entry_linux_amd64.s names init \"jail-init\" when it does not exec it; change both places", InitComm)
	}
}

// sleeper starts sleep 30 as this process's child (reaped by the caller
// or the cleanup).
func sleeper(t *testing.T) int {
	t.Helper()
	pid, err := syscall.ForkExec("/bin/sleep", []string{"sleep", "30"}, &syscall.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = unix.Kill(pid, unix.SIGKILL)
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, 0, nil)
	})
	return pid
}

// A start undone because the spawner thread failed to leave the
// sandbox's cgroups (bornIn's undo) kills and reaps the entry, and the
// init it cloned and said too: read from the socket once the entry is
// gone. A rootful entry says init at its clone ('C', entryParentMap); a
// user's says it only in its last message ('P', entrySelfMap), and may
// have cloned init before the undo. Seen failing with the undo that only
// killed the entry ("init ... still runs"), and, for 'P', with the undo
// that reaped only a 'C' init.
func TestEntryUndoReapsCloned(t *testing.T) {
	for _, kind := range []uint64{entryCloned, entryPid} {
		t.Run(string(rune(kind)), func(t *testing.T) {
			parent, child, err := Socketpair()
			if err != nil {
				t.Fatal(err)
			}
			defer parent.Close()
			defer child.Close()
			init := sleeper(t)
			e := &entryProc{path: "/bin/sleep", attr: &syscall.ProcAttr{}}
			if err := e.start(); err != nil {
				t.Fatal(err)
			}
			var b [16]byte
			binary.LittleEndian.PutUint64(b[:8], kind)
			binary.LittleEndian.PutUint64(b[8:], uint64(init))
			if _, err := child.Write(b[:]); err != nil {
				t.Fatal(err)
			}
			entryUndo(e, parent)
			var ws unix.WaitStatus
			if pid, err := unix.Wait4(init, &ws, unix.WNOHANG, nil); err != unix.ECHILD {
				t.Errorf("init %d still runs, or unreaped (wait4: %d, %v)", init, pid, err)
			}
			if pid, err := unix.Wait4(e.pid, &ws, unix.WNOHANG, nil); err != unix.ECHILD {
				t.Errorf("the entry %d unreaped (wait4: %d, %v)", e.pid, pid, err)
			}
		})
	}
}

// reapCloned kills only a child of this process: a pid the entry said
// that is not one (here a grandchild) is left alone. Seen failing with a
// reapCloned that killed first: "... killed".
func TestReapClonedOnlyChildren(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	shPid, err := syscall.ForkExec("/bin/sh", []string{"sh", "-c", "sleep 30 & echo $!; wait"},
		&syscall.ProcAttr{Files: []uintptr{0, w.Fd(), 2}})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = unix.Kill(shPid, unix.SIGKILL)
		var ws unix.WaitStatus
		_, _ = unix.Wait4(shPid, &ws, 0, nil)
	}()
	var line [32]byte
	n, _ := r.Read(line[:])
	r.Close()
	pid, err := strconv.Atoi(strings.TrimSpace(string(line[:n])))
	if err != nil {
		t.Fatalf("the grandchild's pid: %q", line[:n])
	}
	defer unix.Kill(pid, unix.SIGKILL)
	reapCloned(pid)
	time.Sleep(20 * time.Millisecond)
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err != nil || strings.Contains(string(b), ") Z ") {
		t.Errorf("the grandchild %d, not this process's child, killed (%v)", pid, err)
	}
	mine := sleeper(t)
	reapCloned(mine)
	var ws unix.WaitStatus
	if _, err := unix.Wait4(mine, &ws, unix.WNOHANG, nil); err != unix.ECHILD {
		t.Errorf("the child %d not reaped: %v", mine, err)
	}
}

// exitWait returns once the process has exited, not before, and leaves it
// to be reaped (with its status) by the Wait4 after it.
func TestExitWaitUntilExit(t *testing.T) {
	pid, err := syscall.ForkExec("/bin/sh", []string{"sh", "-c", "sleep 0.3; exit 7"}, &syscall.ProcAttr{Files: []uintptr{0, 1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	f := initExited(pid)
	if f == nil {
		t.Fatal("no pidfd of the child: pidfd_open(PIDFD_NONBLOCK) is Linux 5.10")
	}
	start := time.Now()
	done := make(chan time.Duration, 1)
	go func() {
		runtime.LockOSThread() // as the spawner's goroutine
		exitWait(f)
		done <- time.Since(start)
	}()
	var took time.Duration
	select {
	case took = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("exitWait did not return after the child exited")
	}
	if took < 250*time.Millisecond {
		t.Fatalf("exitWait returned after %v, before the child exited", took)
	}
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil || !ws.Exited() || ws.ExitStatus() != 7 {
		t.Fatalf("Wait4 after exitWait: %v, status %v", err, ws)
	}
}

// Without a pidfd, exitWait returns at once (the Wait4 after it waits).
func TestExitWaitWithoutPidfd(t *testing.T) {
	start := time.Now()
	exitWait(nil)
	if d := time.Since(start); d > time.Second {
		t.Fatalf("exitWait(nil) took %v", d)
	}
}
