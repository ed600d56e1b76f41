package main

import "golang.org/x/sys/unix"

// noOutputProcessing clears OPOST on the terminal fd and returns how to
// restore it.
func noOutputProcessing(fd int) func() {
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return func() {}
	}
	saved := *t
	t.Oflag &^= unix.OPOST
	if unix.IoctlSetTermios(fd, unix.TCSETS, t) != nil {
		return func() {}
	}
	return func() { _ = unix.IoctlSetTermios(fd, unix.TCSETS, &saved) }
}
