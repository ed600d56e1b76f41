package jobstop

import (
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/procstat"
)

// Stop stops the caller's whole job (its process group, as Ctrl-Z on a
// cooked terminal would) with SIGTSTP's default action, so the shell sees
// it "Stopped", and returns once it is continued (cont receives SIGCONT:
// the caller has it notified). Go keeps its own handler for a signal once
// notified (signal.Reset does not give SIGTSTP back its default), so the
// action is set to SIG_DFL with rt_sigaction for the stop and the
// runtime's handler put back after it, byte for byte. Where that fails,
// SIGSTOP stops the job (the shell then says "Stopped (signal)").
func Stop(cont <-chan os.Signal) {
	for len(cont) > 0 {
		<-cont // a SIGCONT from before this stop
	}
	var dfl, old [8]uint64 // a zeroed struct sigaction is SIG_DFL on every architecture
	const sigsetSize = 8   // the kernel's sigset_t on amd64, arm64, riscv64
	_, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(unix.SIGTSTP),
		uintptr(unsafe.Pointer(&dfl)), uintptr(unsafe.Pointer(&old)), sigsetSize, 0, 0)
	if e != 0 {
		_ = unix.Kill(0, unix.SIGSTOP)
		<-cont
		return
	}
	_ = unix.Kill(0, unix.SIGTSTP)
	// The stop takes effect when a thread of the process takes the signal;
	// keep SIG_DFL until then. Continued, it gets SIGCONT; the timer only
	// guards against a stop that never came.
	select {
	case <-cont:
	case <-time.After(2 * time.Second):
	}
	_, _, _ = unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(unix.SIGTSTP),
		uintptr(unsafe.Pointer(&old)), 0, sigsetSize, 0, 0)
}

// Resumable tells whether the caller, stopped, would be resumed: it has a
// controlling terminal, and the first ancestor outside its process group
// is in its session (the job-control shell that started the job). Not in
// CI, under a service manager or `script -c`: there a stop would never end
// (the kernel even discards SIGTSTP for an orphaned process group).
func Resumable() bool {
	tty, err := os.OpenFile("/dev/tty", os.O_RDONLY|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false // ENXIO: no controlling terminal
	}
	tty.Close()
	pgid := unix.Getpgrp()
	sid, err := unix.Getsid(0)
	if err != nil {
		return false
	}
	pid := os.Getpid()
	for i := 0; i < 64; i++ {
		ppid := parentPid(pid)
		if ppid <= 0 {
			return false
		}
		ppg, err := unix.Getpgid(ppid)
		if err != nil {
			return false
		}
		if ppg != pgid {
			psid, err := unix.Getsid(ppid)
			return err == nil && psid == sid
		}
		pid = ppid
	}
	return false
}

// parentPid reads a process's parent from /proc/PID/stat (0 if unknown).
func parentPid(pid int) int {
	s, err := procstat.Read("", pid)
	if err != nil {
		return 0
	}
	return s.PPid
}
