//go:build linux

package tests

// A built-in pattern (~/.codex/*.sqlite*) covers the files there at start
// only: a database name the agent makes in the run (queue_2.sqlite, a
// -shm or -journal beside state_5) stayed on the host, where a later
// Codex opens it (a queue database's rows are sent as the user's input, a
// -wal or -journal is replayed into its database at the next open). The
// supervisor watches the pattern's directory for new names matching it,
// and moves them into the quarantine as it does a named absent path.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCodexNewDatabaseNamesQuarantined(t *testing.T) {
	made := []string{"queue_2.sqlite", "state_5.sqlite-shm", "logs_9.sqlite-journal", "moved_3.sqlite"}
	const host = "the user's own\n"
	for _, viaProfile := range []bool{true, false} {
		t.Run(map[bool]string{true: "profile", false: "-w"}[viaProfile], func(t *testing.T) {
			// Three made in place, one renamed into its name (IN_MOVED_TO),
			// and a file the pattern does not match: the agent's to keep.
			r, codex := codexRun(t, viaProfile, host, []string{"state_5.sqlite", "config.toml"}, func(codex string) string {
				return "cd " + codex + " && printf evil > queue_2.sqlite && printf evil > state_5.sqlite-shm && " +
					"printf evil > logs_9.sqlite-journal && printf evil > tmp.x && mv tmp.x moved_3.sqlite && " +
					"printf mine > notes.txt\n" +
					// Gone while the run goes on (the watch), not only at its end.
					"for i in $(seq 50); do test -e queue_2.sqlite || break; sleep 0.1; done; test -e queue_2.sqlite && echo STILL-THERE; exit 0\n"
			})
			if strings.Contains(r.stdout, "STILL-THERE") {
				t.Errorf("queue_2.sqlite still there inside after 5 s: not watched while the run goes on")
			}
			for _, f := range made {
				if b, err := os.ReadFile(filepath.Join(codex, f)); err == nil {
					t.Errorf("~/.codex/%s made by the agent stayed on the host: %q", f, b)
				} else if !os.IsNotExist(err) {
					t.Fatal(err)
				}
				if !strings.Contains(r.stderr, filepath.Join(codex, f)+" out of the tree") {
					t.Errorf("no notice for ~/.codex/%s", f)
				}
			}
			if b, err := os.ReadFile(filepath.Join(codex, "state_5.sqlite")); err != nil || string(b) != host {
				t.Errorf("state_5.sqlite after the run: %q (%v), want the host's", b, err)
			}
			if b, err := os.ReadFile(filepath.Join(codex, "notes.txt")); err != nil || string(b) != "mine" {
				t.Errorf("notes.txt (no database name) after the run: %q (%v), want it kept", b, err)
			}
			if t.Failed() {
				t.Logf("stderr:\n%s", r.stderr)
			}
		})
	}
}

// codexRun runs script(~/.codex) in a fresh home whose ~/.codex holds
// files (each holding host), through the codex profile or -w ~/.codex,
// and wants exit 0; it returns the run and ~/.codex.
func codexRun(t *testing.T, viaProfile bool, host string, files []string, script func(codex string) string) (result, string) {
	t.Helper()
	home, state, ws := workspace(t), workspace(t), workspace(t)
	codex := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codex, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(codex, f), []byte(host), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	flags := []string{"-w", codex}
	if viaProfile {
		flags = []string{"--profile", "codex"}
	}
	o := runOpts{dir: ws, env: []string{"HOME=" + home, "XDG_STATE_HOME=" + state, "XDG_CACHE_HOME=" + filepath.Join(state, "cache")}}
	r := sh(t, o, script(codex), flags...)
	mustCode(t, r, 0)
	return r, codex
}

// TestCodexNewDatabaseNamesKilledRun: a run whose supervisor was killed
// (no watch, no exit check) leaves a new database name; the next start
// checks that run's pattern directories with the names they had at its
// start (its record), and moves the new one.
func TestCodexNewDatabaseNamesKilledRun(t *testing.T) {
	home, env := endHome(t)
	ws := workspace(t)
	fsWrite(t, home, ".codex/state_5.sqlite", "host", 0o644)
	// Made while no supervisor watched (what the agent did after its kill).
	r := afterKilledRun(t, ws, env, func() { fsWrite(t, home, ".codex/queue_2.sqlite", "evil", 0o644) }, "-w", filepath.Join(home, ".codex"))
	if _, err := os.Lstat(filepath.Join(home, ".codex/queue_2.sqlite")); err == nil {
		t.Errorf("~/.codex/queue_2.sqlite, made in the killed run, is still there:\n%s", r.stderr)
	}
	if got := fsReadFile(t, filepath.Join(home, ".codex/state_5.sqlite")); got != "host" {
		t.Errorf("state_5.sqlite = %q, want the host's", got)
	}
}
