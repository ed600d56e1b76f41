// Package rtstart stamps when the lean init's Go runtime has started: its
// one variable is set by the first package initializer the program runs
// after the runtime's own (a package without imports, which Go's
// initialization order takes as soon as the runtime is up), so that
// JAIL_TRACE can split init's start into the Go runtime's part (exec or
// clone, the prefault, schedinit, runtime.main up to the package inits)
// and its package inits, which end at init's main. Measurement only:
// nothing depends on the value.
package rtstart

// Mono is CLOCK_MONOTONIC in nanoseconds (the clock of ns.MonotonicNS) when
// this package was initialized, or 0 where it is not read (not linux/amd64).
var Mono = now()
