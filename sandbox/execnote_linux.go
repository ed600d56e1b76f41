package sandbox

import (
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/execnote"
	"github.com/jail-sandbox/jail/policy"
)

// This file: a notice when the sandbox runs a program that cannot do its
// job there by design (package execnote): sudo and its kin, a system
// package manager asked to change the system, docker, ping, a tracer
// without --allow-ptrace, perf. One line a
// program a run,
// before the program's own output (the exec waits for its answer), says
// why and what to do instead.

// noticeCannotWork groups those notices.
const noticeCannotWork = "cannot-work"

// sayCannotWork says execnote's line for a program the sandbox executes, when
// what the line rests on holds as the sandbox sees it, read through the
// waiting process's own root: the file set-user-ID (a sudo shim that runs
// the command itself works, and is not named), the system on a read-only
// mount (a user may have made it writable), the daemon's socket on the
// host and hidden inside, a network namespace of the sandbox's own.
func (r *runner) sayCannotWork(pid int, path string, argv []string) {
	n, ok := execnote.For(path, argv)
	if !ok || !filepath.IsAbs(path) {
		return
	}
	// The paths below are the sandbox's, walked from its root; an absolute
	// symlink the agent made among them resolves from the host's root
	// instead (a walk through /proc/PID/root keeps the walker's own). Only
	// whether a line is said rests on the answer, and nothing of it
	// reaches the sandbox: a stat, never an open.
	root := "/proc/" + strconv.Itoa(pid) + "/root"
	if n.NeedsSetID {
		var st unix.Stat_t
		if err := unix.Stat(root+path, &st); err != nil || st.Mode&unix.S_ISUID == 0 {
			return
		}
	}
	if n.NeedsReadOnly != "" {
		var fs unix.Statfs_t
		if err := unix.Statfs(root+n.NeedsReadOnly, &fs); err != nil || fs.Flags&unix.ST_RDONLY == 0 {
			return
		}
	}
	if n.NeedsOwnNet && r.pol.Net == policy.NetHost {
		return
	}
	if n.NeedsPtraceDenied && r.pol.AllowPtrace || n.NeedsBuiltinSeccomp && r.pol.SeccompReplace {
		return
	}
	if len(n.NeedsHostSocket) > 0 && !hostSocketHidden(root, n.NeedsHostSocket, r.planEnv(), n.UnlessEnv) {
		return
	}
	r.notice(noticeCannotWork, n.Key, n.Text)
}

// hostSocketHidden reports whether one of paths is a socket on the host
// (this process's view; $XDG_RUNTIME_DIR as its environment has it) that
// the sandbox does not see at the same path (root is its root), and the
// sandbox's environment does not set unless (DOCKER_HOST: the CLI goes
// elsewhere).
func hostSocketHidden(root string, paths, env []string, unless string) bool {
	if unless != "" && lookupEnv(env, unless) != "" {
		return false
	}
	for _, p := range paths {
		p = os.ExpandEnv(p)
		if !filepath.IsAbs(p) || !isSocket(p) {
			continue
		}
		if !isSocket(root + p) {
			return true
		}
	}
	return false
}

func isSocket(path string) bool {
	var st unix.Stat_t
	return unix.Stat(path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFSOCK
}

// planEnv is the sandbox's environment (nil before the plan).
func (r *runner) planEnv() []string {
	if r.plan == nil {
		return nil
	}
	return r.plan.Env
}
