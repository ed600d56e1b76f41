package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/agentcfg"
	"github.com/jail-sandbox/jail/policy"
)

// TestGuardSwappedNamesLiveRun: a start refused because its agent settings
// changed between the plan and the guard names a live run that can write
// there and how to stop it (not itself, not a run of other trees); without
// one it still says what changed and to start again (session 19).
func TestGuardSwappedNamesLiveRun(t *testing.T) {
	targets := []agentcfg.Target{{Path: "/w/shared/.claude/settings.json", Root: "/w/shared"}, {Path: "/w/mine/.claude/settings.json", Root: "/w/mine"}}
	skipped := []string{"/w/shared/.claude/settings.json: a FIFO"}
	live := []Entry{
		{ID: "self", Writable: []string{"/w/shared"}},
		{ID: "other", Writable: []string{"/w/else"}},
		{ID: "agentA", Writable: []string{"/w/shared"}},
	}
	err := guardSwapped(skipped, targets, live, "self")
	if !errors.Is(err, policy.ErrInvalid) {
		t.Fatalf("err = %v, want policy.ErrInvalid", err)
	}
	for _, w := range []string{skipped[0], "agentA", "jail kill agentA", "start jail again"} {
		if !strings.Contains(err.Error(), w) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: not one line naming %q", err, w)
		}
	}
	if strings.Contains(err.Error(), "self") || strings.Contains(err.Error(), "other") {
		t.Errorf("%q names a run that cannot have changed it", err)
	}
	err = guardSwapped(skipped, targets, live[:2], "self")
	if strings.Contains(err.Error(), "jail kill") || !strings.Contains(err.Error(), "another program changed it") || !strings.Contains(err.Error(), "start jail again") {
		t.Errorf("without a live run that can write it: %q", err)
	}
}

// TestGuardSwappedThroughLink: a guarded target reached through a symlink
// into a live run's tree (home/.claude -> shared/cfg), or through a link
// on its way that run can write, names that run, not "another program"
// (its lexical path lies outside the run's trees: session 19).
func TestGuardSwappedThroughLink(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	shared, home, other := filepath.Join(root, "shared"), filepath.Join(root, "home"), filepath.Join(root, "other")
	for _, d := range []string{filepath.Join(shared, "cfg"), home, filepath.Join(other, "cfg")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// home/.claude -> shared/cfg: the file lies in shared's tree.
	// home/.gemini -> shared/to-other -> other/cfg: a link on its way does.
	for _, l := range [][2]string{{filepath.Join(shared, "cfg"), filepath.Join(home, ".claude")}, {filepath.Join(other, "cfg"), filepath.Join(shared, "to-other")}, {filepath.Join(shared, "to-other"), filepath.Join(home, ".gemini")}} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	live := []Entry{{ID: "self", Writable: []string{home}}, {ID: "agentA", Writable: []string{shared}}}
	for _, p := range []string{filepath.Join(home, ".claude", "settings.json"), filepath.Join(home, ".gemini", "settings.json")} {
		targets := []agentcfg.Target{{Path: p, Root: home}}
		err := guardSwapped([]string{p + ": a FIFO"}, targets, live, "self")
		if err == nil || !strings.Contains(err.Error(), "jail kill agentA") || strings.Contains(err.Error(), "another program") {
			t.Errorf("%s: %v, want the live run agentA named", p, err)
		}
	}
}
