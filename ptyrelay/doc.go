// Package ptyrelay copies bytes between the user's terminal and the
// sandbox's own pty.
//
// Interactive (the user's stdin is a terminal too), it puts that terminal
// in raw mode and copies both ways: Ctrl-C, Ctrl-Z and the other keys reach
// the sandbox's line discipline as bytes, and nothing inside can reach the
// host terminal's ioctls. Otherwise it copies the pty's output only.
//
// A Relay can be drained (every byte the agent wrote is on the terminal)
// and give the terminal back (Restore) when the agent stops, and take it
// again (Raw) when the job is resumed. On the input side it watches for
// the kill key: Enter, then ~ and . (ssh's escape, which agents do not
// use), outside bracketed paste.
package ptyrelay
