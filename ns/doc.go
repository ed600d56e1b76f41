// Package ns builds the sandbox's kernel view: it starts the sandbox's init (a
// re-exec of the jail binary, or the lean init program Config.Exe names, cloned
// into new user, mount, pid, net, ipc, uts and cgroup namespaces; on amd64 the
// lean init's own entry makes them and clones init, so that the supervisor is
// not forked: entry_linux.go), and, inside it, builds the mount tree, pivots into it, drops
// every privilege and starts the agent, staying behind as pid 1 (reaper, signal
// forwarder, exit reporter).
//
// Parent and init talk over a SOCK_SEQPACKET socketpair with small JSON messages;
// file descriptors travel with SCM_RIGHTS (see proto_linux.go). The supervisor
// side is Start; the init side is InitMain, reached through IsInit from main()
// before anything else runs.
//
// Kernel requirements: user namespaces (3.8; unprivileged use may be disabled by
// sysctl, see ErrUserNS), the new mount API open_tree/move_mount (5.2) and
// mount_setattr (5.12) for the recursive read-only view and, when started by root,
// idmapped writable mounts (5.12 for ext4/xfs/btrfs, 6.3 for tmpfs).
package ns
