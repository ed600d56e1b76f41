// Package pastwrite remembers the trees jail's runs made writable (the
// workspace and the --write paths), so that a later run knows which
// symlinks a sandboxed command could have made or pointed elsewhere.
//
// jail's link checks (a --write, --read or --workspace path reached through
// a symlink, and the current directory reached through one) treat a link
// that lies in a tree the sandbox can write as the agent's, not the user's.
// This run's trees are known from its own flags; a tree writable only in an
// earlier run (an earlier --write path, another project's workspace) is
// not, and a link an agent planted there would pass for the user's own:
// run 1 with --write /data/x points /data/x/l at ~/.config/y, run 2 in
// another project with --write /data/x/l would make ~/.config/y writable.
// Record adds each run's trees to one file in jail's state directory
// (statedir.Written, never visible to a sandbox); Load reads it back and
// Set.Holds answers whether a path lies in one of them, by path or by the
// directory's identity (the same tree reached by another name: a bind mount).
//
// The file is bounded (MaxTrees, MaxSize: the most recently recorded are
// kept) and pruned of trees whose directory is gone
// whenever it is rewritten. It is parsed strictly: a file that is not
// exactly what Format writes is refused (ErrCorrupt), never read in part:
// a record that lost a tree would let that tree's links pass for the
// user's. The package imports no other jail package.
package pastwrite
