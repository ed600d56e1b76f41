package sandbox

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// agentStdin returns the file init hands on as the agent's fd 0, and a
// func that closes what was opened for it (after init has its copy).
//
// A terminal is relayed (a pty of the sandbox's own behind termfilter)
// when stdin and stdout are both terminals; when only stdout or stderr
// is, only that output is. When stdin is a terminal and stdout is not (`jail --
// agent > out.txt`, `jail -- agent | tee log`), init's fd 0 would be the
// user's terminal itself, opened read-write by the login or terminal
// emulator: the agent could write every byte to it, around termfilter
// (OSC 52 sets the clipboard, titles, answer-back queries whose replies
// land in the shell's input after the run). So the agent gets a new
// read-only description of the same terminal instead: it still reads
// the keys typed and isatty(0) stays true (`claude -p` and the like
// decide by it whether to wait for piped input), while write(2) on it
// fails with EBADF; reopening it for writing through /proc/self/fd/0 is
// refused by Landlock (the host's devpts is outside every granted tree).
// O_NONBLOCK flags on it no longer reach the user's shell either (they
// belong to the description, which is now the agent's own).
//
// Where the terminal cannot be reopened (a terminal of another user,
// after su), the agent gets the null device and the user a notice:
// never the read-write original.
func (r *runner) agentStdin() (*os.File, func()) {
	nothing := func() {}
	if r.sess.Tty || !term.IsTerminal(0) || term.IsTerminal(1) {
		return os.Stdin, nothing // not a terminal, or relayed
	}
	f, err := reopenReadOnly(0)
	if err == nil {
		r.stdinTerm = saveStdinTerm(0)
		return f, func() { f.Close() }
	}
	null, nerr := os.Open(os.DevNull)
	if nerr != nil {
		// Nothing is handed on (init's fd 0 becomes the null device by
		// os/exec's rule for a nil stdin) rather than the terminal.
		r.notef("stdin is a terminal jail cannot reopen read-only (%v): the agent's stdin is empty", err)
		return nil, nothing
	}
	r.notef("stdin is a terminal jail cannot reopen read-only (%v): the agent's stdin is empty (pipe the input, or run with stdout on the terminal too)", err)
	return null, func() { null.Close() }
}

// reopenReadOnly opens the terminal on fd anew, read-only, and checks it
// is the same device. O_NONBLOCK for the open (a serial line without
// CLOCAL would wait for carrier), cleared after; O_NOCTTY so that jail
// does not take it as its controlling terminal.
func reopenReadOnly(fd int) (*os.File, error) {
	path := fmt.Sprintf("/proc/self/fd/%d", fd)
	nfd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("reopen %s read-only: %w", path, err)
	}
	var a, b unix.Stat_t
	if err := unix.Fstat(fd, &a); err != nil {
		unix.Close(nfd)
		return nil, fmt.Errorf("stat fd %d: %w", fd, err)
	}
	if err := unix.Fstat(nfd, &b); err != nil || a.Rdev != b.Rdev || a.Ino != b.Ino || a.Dev != b.Dev {
		unix.Close(nfd)
		return nil, fmt.Errorf("reopen %s: not the same terminal", path)
	}
	if _, err := unix.FcntlInt(uintptr(nfd), unix.F_SETFL, 0); err != nil {
		unix.Close(nfd)
		return nil, fmt.Errorf("reopen %s: clear O_NONBLOCK: %w", path, err)
	}
	return os.NewFile(uintptr(nfd), path), nil
}

// stdinTermState is the terminal on stdin as the agent got it. A
// read-only descriptor still takes TCSETS (the kernel checks no open
// mode for it): the agent could leave the user's terminal without echo,
// without ^C (-isig) or raw, past the run. jail puts the settings back at
// exit, as the relay does its raw mode. The window size (TIOCSWINSZ) is
// left: the terminal sets it again at its next resize, and one made
// during the run must not be undone.
type stdinTermState struct {
	termios *unix.Termios
}

func saveStdinTerm(fd int) *stdinTermState {
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil
	}
	return &stdinTermState{termios: t}
}

// restoreStdinTerm puts the terminal on stdin back as it was handed on,
// where the agent changed it; only while jail is the terminal's
// foreground job (a background job's tcsetattr would stop it with
// SIGTTOU, and the user's shell owns the terminal then).
func (r *runner) restoreStdinTerm() {
	st := r.stdinTerm
	if st == nil {
		return
	}
	if pg, err := unix.IoctlGetInt(0, unix.TIOCGPGRP); err != nil || pg != unix.Getpgrp() {
		return
	}
	if now, err := unix.IoctlGetTermios(0, unix.TCGETS); err == nil && *now != *st.termios {
		_ = unix.IoctlSetTermios(0, unix.TCSETS, st.termios)
	}
}
