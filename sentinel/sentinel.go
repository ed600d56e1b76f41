// Package sentinel watches the writable trees of a running sandbox for
// paths that must not appear there, and moves what appears out of the tree
// into a quarantine directory, so that nothing the agent plants stays where
// the user's own tools (git in an IDE, the next shell) would load it.
//
// It knows no rules of its own: the supervisor gives it absent paths (each
// must not appear; if it does, the whole entry leaves) and observed
// directories with a judge (Inspect) that says what in them must leave or be
// replaced. It watches with inotify: each absent path through its nearest
// existing ancestor, each observed directory itself, re-arming when
// directories appear, move or vanish and rescanning everything when the
// event queue overflows. The same judgement runs at exit (Check) and, for a
// supervisor that was killed, at the next start.
//
// Moving is done without following any symlink the agent could have
// planted: the parent is opened with openat2(RESOLVE_BENEATH|
// RESOLVE_NO_SYMLINKS) from the writable root, the entry is first renamed
// to a neutral name in the same directory (from that moment git ignores
// it), then copied into the quarantine and removed. A file with a
// replacement (a config cut down to its harmless keys) gets it with
// RENAME_NOREPLACE, so nothing newer is overwritten. Each move is one line
// of manifest.jsonl in the quarantine directory.
//
// What it cannot do: an appearance is visible to other processes until the
// sentinel has handled its inotify event (typically well under a
// millisecond, longer on a loaded machine), and a directory deeper than the
// watched ones is seen only by the exit check.
package sentinel

import (
	"time"
)

// Absent is a path that did not exist at start and must not appear.
type Absent struct {
	Path string `json:"path"`
	Dir  bool   `json:"dir,omitempty"`
	Rule string `json:"rule"`
	Why  string `json:"why,omitempty"`
}

// Glob is a directory where a new name matching a pattern must not
// appear: the names there at start (Had) stay, any other that matches
// leaves as an absent path's would.
type Glob struct {
	Dir string `json:"dir"`
	// Pattern is a path.Match pattern of one name, ASCII-lowered: names
	// are lowered before they are matched.
	Pattern string `json:"pattern"`
	// Had are the names in Dir matching Pattern at start (see List).
	Had  []string `json:"had,omitempty"`
	Rule string   `json:"rule"`
	Why  string   `json:"why,omitempty"`
}

// Item is one path to move out of the tree.
type Item struct {
	Path   string
	Rule   string
	Reason string
	// Replace, when set, gets the captured content of a regular file and
	// returns what to put in its place; changed false puts the original
	// back (it turned out harmless).
	Replace func(captured []byte) (out []byte, changed bool)
	// ReportOnly items are reported, not moved.
	ReportOnly bool
	// Before, when set, limits the move to entries whose change time is not
	// after it: later changes may be the user's own (used after a crash,
	// when the run's end is known only roughly). Others are reported.
	Before time.Time
}

// Event is what happened to one Item. It is also the manifest line.
type Event struct {
	Time   time.Time `json:"time"`
	Phase  string    `json:"phase"` // "run", "exit" or "leftover"
	Path   string    `json:"path"`
	Rule   string    `json:"rule"`
	Reason string    `json:"reason"`
	// Stored is where the entry is now, inside the quarantine directory.
	Stored string `json:"stored,omitempty"`
	// Left is set when it could not be copied (budget, no state directory):
	// it was renamed in place to this neutral name instead.
	Left string `json:"left,omitempty"`
	// Replaced: a harmless version took its place.
	Replaced   bool   `json:"replaced,omitempty"`
	ReportOnly bool   `json:"report_only,omitempty"`
	Kind       string `json:"kind,omitempty"` // "file", "dir", "symlink", "other"
	Bytes      int64  `json:"bytes,omitempty"`
	Entries    int    `json:"entries,omitempty"`
	Error      string `json:"error,omitempty"`
}

// Config configures a Sentinel.
type Config struct {
	// Dir is this run's quarantine directory (created 0700 when first
	// needed; its parent should be private to the user).
	Dir string
	// Roots are the writable roots: every path handled lies under one.
	Roots []string
	// Absent paths must not appear.
	Absent []Absent
	// Globs are directories where no new name matching a pattern may
	// appear.
	Globs []Glob
	// Observe are directories whose changes are judged by Inspect.
	Observe []string
	// Inspect judges an observed directory after a change; names are the
	// entries that changed (nil: everything). It returns what must leave
	// and directories to observe from now on.
	Inspect func(dir string, names []string) (items []Item, observe []string)
	// Notify is called for every Event, from the sentinel's goroutine
	// while it runs.
	Notify func(Event)
	// MaxWatches bounds the inotify watches (0: 8192).
	MaxWatches int
	// Budget bounds the bytes copied into the quarantine (0: 64 MiB) and
	// MaxEntries the entries (0: 10,000); beyond, entries are neutralized
	// in place.
	Budget     int64
	MaxEntries int
	// Before, when set, applies to every item without a Before of its own
	// (the check of a run whose supervisor was killed).
	Before time.Time
}

// AsidePrefix starts the name an entry gets when it is renamed aside in its
// own directory until it is copied into the quarantine: a name git never
// looks at (hooks, config and .git are exact names). Entries with it are
// the sentinel's own: never judged nor moved again.
const AsidePrefix = ".jail-quarantine-"
