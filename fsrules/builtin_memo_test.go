package fsrules

import (
	"slices"
	"testing"
)

// builtinRules answers from its memo only for the very same inputs: other
// homes, --allow-git-config or a changed list of built-ins are compiled
// afresh (a memo keyed on less would protect the last run's homes, or keep
// git rules that were lifted, or lifted ones that are back). Each caller's
// slice is its own.
func TestBuiltinRulesMemo(t *testing.T) {
	anchored := func(rs []rule, prefix string) bool {
		for _, r := range rs {
			if r.pat.prefix == prefix || len(r.pat.prefix) > len(prefix) && r.pat.prefix[:len(prefix)+1] == prefix+"/" {
				return true
			}
		}
		return false
	}
	hasGit := func(rs []rule) bool {
		return slices.ContainsFunc(rs, func(r rule) bool { return r.git })
	}
	a := builtinRules(false, []string{"/memo/a"})
	if !anchored(a, "/memo/a") || !hasGit(a) {
		t.Fatalf("home /memo/a: anchored %v, git rules %v", anchored(a, "/memo/a"), hasGit(a))
	}
	b := builtinRules(false, []string{"/memo/b"})
	if anchored(b, "/memo/a") || !anchored(b, "/memo/b") {
		t.Errorf("another home: rules still anchored at the last one's (%v) or not at its own (%v)", anchored(b, "/memo/a"), anchored(b, "/memo/b"))
	}
	if g := builtinRules(true, []string{"/memo/b"}); hasGit(g) {
		t.Error("allow-git-config: the git rules came from the memo")
	}
	if g := builtinRules(false, []string{"/memo/b"}); !hasGit(g) {
		t.Error("git rules back: the lifted set came from the memo")
	}
	saved := Builtins
	defer func() { Builtins = saved }()
	Builtins = append(slices.Clip(Builtins), Builtin{Name: "memo-test-name", Kind: Hide})
	n := builtinRules(false, []string{"/memo/b"})
	if !slices.ContainsFunc(n, func(r rule) bool { return r.name == "default: memo-test-name" }) {
		t.Error("a built-in added to the list is missing: the memo answered")
	}
	Builtins[0].Kind = ReadOnly + Hide // changed in place
	if m := builtinRules(false, []string{"/memo/b"}); m[0].kind != ReadOnly+Hide {
		t.Error("a built-in changed in place: the memo answered")
	}
	Builtins = saved
	// Each caller's slice is its own.
	c1 := builtinRules(false, []string{"/memo/c"})
	c2 := builtinRules(false, []string{"/memo/c"})
	c1[0] = rule{name: "clobbered"}
	if c2[0].name == "clobbered" || builtinRules(false, []string{"/memo/c"})[0].name == "clobbered" {
		t.Error("a caller's change reached another caller's rules")
	}
}

// The rules depend on the homes only through their anchors: homes that give
// the same anchors (the option check's [HOME] and the plan's [HOME, root's
// home], /root being an anchor anyway) share one compile, which a start
// then pays once, not twice. Homes that add an anchor still compile afresh
// (above).
func TestBuiltinRulesMemoSameAnchors(t *testing.T) {
	a := builtinRules(false, []string{"/memo/x"})
	b := builtinRules(false, []string{"/memo/x", "/root", "/home/someone"})
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("same anchors, %d and %d rules", len(a), len(b))
	}
	for i := range a {
		if a[i].pat != b[i].pat {
			t.Fatalf("rule %d (%s) was compiled again for homes with the same anchors", i, a[i].name)
		}
	}
	c := builtinRules(false, []string{"/memo/x", "/memo/y"})
	if len(c) <= len(a) {
		t.Errorf("a home that adds an anchor: %d rules, want more than %d", len(c), len(a))
	}
}
