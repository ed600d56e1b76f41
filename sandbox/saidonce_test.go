package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/statedir"
)

// A first-write note is said at the first start only; other notes, a
// --dry-run and a start without a state directory say it every time.
func TestSaidBefore(t *testing.T) {
	sd := filepath.Join(t.TempDir(), "jail")
	n := "agent script: /h/.claude/hooks is read-only (x): a hook " + firstWriteMark + " with ..."
	other := "agent script: /h/.claude runs in python"
	// A note said every start whose path holds the first-write words (a
	// directory an earlier run's agent named so): said every time. Seen
	// failing on main, where the words made a note one said once.
	spoof := "unreadable directory /w/x " + firstWriteMark + " (mode 0): hidden whole"
	if saidBefore(sd, n, true, true) || saidBefore(sd, n, true, true) {
		t.Fatal("--dry-run took the note for said")
	}
	if saidBefore(sd, other, false, false) || saidBefore(sd, other, false, false) {
		t.Fatal("a note said every start was taken for said")
	}
	if saidBefore(sd, spoof, false, false) || saidBefore(sd, spoof, false, false) {
		t.Fatal("a note said every start, holding the first-write words, was taken for said")
	}
	if saidBefore("", n, true, false) || saidBefore("", n, true, false) {
		t.Fatal("without a state directory the note was taken for said")
	}
	if saidBefore(sd, n, true, false) {
		t.Fatal("the first start took the note for said")
	}
	if !saidBefore(sd, n, true, false) {
		t.Fatal("the second start says it again")
	}
	if saidBefore(sd, n+" (another directory)", true, false) {
		t.Fatal("another note taken for said")
	}
	// The record is bounded: the oldest go first.
	for i := 0; i < maxSaidOnce; i++ {
		saidBefore(sd, n+strings.Repeat("x", i+1), true, false)
	}
	data, err := os.ReadFile(filepath.Join(sd, statedir.SaidOnce))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(strings.Fields(string(data))); got != maxSaidOnce {
		t.Errorf("the record holds %d hashes, want %d", got, maxSaidOnce)
	}
	if saidBefore(sd, n, true, false) {
		t.Error("the oldest note was not dropped past the bound")
	}
}
