package ptyrelay

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/internal/ptytest"
)

// hungUp tells a terminal that is gone from one that is only quiet, and
// a relay whose terminal hangs up says so once, through OnHangup.
func TestHangup(t *testing.T) {
	m, s := ptytest.Open(t)
	if hungUp(s) {
		t.Fatal("a live terminal taken for hung up")
	}
	if hungUp(os.NewFile(^uintptr(0), "bad")) {
		t.Fatal("a bad descriptor taken for a hung-up terminal")
	}
	pm, ps := ptytest.Open(t) // the sandbox's pty
	said := make(chan struct{}, 2)
	r := &Relay{Pty: pm, In: s, Out: ps, OnHangup: func() { said <- struct{}{} }}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	m.Close()
	select {
	case <-said:
	case <-time.After(5 * time.Second):
		t.Fatal("no OnHangup after the terminal's master closed")
	}
	if !hungUp(s) {
		t.Fatal("a hung-up terminal not taken for one")
	}
}

// With no input relayed, the output's failing write says it, once.
func TestHangupOutputOnly(t *testing.T) {
	m, ps, _, said := startOutputOnly(t)
	m.Close()
	if _, err := ps.Write([]byte("the agent writes on\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-said:
	case <-time.After(5 * time.Second):
		t.Fatal("no OnHangup after the output's terminal hung up")
	}
}

// With no input relayed and an agent that writes nothing, the terminal's
// hangup is still said (a poll of the terminal for its hangup), once;
// a quiet live terminal is not taken for one, and the watch ends with
// the relay.
func TestHangupOutputOnlyQuiet(t *testing.T) {
	m, ps, r, said := startOutputOnly(t)
	select {
	case <-said:
		t.Fatal("OnHangup on a live, quiet terminal")
	case <-time.After(300 * time.Millisecond):
	}
	m.Close()
	select {
	case <-said:
	case <-time.After(5 * time.Second):
		t.Fatal("no OnHangup after the output's terminal hung up, the agent writing nothing")
	}
	ps.Close()
	select {
	case <-r.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the relay did not end with the agent's side")
	}
	select {
	case <-said:
		t.Fatal("OnHangup said twice")
	case <-time.After(100 * time.Millisecond):
	}
}

// The watch ends with the relay: a live terminal, the agent's side gone.
func TestHangupWatchEnds(t *testing.T) {
	_, s := ptytest.Open(t)
	pm, ps := ptytest.Open(t)
	before := runtime.NumGoroutine()
	r := &Relay{Pty: pm, Out: s, Term: s, OnHangup: func() {}}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	ps.Close()
	<-r.Done()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines after the relay ended, %d before: the hangup watch outlived it", n, before)
	}
}

// startOutputOnly starts a relay of output only whose terminal is a pty
// (m its master) and whose hangups are sent on said; ps is the sandbox's
// side, where the agent writes.
func startOutputOnly(t *testing.T) (m, ps *os.File, r *Relay, said chan struct{}) {
	t.Helper()
	m, s := ptytest.Open(t)
	pm, ps := ptytest.Open(t) // the sandbox's pty
	said = make(chan struct{}, 2)
	r = &Relay{Pty: pm, Out: s, Term: s, OnHangup: func() { said <- struct{}{} }}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	return m, ps, r, said
}

// failingWriter takes its first write and fails every later one.
type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.n++; w.n > 1 {
		return 0, errors.New("terminal refused")
	}
	return len(p), nil
}

// A terminal whose writes fail (not hung up): the agent is never stuck on
// a full pty, it writes on to its end, and Lost says what the terminal did
// not get and why. (Before: the relay stopped reading at the failure and the
// agent blocked once the pty filled.)
func TestWriteFailureLost(t *testing.T) {
	pm, ps := ptytest.Open(t)
	r := &Relay{Pty: pm, Out: &failingWriter{}}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() {
		if _, err := ps.Write([]byte("first\n")); err != nil {
			wrote <- err
			return
		}
		time.Sleep(50 * time.Millisecond) // the first write reaches Out alone
		line := bytes.Repeat([]byte("x"), 1023)
		for i := 0; i < 256; i++ { // 256 KiB: many times what a pty holds
			if _, err := ps.Write(append(line, '\n')); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- ps.Close()
	}()
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the agent's writes blocked: the relay stopped reading the pty")
	}
	select {
	case <-r.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the relay did not end with the pty")
	}
	n, err := r.Lost()
	if err == nil || n < 200<<10 {
		t.Fatalf("Lost = %d, %v: want the 256 KiB after the failure and its error", n, err)
	}
}
