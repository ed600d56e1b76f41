package ptyrelay

import "io"

// This file: the stop key (Ctrl-Z) of a command that leads its pty's
// session. jail exec -t gives the command a pty of the sandbox's own, of
// which it leads the session (setsid, the pty its controlling terminal).
// A session leader's process group has no parent in its session (the
// command's parent, init, is in another one): it is orphaned, and Linux
// discards SIGTSTP's default action in an orphaned group, whoever sent it
// (POSIX: such a group must not be stopped by the terminal's stop keys),
// the SIGTSTP the pty's line discipline makes of the user's Ctrl-Z
// included. With -i the user's terminal is raw and the key is a byte for
// that line discipline: it did nothing (seen in session 46). Where the
// command takes SIGTSTP's default action, jail exec takes the key and
// stops the command with itself. A job-control shell inside puts each job
// in a group of its own, whose parent (the shell) is in the session: there
// the key stops the job, as it should; and a command that ignores SIGTSTP
// (a shell at its prompt) or catches it gets the key as it would outside.

// StopKeys are the pty's settings the line discipline reads a byte with.
type StopKeys struct {
	Susp    byte // the suspend character (c_cc[VSUSP]); 0 (_POSIX_VDISABLE): none
	Lnext   byte // the literal-next character (c_cc[VLNEXT]) when IEXTEN is on, else 0
	Signals bool // ISIG: the suspend character makes a SIGTSTP
}

// StopPty is what StopKeyReader asks of the pty, at each read.
type StopPty interface {
	// Keys reads the pty's settings (TCGETS on its master).
	Keys() StopKeys
	// Discarded tells whether the SIGTSTP of a Ctrl-Z would be
	// discarded: the pty's foreground process group leads its session
	// (TIOCGPGRP equals TIOCGSID), and its leader takes SIGTSTP's default
	// action (it neither ignores nor catches it).
	Discarded() bool
}

// stopScanner finds the suspend character in the input stream, as the
// line discipline would take it: not right after the literal-next
// character (Ctrl-V Ctrl-Z types a ^Z), which quotes one byte, across
// reads.
type stopScanner struct {
	quoted bool // the previous byte was the literal-next character
}

// scan returns the index of the first byte of p that the line discipline
// would take as the suspend character under k, or -1.
func (s *stopScanner) scan(p []byte, k StopKeys) int {
	for i, c := range p {
		switch {
		case s.quoted:
			s.quoted = false
		case k.Lnext != 0 && c == k.Lnext:
			s.quoted = true
		case k.Signals && k.Susp != 0 && c == k.Susp:
			return i
		}
	}
	return -1
}

// StopKeyReader reads r and withholds each suspend character whose
// SIGTSTP the kernel would discard (pty.Discarded): for each it calls
// stop, which stops the command (and the caller, as a shell's job) and
// returns once the job is continued, or returns false to have the byte
// passed on as it is. The bytes before the key are passed on before stop
// is called, those after it once stop has returned. A read costs one
// ioctl (the pty's settings); one holding the key while the pty makes
// signals of it, two more and a read of the leader's /proc status.
func StopKeyReader(r io.Reader, pty StopPty, stop func() bool) io.Reader {
	return &stopKeyReader{r: r, pty: pty, stop: stop}
}

type stopKeyReader struct {
	r       io.Reader
	pty     StopPty
	stop    func() bool
	scanner stopScanner
	pending []byte // read, not yet passed on: what followed a withheld key
	key     byte   // the withheld key, passed on when stop returns false
	stopNow bool   // the bytes before the key were passed: stop next
	err     error  // the read's error, returned once pending is passed on
}

func (s *stopKeyReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if s.stopNow {
			s.stopNow = false
			if !s.stop() {
				// Not stopped: the key goes on as it is, not scanned again.
				p[0] = s.key
				return 1, nil
			}
		}
		var n int
		var err error
		switch {
		case len(s.pending) > 0:
			n = copy(p, s.pending)
			s.pending = s.pending[n:]
		case s.err != nil:
			return 0, s.err
		default:
			if n, err = s.r.Read(p); n == 0 {
				return 0, err
			}
		}
		i := s.find(p[:n])
		if i < 0 {
			return n, err
		}
		s.key = p[i]
		s.pending = append(append([]byte(nil), p[i+1:n]...), s.pending...)
		s.stopNow, s.err = true, err
		if i > 0 {
			return i, nil
		}
	}
}

// find is the index of the key in p to withhold, or -1.
func (s *stopKeyReader) find(p []byte) int {
	k := s.pty.Keys()
	for off := 0; off < len(p); {
		i := s.scanner.scan(p[off:], k)
		if i < 0 {
			return -1
		}
		if s.pty.Discarded() {
			return off + i
		}
		off += i + 1 // the line discipline's: its SIGTSTP reaches a job
	}
	return -1
}
