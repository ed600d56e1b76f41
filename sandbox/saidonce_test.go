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
	if saidBefore(sd, n, true) || saidBefore(sd, n, true) {
		t.Fatal("--dry-run took the note for said")
	}
	if saidBefore(sd, other, false) || saidBefore(sd, other, false) {
		t.Fatal("a note said every start was taken for said")
	}
	if saidBefore("", n, false) || saidBefore("", n, false) {
		t.Fatal("without a state directory the note was taken for said")
	}
	if saidBefore(sd, n, false) {
		t.Fatal("the first start took the note for said")
	}
	if !saidBefore(sd, n, false) {
		t.Fatal("the second start says it again")
	}
	if saidBefore(sd, n+" (another directory)", false) {
		t.Fatal("another note taken for said")
	}
	// The record is bounded: the oldest go first.
	for i := 0; i < maxSaidOnce; i++ {
		saidBefore(sd, n+strings.Repeat("x", i+1), false)
	}
	data, err := os.ReadFile(filepath.Join(sd, statedir.SaidOnce))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(strings.Fields(string(data))); got != maxSaidOnce {
		t.Errorf("the record holds %d hashes, want %d", got, maxSaidOnce)
	}
	if saidBefore(sd, n, false) {
		t.Error("the oldest note was not dropped past the bound")
	}
}
