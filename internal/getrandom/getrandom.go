// Package getrandom fills a buffer from the kernel's random pool with the
// getrandom system call itself. crypto/rand's first use in a process maps
// the state of the vDSO's getrandom and arms a one-minute warning timer:
// ~0.1 ms of every jail start, spent in the cgroup step on the way to
// init's clone (the cgroup's and the run's random names; issue 16). The
// bytes are the same kernel pool's: getrandom(2) with no flags blocks until
// the pool is initialised, as crypto/rand does; elsewhere (and on a kernel
// without getrandom, before 3.17) Read is crypto/rand's.
package getrandom
