// Package audit writes, reads, verifies and summarizes jail's audit trail.
//
// The trail is a JSONL file written only by the supervisor (never by the
// sandbox's init or the agent): one JSON object per line, each carrying
// "ts" (RFC 3339, nanoseconds, UTC), "seq" (1, 2, 3, ...), "type" and "prev",
// the lowercase hex SHA-256 of the previous line's bytes without its newline
// (for the first line: SHA-256 of the empty string, see GenesisPrev). A
// deleted, reordered or edited line therefore breaks the chain, which Verify
// detects and locates. The schema is versioned (SchemaVersion, carried by the
// start event) and documented in docs/audit-schema.md.
//
// Writer is safe for concurrent use; Emit never blocks the caller: events go
// through a bounded channel to one goroutine that writes each batch of
// complete lines with a single write(2). A SIGKILL of the supervisor loses at
// most the queued tail (and at worst leaves a truncated final line), never
// earlier lines. If the queue is ever full, the number of lost events is
// recorded in a "dropped" event as soon as the writer catches up. With a
// size budget (Options.MaxBytes) the file never grows past it: beyond it
// events are counted by type in "dropped" events (reason "budget") and the
// exit event says how many were not written (see Options).
//
// The package is pure Go and needs no particular kernel version; the only
// OS facilities used are open(2) with O_EXCL|O_NOFOLLOW, write(2), fsync(2)
// and, for the optional syslog sink, an AF_UNIX datagram socket (/dev/log).
package audit
