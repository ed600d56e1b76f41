// Package dircache remembers, between runs, what a walk of the host's trees
// kept of each directory, so that a start reads again only the directories
// that changed since the last one: on an unchanged tree a start costs one
// lstat(2) per directory instead of a getdents(2) of every entry and a
// match of every name.
//
// A directory's record is keyed by its path and by the (device, inode,
// change time) of the directory at that path. Adding, removing or renaming
// an entry changes the directory's ctime, and so does any change to the
// directory's own inode (mode, owner, utimes). The ctime, not the mtime:
// utimes(2) sets the mtime to any value, so an agent that plants a file can
// put its directory's mtime back, but nobody can set a ctime (it is the
// clock's time at the change, and setting the clock needs CAP_SYS_TIME in
// the host's user namespace). A record whose ctime is within Margin of the
// moment it was read is not kept (a second change in the same clock tick
// could leave the ctime equal), and only file systems whose ctime behaves
// so are cached (ext2/3/4, xfs, btrfs, tmpfs, f2fs, zfs, bcachefs); every
// other directory is read each time.
//
// Records live in one file per view (a caller's walk: its rules and root)
// in a directory of jail's state directory, which no sandbox can see or
// write (package sandbox masks it). The cache fails closed: a file that is
// not a regular file owned by the user and writable by no one else, that is
// truncated, corrupt (a SHA-256 trailer covers it), of another view or
// larger than MaxFile is ignored and rebuilt; a cache directory owned by
// another user or writable by others turns the cache off (every directory
// is read). A lookup never skips a directory: a miss reads it.
//
// A view's file is loaded as a table, each record's directory and offset:
// a lookup finds a record by binary search and decodes that one (no object
// per record at load, where a new process pays for every fresh page).
//
// When a pass (a walk, then Save) first uses a view of PrefetchMin records
// or more, a few goroutines lstat its directories in parallel, in runs of
// the file's order, while the walk goes on (it waits for a run a goroutine
// has taken, and stats one none has itself); each such
// stat serves that view once, in that pass (the exit check never judges a
// directory by a stat taken before the agent ran). A directory that must be
// read is read with getdents(2) into a reused buffer, and only the entries
// kept become strings. Lookup answers without reading, so that a caller
// can skip its own per-directory work (fsrules' access check) on a hit.
//
// The caller's keep function chooses the entries kept of each directory; it
// must depend only on the view, the directory's path and the entry's name
// and type, so that a kept record equals what a fresh read would keep.
//
// Links keeps a directory's symlinks with their texts (package sandbox's
// program roots: the symlinks of the PATH directories, /etc/alternatives),
// under the same key and rules, in a view of its own. A symlink's text
// cannot be changed in place: retargeting one (ln -sf, a package manager's
// rename over it) removes or renames an entry of its directory, which
// changes the directory's ctime, so an unchanged key means unchanged texts.
// The texts are read with readlinkat(2) through a descriptor of the
// directory whose key is recorded, and a record is kept only when that key
// equals the one lstat(2) saw before the listing. Within one pass a
// directory's symlinks are listed or found unchanged once (Readlink of
// many of its links costs one lstat), and forgotten at Save.
//
// State and SetState keep a caller's own bytes from one run to the next
// (fsrules' records of the home's protected directories for its hard-link
// check), in a file of the same directory checked the same way; what the
// bytes mean, and when they may be trusted, is the caller's to argue.
// LookupKey gives a hit's whole key (its ctime says since when the
// directory is unchanged), Trusted whether a file system's ctimes are.
//
// It imports no other jail package, so the walkers' packages (fsrules,
// gitguard) may import it: their walk without a cache reads through
// Uncached.
package dircache
