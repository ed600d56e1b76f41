// Package memwatch measures and watches the memory a process tree holds,
// for a memory limit where no cgroup can enforce one (an ordinary user
// without a delegated cgroup v2 subtree).
//
// RLIMIT_AS, the only memory rlimit, caps address space per process: node,
// the JVM, Go and V8 reserve address space by the gigabyte and crash under
// it ("Failed to reserve virtual memory for CodeRange") long before they
// use that much memory. What a limit means to a user is the memory the
// sandbox holds: the proportional set size (PSS: shared pages split among
// their users, so forks are not counted twice) of every process of the
// tree, plus what its private tmpfs file systems hold. Watch samples that
// and reports an overrun; the caller kills. It is watched, not enforced by
// the kernel: an allocation faster than the sampling overshoots until the
// next sample. Samples come at least an interval apart and, while the tree
// grows towards the limit, down to a tenth of it.
package memwatch
