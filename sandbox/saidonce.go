package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"

	"github.com/jail-sandbox/jail/internal/replacefile"
	"github.com/jail-sandbox/jail/statedir"
)

// firstWriteMark is in the start notes said once per directory and
// configuration, not at every start: a script directory, read-only, where
// a hook or MCP server that creates a file for the first time fails
// (noteRuntime). Said at every start, the line was noise a user learned to
// skip; the directory, the configuration that runs it and the fixes are
// the same each time. Only words of the line: which notes are said once is
// the plan's list (Plan.onceNotes), never a match of these words, which a
// path in another note can hold (session 18).
const firstWriteMark = "for the first time fails inside"

// maxSaidOnce bounds the record: past it, the oldest hashes go (their
// notes are said once more).
const maxSaidOnce = 1024

// saidBefore reports whether note n is one said once (once: the plan made
// it so) and an earlier start said it already, and records it otherwise.
// The record (statedir.SaidOnce) is in jail's state directory, which no
// sandbox reaches: an agent could otherwise silence the line for the next
// run. --dry-run (peek) says every note and records none; without a state
// directory every start says it. A record jail cannot read or write costs
// a repeated line, never a lost one: it is written before the line is
// taken for said.
func saidBefore(stateDir, n string, once, peek bool) bool {
	// Why: a note is said once only when the plan made it one, never by
	// its words: a path holding "for the first time fails inside" (a
	// directory an earlier run's agent named so) silenced every other
	// line naming it from the second start on (session 18).
	if !once || peek || stateDir == "" {
		return false
	}
	sum := sha256.Sum256([]byte(n))
	key := hex.EncodeToString(sum[:])
	p := filepath.Join(stateDir, statedir.SaidOnce)
	data, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		return false
	}
	lines := strings.Fields(string(data))
	for _, l := range lines {
		if l == key {
			return true
		}
	}
	lines = append(lines, key)
	if len(lines) > maxSaidOnce {
		lines = lines[len(lines)-maxSaidOnce:]
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return false
	}
	var buf bytes.Buffer
	for _, l := range lines {
		buf.WriteString(l)
		buf.WriteByte('\n')
	}
	// A new file renamed over the record: a start reading it meanwhile
	// sees one version or the other.
	_ = replacefile.Write(p, ".said-once-*", buf.Bytes(), false)
	return false
}
