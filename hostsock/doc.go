// Package hostsock lists the paths of the Unix sockets bound in the calling
// process's network namespace, whatever their type and state (a socket bound
// but not yet listening may listen a moment later; a datagram server's
// socket shows as connected once a client connect(2)s it). The supervisor, in the host's namespace, masks those its sandbox would see:
// connect(2) and sendto(2) on a socket need no write access to its mount, and
// Landlock does not mediate them.
//
// It asks the kernel with sock_diag (NETLINK_SOCK_DIAG, unix_diag, Linux 3.3):
// about 0.07 ms with the ten sockets of this 2-core VM (0.3 ms at load 12);
// with 3,000 sockets in the namespace (a busy desktop) 1.4-1.6 ms at load 6-12, where reading /proc/net/unix, its fallback (no
// unix_diag), took 9.5 ms (BenchmarkBound). Filtered in the kernel to
// listening and unconnected sockets it took 0.25 ms, but missed a datagram
// server's socket once a client had connected to it (see Bound).
// The names are what other local users chose: the two parsers (parse.go)
// are pure, table-tested and fuzzed, and /proc/net/unix, which prints a
// name's newline as it is, is read in every way its text allows (parseProc).
// A socket bound by a relative name is looked for in the working
// directories /proc shows (placeRelative).
// What neither lists: sockets bound later, sockets bound in another network
// namespace (a container's) to a path the host shares, sockets bound by a
// relative name where no process shown works any more. On other systems
// Bound returns ErrUnsupported.
package hostsock

import "errors"

// ErrUnsupported is returned where the kernel has no such list.
var ErrUnsupported = errors.New("hostsock: unsupported on this system")
