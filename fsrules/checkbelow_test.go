package fsrules

import (
	"slices"
	"testing"
)

// TestCheckBelow: every rule checkBelow leaves out (the walk then takes it
// for live without asking) is live in every directory below, at any
// depth and in any case; the ones it keeps include each rule that dies
// somewhere below (bounded depth, another prefix). Seen failing with
// checkBelow leaving out the rules of bounded depth too.
func TestCheckBelow(t *testing.T) {
	c, err := compile(Input{Workspace: "/w/Proj", Home: "/home/u", Deny: []string{
		"**/*.sqlite", "secrets/**", "/w/Proj/a/*.env", "/w/Proj/a/b/c/*.key", "*.pem", "/w/Other/**/x",
		"~/notes/**", "/w/Proj/deep/**/y.txt", "top.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	below := []string{"a", "a/b", "a/b/c", "a/b/c/d", "A/B", "deep", "deep/q/r", "secrets", "x/Secrets/z"}
	sawDying := false
	for _, dir := range []string{"/w/Proj", "/w/Proj/a", "/w/Proj/deep", "/w/Proj/a/b"} {
		var live []rule
		for _, r := range c.all {
			if r.pat.live(dir) {
				live = append(live, r)
			}
		}
		check := checkBelow(dir, live)
		for i, r := range live {
			dies := false
			for _, b := range below {
				if !r.pat.live(dir + "/" + b) {
					dies = true
				}
			}
			if dies {
				sawDying = true
			}
			if !slices.Contains(check, i) && dies {
				t.Errorf("%s: rule %s (%s) left out of the check, but dies below", dir, r.name, r.pat.Abs)
			}
		}
	}
	if !sawDying {
		t.Fatal("no rule dies below any directory (the test cannot fail)")
	}
}
