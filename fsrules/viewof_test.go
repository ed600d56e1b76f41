package fsrules

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"strconv"
	"testing"
)

// viewOfFmt is viewOf as it was written with fmt: the view names of the
// cache files already on users' disks. viewOf must give the same names,
// or every start after an upgrade would walk its trees cold once.
func viewOfFmt(root string, rules []rule) string {
	h := sha256.New()
	for _, r := range rules {
		fmt.Fprintf(h, "%q %q %t %t %d %q %t %t\n", r.pat.Source, r.pat.Abs, r.pat.DirOnly, r.pat.Fold, r.kind, r.name, r.user, r.git)
	}
	fmt.Fprintf(h, "creds %s\n", creds())
	return viewVersion + "\x00" + root + "\x00" + hex.EncodeToString(h.Sum(nil))
}

func TestViewOfSameAsFmt(t *testing.T) {
	rules := builtinRules(false, []string{"/root", "/home/Zoë"})
	for _, d := range []string{"**/secret\"s", "**/tab\there", "**/new\nline", "**/é/*.pem", "**/\x01ctl", "/abs/[a-z]*"} {
		p, err := Compile(d, "/ws", "/root")
		if err != nil {
			t.Fatal(d, err)
		}
		rules = append(rules, rule{pat: p, kind: Hide, name: "deny " + d, user: true})
	}
	rules = append(rules, rule{pat: rules[0].pat, kind: ReadOnly, name: "x", git: true})
	for _, root := range []string{"/ws", "/home/u/proj"} {
		if got, want := viewOf(root, rules), viewOfFmt(root, rules); got != want {
			t.Fatalf("viewOf(%s) = %q, want %q", root, got, want)
		}
	}
}

// appendQuote's copy is strconv.AppendQuote's bytes: every single byte,
// the built-ins' names and patterns, and strings that need escapes.
func TestAppendQuoteSameAsStrconv(t *testing.T) {
	var in []string
	for c := 0; c < 256; c++ {
		in = append(in, string(rune(c)), "a"+string([]byte{byte(c)})+"z")
	}
	for _, r := range builtinRules(false, []string{"/root", "/home/Zoë"}) {
		in = append(in, r.pat.Source, r.pat.Abs, r.name)
	}
	in = append(in, "", `"`, `\`, "é", "\u2028", "\xff\xfe", "tab\there", "~/.ssh/")
	for _, s := range in {
		if got, want := string(appendQuote([]byte("x"), s)), string(strconv.AppendQuote([]byte("x"), s)); got != want {
			t.Errorf("appendQuote(%q) = %s, strconv %s", s, got, want)
		}
	}
}

func FuzzAppendQuote(f *testing.F) {
	f.Add("plain")
	f.Add("quote\"back\\slash")
	f.Add("\x7f\x00é")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(appendQuote(nil, s)), strconv.Quote(s); got != want {
			t.Fatalf("appendQuote(%q) = %s, strconv %s", s, got, want)
		}
	})
}

// The walker's view names are viewOf's for every rules slice it is given,
// whichever it was given before: the same slice, another of the same
// length, a shorter one with the same first rule, a one-rule slice.
func TestWalkerViewNameSameAsViewOf(t *testing.T) {
	all := builtinRules(false, []string{"/root"})
	other := builtinRules(true, []string{"/root", "/srv/h"})[:len(all)]
	one := []rule{all[3]}
	w := &walker{}
	for i, c := range []struct {
		root  string
		rules []rule
	}{
		{"/ws", all}, {"/usr", all}, {"/ws", other}, {"/ws", all[:len(all)-1]},
		{"/ws", all[1:]}, {"/x", one}, {"/x", []rule{all[4]}}, {"/ws", all}, {"/ws", nil},
	} {
		if got, want := w.viewName(c.root, c.rules), viewOf(c.root, c.rules); got != want {
			t.Errorf("case %d (%s, %d rules): %q, want %q", i, c.root, len(c.rules), got, want)
		}
	}
}

// liveAt answers as a fresh filter and index would, whatever it was asked
// before: roots with the same live rules, with others, other slices of the
// same length, a one-rule slice, none. A root whose live rules it has met
// gets the index made for them (the same maps): the memo liveAt is for.
func TestWalkerLiveAtSameAsFresh(t *testing.T) {
	all := builtinRules(false, []string{"/root"})
	other := builtinRules(true, []string{"/root", "/srv/h"})[:len(all)]
	one := []rule{all[3]}
	w := &walker{}
	fresh := func(root string, rules []rule) ([]rule, ruleIndex) {
		var live []rule
		for _, r := range rules {
			if r.pat.live(root) {
				live = append(live, r)
			}
		}
		return live, indexRules(live)
	}
	sets := map[int]bool{}
	for i, c := range []struct {
		root  string
		rules []rule
	}{
		{"/ws", all}, {"/root/.claude", all}, {"/root/.claude/projects", all}, {"/root/.claude/tasks", all}, {"/root/.ssh", all},
		{"/ws", all}, {"/usr", all}, {"/ws", other}, {"/ws", all[:len(all)-1]}, {"/ws", all[1:]},
		{"/x", one}, {"/x", []rule{all[4]}}, {"/root/.claude", all}, {"/ws", nil},
	} {
		gotLive, gotIdx := w.liveAt(c.root, c.rules)
		wantLive, wantIdx := fresh(c.root, c.rules)
		if len(gotLive) != len(wantLive) || (len(wantLive) > 0 && !reflect.DeepEqual(gotLive, wantLive)) {
			t.Errorf("case %d (%s, %d rules): %d live rules, want %d", i, c.root, len(c.rules), len(gotLive), len(wantLive))
		}
		if !reflect.DeepEqual(gotIdx, wantIdx) {
			t.Errorf("case %d (%s, %d rules): the index differs from a fresh one", i, c.root, len(c.rules))
		}
		if len(gotLive) != cap(gotLive) {
			t.Errorf("case %d: live rules with room to append (%d of %d): an append by one root would show in another's", i, len(gotLive), cap(gotLive))
		}
		sets[len(gotLive)] = true
	}
	if len(sets) < 3 {
		t.Fatalf("the cases met %d sets of live rules: the table tests little", len(sets))
	}
	// The claude profile's caches (jail's own, below its state directory)
	// share their live rules, and so their index; the state directory
	// itself has more (its own protected files).
	_, a := w.liveAt("/root/.claude/projects", all)
	_, b := w.liveAt("/root/.claude/tasks", all)
	if reflect.ValueOf(a.exact.byName).Pointer() != reflect.ValueOf(b.exact.byName).Pointer() {
		t.Errorf("/root/.claude/projects and /root/.claude/tasks have the same live rules but two indexes")
	}
	_, c := w.liveAt("/root/.claude", all)
	if reflect.ValueOf(a.exact.byName).Pointer() == reflect.ValueOf(c.exact.byName).Pointer() {
		t.Errorf("/root/.claude/projects and /root/.claude share an index although their live rules differ")
	}
}
