package ptyrelay

import (
	"os"
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
	m, s := ptytest.Open(t)
	pm, ps := ptytest.Open(t) // the sandbox's pty
	said := make(chan struct{}, 2)
	r := &Relay{Pty: pm, Out: s, Term: s, OnHangup: func() { said <- struct{}{} }}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
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
