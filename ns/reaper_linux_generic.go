//go:build linux && !amd64 && !arm64

package ns

import "syscall"

// forkExecReaper is forkExec where jail has no vfork clone of its own
// (reaper_linux_amd64.s, reaper_linux_arm64.s): the command is not its own
// child subreaper there, and a kill of it without a cgroup misses what it
// double-forked (proctree's limit, README).
func forkExecReaper(path string, argv []string, attr *syscall.ProcAttr) (int, error) {
	return forkExec(path, argv, attr)
}
