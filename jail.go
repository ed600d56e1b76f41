// Package jail is the Go API of jail: start a sandbox from a policy value,
// run commands in it with their own stdio and context, stop or kill it
// with a reason, and read its audit trail. It is the surface jail's own CLI
// is built on (jail run -d, exec, stop, kill, inspect).
//
// A sandbox is run by a supervisor process: Start re-executes the calling
// program (/proc/self/exe) as that supervisor, so every program that calls
// Start must call Init first thing in main (and in TestMain), as runc's
// libcontainer and Docker's reexec packages ask:
//
//	func main() {
//		jail.Init() // returns at once unless this process is a sandbox's supervisor or init
//		...
//	}
//
// Build the program with CGO_ENABLED=0, as jail itself is: init drops its
// privileges on every thread with Go's AllThreadsSyscall, which cgo
// programs cannot use (Start then fails with a line saying so).
//
// A started sandbox lives until its main command ends, until Stop or Kill,
// or, unless Options.Detach, until the program that started it exits. A
// named sandbox (Options.Name) is reachable from other processes of the
// same user: Open, and jail's own CLI (jail ps, exec, attach, stop, kill):
// one registry, in $XDG_RUNTIME_DIR/jail (or the state directory when
// that is not private), lists the sandboxes of every program. Only that
// user can reach it: the control socket is 0600 in a 0700 directory, the
// supervisor checks the peer's uid and user namespace, and clients talk
// only to a socket their own uid serves.
//
// Commands run in the sandbox exactly as its main command does: the same
// namespaces, mounts, Landlock domain, seccomp filters, credentials,
// rlimits and cgroup, the same egress proxy and the same audit trail (one
// hash chain). Linux only; elsewhere every call returns ErrUnsupported.
package jail

import (
	"errors"
	"fmt"

	"github.com/jail-sandbox/jail/policy"
)

// ErrUnsupported is returned outside Linux.
var ErrUnsupported = errors.New("the sandbox needs Linux")

// RegistryHints, when a program sets it before it calls Init, lets the
// supervisor of a sandbox Start runs (a process of its own, handed the
// policy as data, in which a function does not pass) ask the question of
// policy.RegistryHints at its run's end: it is called there, once, with
// the policy the supervisor received, in the environment and directory of
// Start's caller, when the caller's policy had RegistryHints set. jail's
// command line sets it; nil: the supervisor names no profile for a refused
// registry.
var RegistryHints func(p *policy.Policy) func(tools []string) []policy.ProfileHint

// Options say how Start runs the sandbox.
type Options struct {
	// Name makes the sandbox a named session: unique among the user's
	// running sandboxes, reachable with Open and jail exec.
	Name string
	// Detach lets the sandbox outlive the program that started it (jail
	// run -d). Otherwise it is killed when that program exits.
	Detach bool
	// LogPath is where the supervisor's output goes: the main command's
	// stdout and stderr and jail's notices. Empty: a file in jail's
	// runtime directory (Info.Log; jail logs NAME), removed when the
	// sandbox ends if it has no Name.
	LogPath string
	// LogLimit bounds the log: it keeps the newest LogLimit bytes, in
	// LogPath and LogPath.1 (package sessionlog). 0: 4 MiB.
	LogLimit int64
	// Tty keeps a terminal for the main command (jail run -d -t): a pty of
	// the sandbox's own whose output goes to the log, and to the client of
	// Attach while one is attached. Needs a command.
	Tty bool
}

// ErrDetached is Terminal.CopyTo's end after Detach.
var ErrDetached = errors.New("detached")

// ErrTakenOver is Terminal.CopyTo's end when another client attached:
// one client at a time, the last one wins.
var ErrTakenOver = errors.New("another client attached to the terminal")

// ExitError is a command's unsuccessful end.
type ExitError struct {
	Code   int // the exit code: its own, 128+N for signal N, 126/127 when it could not be run
	Signal int // the signal that ended it, or 0
	// Err says why a command could not start (Code 125, 126 or 127).
	Err string
}

func (e *ExitError) Error() string {
	switch {
	case e.Err != "":
		return fmt.Sprintf("%s (exit %d)", e.Err, e.Code)
	case e.Signal != 0:
		return fmt.Sprintf("command killed by signal %d", e.Signal)
	}
	return fmt.Sprintf("command exited with code %d", e.Code)
}

// ExitCode is the code of err when it is an *ExitError, 0 for nil, and
// 125 (jail's own failure) for any other error.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return 125
}
