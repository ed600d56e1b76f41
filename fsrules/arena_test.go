package fsrules

import (
	"reflect"
	"strings"
	"testing"
)

// TestBuiltinsArenaSameAsAlone: the built-ins compiled from one arena are,
// rule by rule, the patterns compileAbs makes alone; and a pattern's
// slices end at its own part, so appending to one (a holder extending
// it) does not change the next.
func TestBuiltinsArenaSameAsAlone(t *testing.T) {
	rules := compileBuiltins(false, homeAnchors([]string{"/root", "/home/u", "/srv/Other Home"}))
	if len(rules) < 100 {
		t.Fatalf("only %d built-in rules", len(rules))
	}
	for i, r := range rules {
		alone, err := compileAbs(r.pat.Abs, r.pat.DirOnly, true)
		if err != nil {
			t.Fatal(err)
		}
		alone.Source = r.pat.Source
		if !reflect.DeepEqual(r.pat, alone) {
			t.Fatalf("rule %d (%s): from the arena %+v, alone %+v", i, r.name, r.pat, alone)
		}
	}
	for i := 0; i+1 < len(rules); i++ {
		next := append([]seg(nil), rules[i+1].pat.segs...)
		_ = append(rules[i].pat.segs, seg{kind: segLiteral, raw: "x", j: 1}, seg{kind: segLiteral, raw: "y", j: 1})
		if !reflect.DeepEqual(next, rules[i+1].pat.segs) {
			t.Fatalf("appending to rule %d's segments changed rule %d's: %v", i, i+1, rules[i+1].pat.segs)
		}
	}
	if !strings.HasPrefix(rules[0].pat.prefix, "/") {
		t.Fatalf("prefix %q", rules[0].pat.prefix)
	}
}
