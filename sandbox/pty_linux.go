package sandbox

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// This file: the terminal relay.

func (r *runner) ptyFile() *os.File {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pty
}

func (r *runner) resizePty() {
	pty := r.ptyFile()
	if pty == nil {
		return
	}
	if ws, err := unix.IoctlGetWinsize(0, unix.TIOCGWINSZ); err == nil {
		_ = unix.IoctlSetWinsize(int(pty.Fd()), unix.TIOCSWINSZ, ws)
	}
}

// startRelay puts the host terminal in raw mode and copies bytes both ways
// between it and the sandbox's own pty. Ctrl-C, Ctrl-Z and friends are then
// interpreted by the sandbox's line discipline for its foreground job, and
// nothing inside can reach the host terminal's ioctls (TIOCSTI injection).
func (r *runner) startRelay() func() {
	pty := r.ptyFile()
	old, err := term.MakeRaw(0)
	r.mu.Lock()
	r.ptyDone = make(chan struct{})
	done := r.ptyDone
	r.mu.Unlock()
	go func() {
		_, _ = io.Copy(pty, os.Stdin)
	}()
	go func() {
		defer close(done)
		buf := make([]byte, 32<<10)
		for {
			n, err := pty.Read(buf)
			if n > 0 {
				if _, werr := os.Stdout.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil { // EIO once every slave fd is closed
				return
			}
		}
	}()
	return func() {
		if err == nil {
			_ = term.Restore(0, old)
		}
	}
}
