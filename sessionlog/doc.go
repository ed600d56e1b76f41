// Package sessionlog is a background sandbox's log (jail run -d, the Go
// API's Start): the main command's output and jail's notices, bounded.
// Writes go to PATH; when PATH would pass half the limit it is renamed
// PATH.1 (replacing the one before) and a new PATH begins. At most the
// limit is kept, always the newest output: a command that prints forever
// cannot fill the runtime directory (often a small tmpfs) or the disk.
//
// Readers (jail logs) print PATH.1 then PATH, and Follow carries on across
// rotations. The package is pure Go and imports no other jail package.
package sessionlog
