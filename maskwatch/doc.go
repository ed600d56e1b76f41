// Package maskwatch says when the host takes one of the sandbox's masks
// away.
//
// The sandbox's masks (an empty file or directory over a secret, a
// read-only bind over git's config, a pin holding a protected path, an
// empty file over a host Unix socket) are mounts on the host's dentries.
// The agent cannot remove or rename them (a mountpoint in its namespace:
// EBUSY), but the host can: when a host process deletes such a path or
// renames something over it (an editor's atomic save of the workspace's
// .env, `git config` rewriting .git/config, a daemon binding its socket
// again), the kernel detaches the mounts on that dentry in every mount
// namespace, and the sandbox sees the new file at that path. A rename of
// the path itself takes the mount along to the new name and leaves the
// old one to whatever is put there next. No process in the sandbox keeps
// the capability to mount the mask again (init drops every capability
// before the agent starts), and the supervisor cannot join the sandbox's
// mount namespace (a Go process is multithreaded): what is left is to say
// it at once.
//
// Each path's identity is taken before init mounts over it (Identify,
// Config.Before): the watch is armed while init mounts, and a file the host
// puts at the path in between is compared with what was masked, not taken
// for it.
//
// It watches the parent directory of every such path with inotify for the
// path's name being deleted, renamed away or renamed over, and reports
// each path once (its first such event; later ones change nothing: the
// mask is gone). A mask's path deleted or renamed away is reported only
// when something is put there next (until then nothing is shown). When the event queue overflows it compares each path's
// inode and birth time with the ones seen at start instead (a file made
// again often gets the freed inode number back; a path deleted and
// hard-linked back is then missed), and reports a path it cannot look at
// (the agent can make its workspace's directories unsearchable by the
// supervisor's uid while it floods the queue).
package maskwatch

import "time"

// Path is one path covered by a mount of the sandbox.
type Path struct {
	Path string // absolute, symlink-free, on the host
	Kind string // what covers it: "mask", "read-only", "pin"
	Rule string // why it is covered
	// Hides: the mount hides what is there (a mask), so the path's
	// deletion or rename away shows nothing; only a file put there next
	// is reported. Otherwise (a read-only bind, a pin) the loss itself is
	// (the sandbox can then write there).
	Hides bool
}

// Fall is a path whose mount the host took away.
type Fall struct {
	Time time.Time
	Path
	// How: "deleted", "renamed away", "renamed over", "renamed in after
	// its removal", "created after its removal", "replaced" (after an
	// overflow: another inode, or, for a mount that does not hide, none).
	How string
}

// Config configures a Watch.
type Config struct {
	Paths []Path
	// Before, when set, holds the paths' identities taken before init
	// mounted over them (Identify): the watch compares with those, not
	// with what is there when it is armed, which may already be a file
	// the host put there after init's mount (the mask then gone). A path
	// Before could not look at is left out, as Start leaves out one it
	// cannot look at itself.
	Before *Before
	// Fell is called once per fallen path, from the watch's goroutine.
	Fell func(Fall)
}

// Unwatched is a covered path left out: its directory could not be
// watched.
type Unwatched struct {
	Path Path
	Err  error
}
