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
//     Between "leaf" and "sibling", when Options.Scope is set (the sandbox
//     sets it for an ordinary user): ask for a delegated cgroup of our own,
//     check in /proc/self/cgroup that the process is really there, and use
//     it as for "leaf" ("scope"). The sandbox wires package userscope in: a
//     transient systemd user scope with Delegate=yes, asked for over the
//     user's D-Bus (containerd's cgroup2.NewSystemd talks to the system bus
//     only). Where the delegated subtree lacks only the cpu controller
//     (systemd before 252), memory and pids are enforced and --cpus is
//     reported as not, unless Options.Require. When the cgroup2 root itself
//     lacks a controller the limits need (a hybrid host), no group below it
//     can have it: only the scope is asked for.
//  2. cgroup v1 (memory, pids, cpu, cpuacct, freezer), as root on a legacy
//     or hybrid host. The runtime moves init in with Add before it lets init
//     go on. Kill is freeze, SIGKILL every pid, thaw, until empty.
//  3. none: rlimits only (see Rlimits), with a warning naming the weaker
//     limits. Options.Require turns this into an error wrapping ErrNoCgroup.
//
// Group directories are named jail-<supervisor pid>-<random>[-name] so that
// CleanupStale can remove the ones whose supervisor is dead.
//
// # Why not containerd/cgroups' managers
//
// The module is a dependency for one function, ParseCgroupFromReaderUnified
// (the caller's own groups from /proc/self/cgroup, read once per Open
// without Go's poller). Its cgroup2.Manager and
// cgroup1.New were weighed against what jail needs (checked at v3.1.3):
//
//   - Delegation. cgroup2.NewManager does MkdirAll of the group (creating
//     missing parents; jail makes exactly one directory, with mkdir, so a
//     planted or stale name is an error and nothing is made outside the
//     delegated subtree) and writes +controllers into cgroup.subtree_control
//     of every ancestor from the mount point. The "leaf" strategy needs the
//     opposite order: the supervisor first moves itself into a leaf child of
//     its own cgroup (the no-internal-processes rule makes enabling
//     controllers on a cgroup that holds a process fail with EBUSY), enables
//     the controllers there, and puts itself back if that fails. "sibling"
//     and the check that cgroup.procs of the common ancestor is writable
//     (the delegation containment rule, which also governs
//     CLONE_INTO_CGROUP) are jail's policy either way.
//   - CLONE_INTO_CGROUP. The agent is born in the group through a directory
//     fd passed to clone3; the Manager exposes neither the fd nor the path.
//   - Kill and delete. Manager.Kill writes cgroup.kill and returns at once,
//     its fallback waits only for its own children; jail waits until the
//     group is empty (killed tasks linger briefly) and then removes it with
//     retries. cgroup v1 has no kill file at all: jail freezes, SIGKILLs every
//     task, thaws, until empty. Neither package logs through jail's notices:
//     containerd/log writes warnings to stderr on its own.
//   - cgroup v1 per hierarchy. jail joins only the hierarchies a limit needs
//     (each costs a migration at start), nests under its own group in each
//     (so a CI runner's outer limit still applies), shares a directory for
//     co-mounted controllers (cpu,cpuacct), and writes memsw after the
//     memory limit. cgroup1.New takes OCI runtime-spec resources and acts on
//     every hierarchy of its list. And it has no way into a group but
//     writing a pid into cgroup.procs, which takes the kernel's global
//     threadgroup lock and waits for an RCU grace period (12-16 ms of every
//     start here): jail's init is born inside instead, cloned by a thread
//     that moved itself in through "tasks" and moves back out (JoinThread,
//     v1_linux.go), which skips that lock.
//   - Weight. Importing cgroup1 and cgroup2 links cilium/ebpf, godbus,
//     coreos/go-systemd, runtime-spec, protobuf and containerd/log into a
//     static binary that uses none of them.
//
// So the files are written here (v2_linux.go, v1_linux.go), and each is
// tested: on a fake tree for every strategy and failure (fake_linux_test.go),
// and on the real kernel where this host allows (real_linux_test.go). A
// hybrid host such as the project's test machine has no controllers in its
// cgroup2 hierarchy (memory, pids and cpu are bound to v1, and moving them is
// a machine-wide change); there the real v2 tests cover CLONE_INTO_CGROUP
// and cgroup.kill, and TestV2RealLimits (memory, pids, cpu) runs on unified
// hosts only.
//
// Only Linux is supported; on other systems Open returns ErrUnsupported.
package cgroup
