// Package initbin is the lean init program (cmd/jail-init) embedded in
// jail's binary, and the one copy of it jail keeps in its state directory
// to exec as each sandbox's init: it reaches its main sooner than a
// re-exec of jail's own binary (half the packages, no HTTP or TLS).
//
// `make build` builds cmd/jail-init first, writes its sha256 beside it and
// builds jail with the build tag jail_leaninit, which embeds both. A plain
// `go build ./cmd/jail` embeds nothing: Open then says so and jail execs
// itself as init, as it always did (slower, never weaker).
//
// Trust. The copy, STATEDIR/init-HASH (HASH: the program's sha256), is
// exec'd without hashing its 4.5 MB at every start. It is trusted because
// only the user running jail can have made it, and no sandbox can reach it:
//   - the state directory is hidden from every sandbox (package statedir:
//     masked where a visible path contains it, refused where --write or
//     --read names it), so an agent cannot write or plant it, whatever
//     it is allowed to write;
//   - before each exec the file is opened once (O_PATH, no symlink
//     followed) and that descriptor is checked and exec'd: a regular
//     file, owned by the effective uid, mode exactly 0755, one link, the
//     embedded program's size, on a mount that allows exec; the state
//     directory is the euid's and not writable by group or others, and no
//     directory above it is writable by anyone but its owner (root or the
//     euid) unless sticky;
//   - it is created atomically (a temporary name, written, synced, then
//     renamed over the final name): no partial file is ever under the
//     final name, and concurrent first runs each rename a whole copy.
//
// A copy that fails a check is refused, never exec'd, and replaced; the run
// that extracts or replaces it execs jail's own binary (the new file was
// just open for writing: an exec of it could meet ETXTBSY), the next ones
// exec the copy. Anything else that stands in the way (no state directory,
// a read-only or noexec one, an untrusted parent) leaves jail execing
// itself, and JAIL_TRACE says which program init is and why.
package initbin
