// Package ucount bounds the per-user kernel counters a sandbox can use,
// so that the user who started it keeps its own.
//
// The kernel counts some resources per user, and a user namespace charges
// each count to its owner as well (kernel/ucount.c: inc_ucount and
// inc_rlimit_ucounts walk up the namespace chain): the sandbox's uids are
// charged in the sandbox's user namespace and again to the invoking user
// on the host, or to root when root started jail. Without a bound an agent
// can exhaust the host user's inotify instances, and every editor, file
// watcher and desktop service of that user fails while it runs.
//
// Two kinds of counter, two kinds of bound (Plan computes both, from the
// host's values, as data; the supervisor ships them to init):
//
//   - User namespace limits (/proc/sys/user/max_*: inotify instances and
//     watches, fanotify groups and marks, and each namespace type). They
//     are per user namespace and checked at every level of the chain, so
//     init writes its own namespace's values before it drops
//     CAP_SYS_RESOURCE; the agent can never raise them. Each gets a
//     quarter of the host's limit (namespaces too: seccomp refuses new
//     ones anyway, and a user who lifts that with --seccomp-replace still
//     cannot exhaust the host user's count).
//   - Rlimit-backed counters (RLIMIT_SIGPENDING, RLIMIT_MSGQUEUE,
//     RLIMIT_MEMLOCK). Their parent levels are checked against the limits
//     the supervisor had when it created the namespace, so the host user
//     could be starved; init sets soft and hard limits to a quarter of the
//     supervisor's. RLIMIT_NPROC is not here: --pids bounds it (pids.max,
//     or RLIMIT_NPROC without a cgroup; package cgroup).
//
// A quarter leaves the host user at least half of each limit with two
// sandboxes running, and is far above what agents use (a Node or Go
// process opens one or two inotify instances).
package ucount
