package ptyrelay

import (
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/jail-sandbox/jail/internal/blockio"
)

// Relay is one running relay. Fields are set before Start.
type Relay struct {
	// Pty is the sandbox's pty master.
	Pty *os.File
	// In is the user's terminal input (stdin); nil relays output only.
	In *os.File
	// Out receives what the agent writes (the terminal filter).
	Out io.Writer
	// OnKillKey runs when the kill key is typed (then nothing more of that
	// read reaches the agent).
	OnKillKey func()
	// OnHangup runs once when the user's terminal is gone (a read of In
	// ends, or a write to Out fails, and the terminal answers no ioctl:
	// hung up). A process with no controlling terminal (started by su -c,
	// setsid, a runner's own session) gets no SIGHUP from the kernel
	// then: this is the only word of it.
	OnHangup func()
	// Term is the user's terminal Out writes to (nil: none), for
	// OnHangup: with no input relayed, its failing writes and a poll of
	// it for its hangup say the terminal is gone.
	Term *os.File

	hangup sync.Once

	// What the terminal did not get: the first write error that was not
	// a hangup's, and how many bytes of the agent's output went unshown
	// from then on (Lost).
	lostMu  sync.Mutex
	lostErr error
	lost    int64

	mu      sync.Mutex
	saved   *term.State // the terminal as it was before raw mode
	busy    atomic.Int32
	written atomic.Int64 // bytes of output the terminal took (Written)
	done    chan struct{}
	started bool
}

// Start makes the user's terminal raw (interactive relays) and starts the
// copies. It returns at once.
func (r *Relay) Start() error {
	r.mu.Lock()
	r.done = make(chan struct{})
	r.started = true
	r.mu.Unlock()
	if r.In != nil {
		if err := r.Raw(); err != nil {
			return err
		}
		go r.copyIn()
	} else if r.Term != nil && r.OnHangup != nil {
		// Output only: an agent that writes nothing makes no write to
		// fail, so the terminal is watched for its hangup itself.
		stop, err := r.watchHangup()
		if err != nil {
			return err
		}
		go func() { r.copyOut(); stop() }()
		return nil
	}
	go r.copyOut()
	return nil
}

// watchHangup polls the user's terminal for its hangup (a hung-up
// terminal's poll reports POLLHUP whatever was asked; a live one's
// reports nothing when asked for nothing, so the poll sleeps) until
// stop is called, and runs OnHangup once it is gone. A pipe wakes the
// poll at stop: the watch ends with the relay.
func (r *Relay) watchHangup() (stop func(), err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, err
	}
	rd, wr := p[0], p[1]
	term := int(r.Term.Fd())
	go func() {
		defer unix.Close(rd)
		fds := []unix.PollFd{{Fd: int32(term)}, {Fd: int32(rd), Events: unix.POLLIN}}
		for {
			fds[0].Revents, fds[1].Revents = 0, 0
			if _, err := unix.Poll(fds, -1); err != nil {
				if errors.Is(err, unix.EINTR) {
					continue
				}
				return
			}
			if fds[1].Revents != 0 {
				return // the relay ended
			}
			if fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
				if fds[0].Revents&unix.POLLNVAL == 0 {
					r.hungUpOn(r.Term)
				}
				return // gone or not pollable: nothing more to wait for
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { unix.Close(wr) }) }, nil
}

// Done is closed when the agent's side is closed (every slave fd is gone).
func (r *Relay) Done() <-chan struct{} { return r.done }

// Raw (again) puts the user's terminal in raw mode, remembering its
// current settings for Restore: after a stop, the shell may have changed
// them, and they are the ones to give back next time.
func (r *Relay) Raw() error {
	if r.In == nil {
		return nil
	}
	st, err := term.MakeRaw(int(r.In.Fd()))
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.saved = st
	r.mu.Unlock()
	return nil
}

// Restore gives the user's terminal its settings back (at exit and when
// the agent stops).
func (r *Relay) Restore() {
	r.mu.Lock()
	st := r.saved
	r.saved = nil
	r.mu.Unlock()
	if st != nil && r.In != nil {
		_ = term.Restore(int(r.In.Fd()), st)
	}
}

// Drain waits, at most max, until everything the agent wrote has been
// written to Out: nothing left to read on the pty and no write under way.
// Before the terminal is given back at a stop, the agent's last words
// (leaving the alternate screen, showing the cursor) must be on it.
func (r *Relay) Drain(max time.Duration) {
	DrainPty(r.Pty, func() bool { return r.busy.Load() != 0 }, max)
}

// DrainPty waits, at most max, until nothing is left to read on the pty
// whose master is f and busy says no write of what was read is under way,
// three times in a row 5 ms apart; at once when f cannot be asked.
func DrainPty(f *os.File, busy func() bool, max time.Duration) {
	deadline := time.Now().Add(max)
	quiet := 0
	for time.Now().Before(deadline) {
		n, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCINQ)
		if err != nil {
			return
		}
		if n == 0 && !busy() {
			if quiet++; quiet >= 3 {
				return
			}
		} else {
			quiet = 0
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (r *Relay) copyIn() {
	k := newKeyScanner()
	buf := make([]byte, 4096)
	// Reads wait out an O_NONBLOCK another process of the terminal sets
	// meanwhile (blockio): an EAGAIN is no end of the user's input.
	in := blockio.NewReader(r.In)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			p := buf[:n]
			if i := k.scan(p); i >= 0 && r.OnKillKey != nil {
				if i > 0 {
					_, _ = r.Pty.Write(p[:i])
				}
				r.OnKillKey()
				return
			}
			if _, werr := r.Pty.Write(p); werr != nil {
				return
			}
		}
		if err != nil {
			r.hungUpOn(r.In)
			return
		}
	}
}

// hungUpOn runs OnHangup (once) if the terminal f is gone.
func (r *Relay) hungUpOn(f *os.File) {
	if r.OnHangup != nil && f != nil && hungUp(f) {
		r.hangup.Do(r.OnHangup)
	}
}

// hungUp says whether the terminal f is gone: a hung-up terminal's reads
// return end of file and its ioctls fail with EIO. (An end of file typed in
// cooked mode, or a read refused to a background job, leaves TCGETS
// working.)
func hungUp(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return errors.Is(err, unix.EIO)
}

func (r *Relay) copyOut() {
	defer close(r.done)
	buf := make([]byte, 32<<10)
	failed := false
	for {
		n, err := r.Pty.Read(buf)
		if n > 0 && failed {
			r.addLost(nil, n)
		} else if n > 0 {
			r.busy.Store(1) // read from the pty, not yet on the terminal
			werr := r.writeOut(buf[:n])
			r.busy.Store(0)
			if werr != nil {
				// The terminal takes no more (hung up: the run's SIGHUP;
				// else the end's summary says what was lost). The pty is
				// still read to its end, so that the agent is never stuck
				// on a full pty: it ends, or gets its SIGHUP, as it would.
				r.hungUpOn(r.Term)
				failed = true
				r.addLost(werr, n)
			}
		}
		if err != nil { // EIO once every slave fd is closed
			return
		}
	}
}

// outPiece is the most the relay writes to the terminal at once: a slow
// terminal's progress shows in Written a piece at a time (the run's end
// waits on it), not only once a whole read of the pty is on it.
const outPiece = 4 << 10

// writeOut writes p to Out in pieces of outPiece, counting each.
func (r *Relay) writeOut(p []byte) error {
	for len(p) > 0 {
		k := min(len(p), outPiece)
		if _, err := r.Out.Write(p[:k]); err != nil {
			return err
		}
		r.written.Add(int64(k))
		p = p[k:]
	}
	return nil
}

// Written says how many bytes of the agent's output the terminal has taken
// so far: the run's end watches it for progress (a relay still writing is
// waited for; one the terminal takes nothing from is not, for ever).
func (r *Relay) Written() int64 { return r.written.Load() }

// Pending says how many bytes of the agent's output wait in the pty, not
// yet read by the relay (-1: unknown).
func (r *Relay) Pending() int {
	n, err := unix.IoctlGetInt(int(r.Pty.Fd()), unix.TIOCINQ)
	if err != nil {
		return -1
	}
	return n
}

func (r *Relay) addLost(err error, n int) {
	r.lostMu.Lock()
	defer r.lostMu.Unlock()
	if r.lostErr == nil && err != nil {
		r.lostErr = err
	}
	r.lost += int64(n)
}

// Lost says how many bytes of the agent's output the terminal did not get
// since a write to it failed (err), or 0 and nil. (A write that failed
// part-way counts whole.)
func (r *Relay) Lost() (int64, error) {
	r.lostMu.Lock()
	defer r.lostMu.Unlock()
	return r.lost, r.lostErr
}
