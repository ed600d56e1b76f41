package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/agentcfg"
	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/policy"
)

// A policy file shown under another name by a mount of its file system (a
// bind of the project's directory: the user runs in the view, names the
// file by its own path) lies in the writable tree under that name: the
// view is made read-only too. Seen failing before the views were looked at
// (and on main's binary a493adb by hand, as root: `mount --bind src view`,
// `cd view; jail --settings src/srt.json` and the agent rewrote
// view/srt.json, that is src/srt.json).
func TestPolicyFileRulesViews(t *testing.T) {
	d := t.TempDir()
	src, view := filepath.Join(d, "src"), filepath.Join(d, "view")
	for _, p := range []string{src, view} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		// The view's name must exist as the bind would show it.
		if err := os.WriteFile(filepath.Join(p, "srt.json"), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mounts := []fsrules.Mount{
		{Point: "/", FSType: "ext4", Dev: "8:1", Root: "/"},
		{Point: view, FSType: "ext4", Dev: "8:1", Root: src},
	}
	p := &policy.Policy{PolicyFiles: []policy.PolicyFile{{Path: filepath.Join(src, "srt.json"), From: "--settings"}}}
	roots := []agentcfg.Root{{Path: view, Dir: true}}
	masks, _, notes, _, _, _ := policyFileRules(p, nil, roots, nil, nil, nil, mounts, false)
	if len(masks) != 1 || masks[0].Path != filepath.Join(view, "srt.json") || masks[0].Kind != fsrules.ReadOnly ||
		!strings.Contains(masks[0].Rule, "another view (a mount) of "+filepath.Join(src, "srt.json")) {
		t.Fatalf("masks %+v", masks)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], filepath.Join(view, "srt.json")+" (--settings)") {
		t.Fatalf("notes %q", notes)
	}
	// Without the mount there is no other name: nothing writable to keep.
	if masks, _, _, _, _, _ := policyFileRules(p, nil, roots, nil, nil, nil, mounts[:1], false); len(masks) != 0 {
		t.Fatalf("no view, masks %+v", masks)
	}
}

// TestPolicyFileRulesSaidCapped: the "policy files:" line of a start
// keeping many files (earlier runs' names, up to 256) names their number
// and the first few, not every one (session 19: one path per file, each
// start). Seen failing on main's code (all 20 named).
func TestPolicyFileRulesSaidCapped(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var earlier []policy.PolicyFile
	for i := 0; i < 20; i++ {
		path := filepath.Join(ws, fmt.Sprintf("srt-%02d.json", i))
		if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		earlier = append(earlier, policy.PolicyFile{Path: path, From: "--settings in an earlier run"})
	}
	roots := []agentcfg.Root{{Path: ws, Dir: true}}
	mounts := []fsrules.Mount{{Point: "/", FSType: "ext4", Dev: "8:1", Root: "/"}}
	masks, _, notes, _, _, _ := policyFileRules(&policy.Policy{}, earlier, roots, nil, nil, nil, mounts, false)
	if len(masks) != len(earlier) {
		t.Fatalf("%d masks, want %d: %+v", len(masks), len(earlier), masks)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "20 files: "+earlier[0].Path) || strings.Contains(notes[0], earlier[maxSaidPolicyFiles].Path) ||
		!strings.Contains(notes[0], fmt.Sprintf("and %d more", len(earlier)-maxSaidPolicyFiles)) {
		t.Errorf("notes %q, want the number and the first %d files", notes, maxSaidPolicyFiles)
	}
}

// TestPolicyFileRulesWays: a policy file named through a link that passes
// a directory of the writable tree and leaves it (srt.json ->
// b/../real/srt.json) has that directory among the ways to pin; a link
// straight at its target has none (review19c).
func TestPolicyFileRulesWays(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"b", "real"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "real", "srt.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, to := range map[string]string{"left.json": "b/../real/srt.json", "straight.json": "real/srt.json"} {
		if err := os.Symlink(to, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	roots := []agentcfg.Root{{Path: ws, Dir: true}}
	mounts := []fsrules.Mount{{Point: "/", FSType: "ext4", Dev: "8:1", Root: "/"}}
	for _, c := range []struct {
		name string
		want []wayPin
	}{
		{"left.json", []wayPin{{Dir: filepath.Join(ws, "b"), Of: filepath.Join(ws, "left.json")}}},
		{"straight.json", nil},
	} {
		p := &policy.Policy{PolicyFiles: []policy.PolicyFile{{Path: filepath.Join(ws, c.name), From: "--settings"}}}
		_, _, _, _, ways, err := policyFileRules(p, nil, roots, nil, nil, nil, mounts, false)
		if err != nil || !slices.Equal(ways, c.want) {
			t.Errorf("%s: ways %v (%v), want %v", c.name, ways, err, c.want)
		}
	}
}
