package ns

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// This file: the descriptors init inherited.

// closeInherited closes every descriptor >= from that init did not make
// itself, so that nothing the supervisor's parent leaked reaches the agent
// (the CVE-2024-21626 class: a host directory's fd in the sandbox).
//
// The Go runtime's poller is init's own and stays: package os registers
// stdin, stdout and stderr with it when one of them is non-blocking at
// exec (a terminal a crashed Node program left O_NONBLOCK, a Python
// asyncio parent's own stdout after connect_write_pipe, any event loop's
// shared description), which makes its epoll instance and
// eventfd before InitMain runs; closed under it, init died at its next
// poll ("fatal error: runtime: netpoll failed") and the run with it.
// Kept is only what this process made after its exec: a descriptor with
// FD_CLOEXEC set (one inherited through an exec never has it) that is an
// epoll instance or an eventfd, which open nothing of the host's.
func closeInherited(from int) {
	closeFD := func(fd int) { unix.Close(fd) }
	keep, ok := runtimeFDs(from)
	if !ok {
		// No /proc to ask (init runs before it mounts its own): close
		// everything, as before; a poller closed under the runtime is then
		// a crash, never a leak.
		rangeFDs(from, -1, 0, closeFD)
		return
	}
	lo := from
	for _, fd := range keep { // ascending
		if fd > lo {
			rangeFDs(lo, fd-1, 0, closeFD)
		}
		lo = fd + 1
	}
	rangeFDs(lo, -1, 0, closeFD)
}

// CloexecFrom marks every fd >= from close-on-exec, for the supervisor: what
// jail inherited from its parent must not reach any child it starts.
func CloexecFrom(from int) {
	rangeFDs(from, -1, unix.CLOSE_RANGE_CLOEXEC, func(fd int) { unix.CloseOnExec(fd) })
}

// rangeFDs applies close_range(lo, hi, flags) (hi -1: every fd from lo), or,
// on kernels without it (before 5.9, or 5.11 for CLOSE_RANGE_CLOEXEC), each
// to every open fd in that range, as /proc lists them.
func rangeFDs(lo, hi int, flags uint, each func(fd int)) {
	last := ^uint(0)
	if hi >= 0 {
		last = uint(hi)
	}
	if err := unix.CloseRange(uint(lo), last, flags); err == nil {
		return
	}
	fds, _ := listFDs()
	for _, fd := range fds {
		if fd >= lo && (hi < 0 || fd <= hi) {
			each(fd)
		}
	}
}

// runtimeFDs lists, ascending, the descriptors >= from that are the Go
// runtime's poller (closeInherited); ok is false when /proc/self/fd cannot
// be read.
func runtimeFDs(from int) (fds []int, ok bool) {
	open, err := listFDs()
	if err != nil {
		return nil, false
	}
	for _, fd := range open {
		if fd < from {
			continue
		}
		// FD_CLOEXEC first: an inherited descriptor never has it here.
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || fl&unix.FD_CLOEXEC == 0 {
			continue
		}
		var buf [32]byte
		n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf[:])
		if err != nil {
			continue
		}
		switch string(buf[:n]) {
		case "anon_inode:[eventpoll]", "anon_inode:[eventfd]":
			fds = append(fds, fd)
		}
	}
	return fds, true
}

// listFDs lists this process's open descriptors, ascending, by bare
// syscalls (an *os.File would start the poller closeInherited is careful
// of). The listing's own descriptor is not among them.
func listFDs() ([]int, error) {
	dir, err := unix.Open("/proc/self/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dir)
	var fds []int
	buf := make([]byte, 4096)
	for {
		n, err := unix.Getdents(dir, buf)
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			break
		}
		var names []string
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
		for _, name := range names {
			if fd, err := strconv.Atoi(name); err == nil && fd != dir {
				fds = append(fds, fd) // the kernel lists them ascending
			}
		}
	}
	return fds, nil
}
