package fsrules

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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
