package seccomp

// ExecEvent is one execve/execveat seen by Serve, reported before the
// kernel is told to go on (so the record precedes the exec).
type ExecEvent struct {
	Pid     int      // in the supervisor's pid namespace
	Path    string   // as passed; made absolute against cwd or dirfd when possible
	Argv    []string // as read from the process's memory (may be truncated: see Err)
	Cwd     string
	Allowed bool   // false: refused with EPERM, or the process vanished
	Rule    string // the Guard rule that refused it
	Err     string // what could not be read ("" when all went well)
	// Refuse, set by Serve's onExec, answers the exec EPERM though the
	// guard allows it (sandbox: a jail exec command whose request was
	// given up must not start late).
	Refuse bool
}
