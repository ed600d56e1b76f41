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
// the user's home, absolute patterns are absolute. Built-in rules match at any
// depth under the visible roots.
//
// Expansion is by host path, done once at start, before the agent runs:
// symlinks are not followed during the walk, but a matching symlink masks its
// resolved target; other hard links to a hidden file are hidden too; mount
// points are not descended (each visible root is walked on its own). What the
// agent creates later is not matched: Landlock cannot deny a name inside a
// writable tree, and masks need an existing path (jail never creates
// placeholders on the host). Plan.Notes says which protected names were absent
// and therefore unprotected.
//
// Nothing here depends on the kernel version.
package fsrules
