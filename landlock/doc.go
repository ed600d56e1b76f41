// Package landlock is jail's second filesystem wall: it turns the sandbox's
// read/exec, read-only and read-write path lists into a Landlock ruleset
// (github.com/landlock-lsm/go-landlock) and enforces it on the calling process
// and all of its threads. Everything the process later starts inherits it.
//
// The mount tree (package ns) decides what exists; Landlock independently
// decides what may be read, written and executed, by inode, so a mistake in one
// wall is caught by the other. Landlock can only grant, never deny inside a
// granted tree: denials inside writable places are made by mounts (fsrules).
//
// # Kernel versions (Landlock ABI)
//
//	ABI 1  Linux 5.13  filesystem basics: read, write, exec, readdir, make*, remove*.
//	                   Renaming or linking a file to another directory is always
//	                   denied (EXDEV).
//	ABI 2  Linux 5.19  REFER: cross-directory rename/link, allowed only when the
//	                   file gains no rights by moving.
//	ABI 3  Linux 6.2   TRUNCATE: truncate(2), ftruncate(2), O_TRUNC.
//	ABI 4  Linux 6.7   TCP bind(2)/connect(2) (used when the network is "none").
//	ABI 5  Linux 6.10  IOCTL_DEV: ioctl(2) on character/block devices; terminals
//	                   need it granted explicitly (Rules.DevIoctl).
//	ABI 6  Linux 6.12  scoping: abstract Unix sockets and signals cannot reach
//	                   processes outside the domain. (Older 6.12 builds have a
//	                   signal-scoping bug; without errata fix 2 ABI 5 is used.)
//	ABI 7  Linux 6.15  audit logging of denials (not used: jail has its own trail).
//	ABI 8+             thread sync and UDP/pathname-socket rights; used when the
//	                   kernel and go-landlock offer them (UDP is never handled:
//	                   the proxy's DNS must keep working).
//
// Apply always uses the highest ABI the kernel offers, builds the ruleset for
// exactly that ABI (never go-landlock's BestEffort, which silently enforces
// nothing when one rule needs a newer ABI), and reports every feature that was
// asked for but not enforced in Report.Missing. It is never a silent no-op:
// either Report.Enforced is true, or Missing says why, or an error is returned.
//
// Landlock does not cover chmod, chown, utime, xattrs, stat, flock or
// non-device ioctl: those are stopped on read-only paths by the read-only
// mounts, not by this package.
//
// Denials surface as EACCES (EPERM for scoped signals and sockets, EXDEV for a
// rename that would give a file more rights); a read-only mount denies with
// EROFS. Tests use the difference to tell which wall stopped an attack.
package landlock
