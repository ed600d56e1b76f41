// Package cgroup puts the sandbox under resource limits and gives the
// supervisor a kill switch that reaches every process of the sandbox.
//
// It owns one job: turn a Limits value (memory, cpus, pids, open files, file
// size) into kernel enforcement, report which enforcement is in force, and
// later kill, observe (OOM and pids-limit events, cpu, peak memory) and remove
// the group. Open picks, in order:
//
//  1. cgroup v2, when a writable (delegated) subtree with the memory, pids and
//     cpu controllers exists: our own cgroup when we are its only process
//     ("leaf": the supervisor moves itself into a leaf child, then enables the
//     controllers), else a sibling under our parent when that parent is
//     writable and has the controllers ("sibling"), else, as root, a group
//     under the cgroup2 root ("root"). The agent is started straight into the
//     group with clone3(CLONE_INTO_CGROUP) through FD (kernel >= 5.7); Kill
//     writes cgroup.kill (kernel >= 5.14; freeze+SIGKILL before that).
//     memory.peak needs 5.19, pids.peak 6.1; both read as 0 when absent.
//     A transient systemd user scope (Delegate=yes over the user's D-Bus)
//     is NOT created by jail itself: containerd's cgroup2.NewSystemd talks
//     to the system bus only, and hand-written D-Bus calls could not be
//     tested on a host without systemd. The user gets the same result with
//     `systemd-run --user --scope -p Delegate=yes jail ...`: jail is then
//     alone in a delegated scope and the "leaf" strategy applies.
//  2. cgroup v1 (memory, pids, cpu, cpuacct, freezer), as root on a legacy
//     or hybrid host. The runtime moves init in with Add before it lets init
//     go on. Kill is freeze, SIGKILL every pid, thaw, until empty.
//  3. none: rlimits only (see Rlimits), with a warning naming the weaker
//     limits. Options.Require turns this into an error wrapping ErrNoCgroup.
//
// Group directories are named jail-<supervisor pid>-<random>[-name] so that
// CleanupStale can remove the ones whose supervisor is dead.
//
// Only Linux is supported; on other systems Open returns ErrUnsupported.
package cgroup
