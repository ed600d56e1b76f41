package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/ns"
)

// TestGlobsAtStartKeepsMountedOnly: of the names a pattern's directory
// holds at start, only those the plan keeps read-only are the user's; one
// made on the host after the plan (no mount covers it, the agent can
// write it) is not kept, and leaves at the end like one the agent made.
func TestGlobsAtStartKeepsMountedOnly(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"state_5.sqlite", "queue_2.sqlite", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pl := &Plan{
		Globs:  []fsrules.Glob{{Dir: dir, Pattern: "*.sqlite*", Rule: "r"}},
		Mounts: []ns.Mount{{Kind: ns.KindReadOnly, Path: filepath.Join(dir, "state_5.sqlite")}, {Kind: ns.KindBind, Path: filepath.Join(dir, "queue_2.sqlite")}},
	}
	gs := globsAtStart(pl)
	if len(gs) != 1 || !slices.Equal(gs[0].Had, []string{"state_5.sqlite"}) {
		t.Fatalf("globsAtStart = %+v, want Had [state_5.sqlite]", gs)
	}
}
