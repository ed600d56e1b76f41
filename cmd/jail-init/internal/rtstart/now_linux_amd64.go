package rtstart

// now is CLOCK_MONOTONIC in nanoseconds, by one clock_gettime system call
// (now_linux_amd64.s): without imports, so that this package is initialized
// before any other of the program's (time's and x/sys's packages come after
// their own dependencies' inits); 0 if the call fails.
func now() int64
