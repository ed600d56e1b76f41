package agentcfg

import (
	"errors"
	"time"
)

// Event is one thing the guard did (or, for Action "left", saw).
type Event struct {
	Target Target
	// Keys: the protected keys put back; with Whole, one sentence why the
	// whole file was.
	Keys  []string
	Whole bool
	// Action: "restored" (keys or the whole file put back), "stripped"
	// (protected keys taken out of a file the agent created), "removed" (a
	// file that did not exist at start), "left" (found at the next start,
	// changed after the interrupted run had ended: not touched),
	// "readable" (Keys: the modes given back, "PATH: OLD -> NEW", where
	// the agent had taken the owner's read access away).
	Action string
	// Saved is the quarantine copy of the agent's version.
	Saved string
	// Recovered: found at start, left by a run whose supervisor was killed.
	Recovered bool
	// Retried: Recovered, but the run had ended: its last check could not
	// put the file back (its record was kept for this).
	Retried bool
	// Err: the guard could not do what it had to.
	Err error
}

// Options configure a Guard.
type Options struct {
	// Dir holds the records of running guards; Quarantine (Dir/quarantine
	// when empty) the agents' versions, under the run's id. Both must be out
	// of the sandbox's reach: a record says what the next start writes.
	Dir        string
	Quarantine string
	// ID is the sandbox's id: the record's and the quarantine's name.
	ID      string
	Context Context
	// Report is called for every event, from the watcher's goroutine while
	// the sandbox runs and from Close.
	Report func(Event)
	// MaxSize: larger files are not parsed (the snapshot comes back whole);
	// 0 means MaxSize.
	MaxSize int64
}

// MaxSize is the largest file the guard parses unless Options say
// otherwise.
const MaxSize = 64 << 20

// Unguarded is a target whose path holds, at start, what the guard cannot
// snapshot: not a regular file (a FIFO, a directory, a socket, a device),
// or one larger than MaxSize. New would leave it out, and the sandbox
// could put a file of its own there that outlives the run: the plan masks
// the path instead (package sandbox).
type Unguarded struct {
	Target Target
	// What is there, for the notice: "a FIFO", "larger than N bytes".
	What string
	// Dir: a directory is there (a mask over it must be one too).
	Dir bool
}

// Quiet and Late bound the wait for a writer that keeps the file open: the
// check runs Quiet after its last write, and never later than Late after its
// first.
const (
	Quiet = 50 * time.Millisecond
	Late  = 200 * time.Millisecond
	// Stale: a version that does not parse is put back only after it has
	// stayed unchanged this long (a writer may be half-way through), or
	// when the sandbox has ended.
	Stale = 2 * time.Second
)

// heartbeat is how often a running guard touches its record; the next
// start treats changes made long after the last touch as the user's.
const heartbeat = 5 * time.Second

// ErrUnguarded: New met a target it cannot guard.
var ErrUnguarded = errors.New("agent configuration jail cannot guard")

// ErrUnsupported is returned where the guard cannot run (not Linux).
var ErrUnsupported = errors.New("agentcfg: the configuration guard needs Linux")
