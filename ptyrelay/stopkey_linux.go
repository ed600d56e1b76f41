package ptyrelay

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/procstat"
)

// MasterStopPty is the StopPty of the pty whose master is f: TCGETS,
// TIOCGPGRP and TIOCGSID on a master answer for its slave, and the
// foreground group's leader's /proc/PID/status for its SIGTSTP. The
// process group and session ids come in the caller's pid namespace (the
// host's /proc is the one read); where the sandbox's are not visible from
// it they are 0, and no key is withheld.
//
// f's descriptor is used through SyscallConn: Fd would put it in blocking
// mode, and the relay's reads of it would hold a thread each.
func MasterStopPty(f *os.File) StopPty { return masterPty{f} }

type masterPty struct{ f *os.File }

// control runs fn on the master's descriptor; false when it is closed.
func (m masterPty) control(fn func(fd int)) bool {
	rc, err := m.f.SyscallConn()
	if err != nil {
		return false
	}
	return rc.Control(func(fd uintptr) { fn(int(fd)) }) == nil
}

func (m masterPty) Keys() StopKeys {
	var k StopKeys
	m.control(func(fd int) {
		t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
		if err != nil {
			return // nothing is withheld
		}
		k = StopKeys{Susp: t.Cc[unix.VSUSP], Signals: t.Lflag&unix.ISIG != 0}
		if t.Lflag&unix.IEXTEN != 0 {
			k.Lnext = t.Cc[unix.VLNEXT]
		}
	})
	return k
}

func (m masterPty) Discarded() bool {
	leader := 0
	m.control(func(fd int) {
		pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		if err != nil || pgrp <= 0 {
			return
		}
		sid, err := unix.IoctlGetInt(fd, unix.TIOCGSID)
		// The session leader's own group: no member has a parent in the
		// session outside the group (the leader's parent is init, in
		// another session), so the group is orphaned.
		if err == nil && sid == pgrp {
			leader = pgrp
		}
	})
	if leader == 0 {
		return false
	}
	// Only a stop by SIGTSTP's default action is discarded: a program
	// that ignores it (an interactive shell at its prompt) or catches it
	// gets it as outside. The status is the kernel's (the name in it is
	// escaped: no line of the program's own); a program that fooled this
	// would only choose between its key's stop and its own.
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", leader))
	if err != nil {
		return false
	}
	dfl, ok := procstat.SignalDefault(b, int(unix.SIGTSTP))
	return ok && dfl
}
