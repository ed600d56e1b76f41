// Package fsrules decides what the sandbox must mask: it compiles --deny globs,
// holds jail's built-in protections (secrets unreadable anywhere, files an agent
// could plant code in kept read-only), checks the filesystem flags for
// conflicts, and expands everything into a list of paths to mask by walking the
// visible trees once on the host. It does no mounting and no kernel work: the
// runtime (package ns) turns the Plan into mounts before Landlock is applied.
//
// Glob syntax (Compile, Match): '*' any run of characters within one path
// element, '?' one character, '[...]' a class ('[^...]' negated), '\' escapes,
// '**' as a whole element any number of elements (zero included, so "a/**"
// matches a itself). '*' matches a leading dot. A trailing '/' matches
// directories only. Relative patterns are relative to the workspace (they do
// not float: "*.db" is the workspace's top level, "**/*.db" any depth), "~/" is
// the user's home, absolute patterns are absolute. Built-ins named "~/..." are
// anchored at every home directory, and every other built-in matches at any
// depth under the visible roots; built-ins ignore ASCII case, --deny globs
// only with a "(?i)" prefix.
//
// Expansion is by host path, done once at start, before the agent runs, and
// decided by what each path is, never by what an earlier run left: symlinks
// are not followed during the walk, but a matching symlink masks its resolved
// target, and a home's dotfiles that are symlinks into a visible tree protect
// their targets; every other hard link of a protected file gets the same
// protection (a home's protected files count even where the home is not
// visible); a directory the walk cannot list or search is hidden whole;
// filesystems mounted inside a root are walked like the rest. What the agent
// creates later is not matched: Landlock cannot deny a name inside a writable
// tree, and masks need an existing path (jail never creates placeholders on
// the host). Plan.Absent lists the protected paths missing at start where the
// agent could create them, for the supervisor to watch.
//
// Input.Lifted (--no-default-deny-at) takes the built-ins other than git's
// off the trees it names, and only there; the user's --deny rules and what
// a protected name elsewhere leads to keep theirs (lift.go).
//
// The walk keeps of each directory only what it acts on (subdirectories,
// .git and HEAD, the files of a read-only directory, the names a rule
// matches) and lists directories through Input.Dirs when set: package
// dircache then answers for a directory unchanged since an earlier run
// (same device, inode and ctime) with what that run kept; without it every
// directory is read (dircache.Uncached, the one leaf package this imports).
// Everything kept is judged afresh at every start (symlink targets, hard links, modes).
// The one exception is the hard-link check of the home's protected
// directories: a directory unchanged since a check that found none of its
// files linked is not read again, and the visible directories changed
// since are looked at instead (through Input.Dirs' State; the argument is
// in homelinks.go).
//
// Nothing here depends on the kernel version.
package fsrules
