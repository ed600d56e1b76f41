package sandbox

import (
	"errors"
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
