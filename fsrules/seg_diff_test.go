package fsrules

import (
	"path"
	"strings"
	"testing"
)

// segBefore is a compiled element as it was before its literal parts
// became offsets into raw: the reference for compileSeg.
type segBefore struct {
	kind               segKind
	raw, lit, pre, suf string
}

// compileSegBefore is compileSeg as it was (strings of their own).
func compileSegBefore(e string) (segBefore, error) {
	if e == "**" {
		return segBefore{kind: segDoubleStar, raw: e}, nil
	}
	if _, err := path.Match(e, ""); err != nil {
		return segBefore{}, ErrBadPattern
	}
	if strings.Contains(e, "**") {
		for strings.Contains(e, "**") {
			e = strings.ReplaceAll(e, "**", "*")
		}
	}
	if !strings.ContainsAny(e, `*?[\`) {
		return segBefore{kind: segLiteral, raw: e, lit: e}, nil
	}
	if rest := e[1:]; e[0] == '*' && !strings.ContainsAny(rest, `*?[\`) {
		return segBefore{kind: segSuffix, raw: e, lit: rest}, nil
	}
	if l := len(e) - 1; e[l] == '*' && !strings.ContainsAny(e[:l], `*?[\`) {
		return segBefore{kind: segPrefix, raw: e, lit: e[:l]}, nil
	}
	g := segBefore{kind: segGlob, raw: e}
	if i := strings.IndexAny(e, `*?[\`); i > 0 {
		g.pre = e[:i]
	}
	if i := strings.LastIndexAny(e, `*?[]\`); i < len(e)-1 && (i < 1 || e[i-1] != '\\') {
		g.suf = e[i+1:]
	}
	return g, nil
}

// matchBeforeSeg is seg.match as it was.
func (s segBefore) match(name string) bool {
	switch s.kind {
	case segLiteral:
		return name == s.lit
	case segSuffix:
		return strings.HasSuffix(name, s.lit)
	case segPrefix:
		return strings.HasPrefix(name, s.lit)
	case segGlob:
		if !strings.HasPrefix(name, s.pre) || !strings.HasSuffix(name, s.suf) {
			return false
		}
		ok, _ := path.Match(s.raw, name)
		return ok
	}
	return false
}

// sameSeg reports how s differs from the reference b ("": not at all):
// kind, raw and each literal part, and the matches of names.
func sameSeg(s seg, b segBefore, names []string) string {
	var lit, pre, suf string
	switch s.kind {
	case segLiteral, segSuffix, segPrefix:
		lit = s.lit()
	case segGlob:
		pre, suf = s.pre(), s.suf()
	}
	if s.kind != b.kind || s.raw != b.raw || lit != b.lit || pre != b.pre || suf != b.suf {
		return "compiled to " + s.raw + " kind " + string(rune('0'+s.kind)) + " lit " + lit + " pre " + pre + " suf " + suf +
			"; before " + b.raw + " kind " + string(rune('0'+b.kind)) + " lit " + b.lit + " pre " + b.pre + " suf " + b.suf
	}
	for _, n := range names {
		if s.match(n) != b.match(n) {
			return "matches " + n + " differently"
		}
	}
	return ""
}

var segElements = []string{
	"a", ".env", "*", "**", "***", "a**b", "*.pem", "*.PEM", "a*", "id_*", "*_rsa", "a?b", "?", "[abc]", "[!a]x", "a[b]c",
	`\*`, `a\*`, `\[x\]`, `ab\]`, `a\`, "[", "x]", "*a*b*.json", "*service*account*.json", ".env.*", "*.env", "credentials*.json",
	"a*b", "*a*", "?*", "*?", "[a-z]*.txt", `*\.txt`, `x\?y`, "ab*cd*ef", "*.tar.gz",
}

var segNames = []string{"", "a", "b", ".env", ".env.local", "x.pem", "x.PEM", "id_rsa", "id_ed25519", "ab", "aXb", "abc",
	"service-account.json", "x]", "*", "a*", "[x]", "ab]", "a.txt", "a.tar.gz", "abcdef", "abXcdYef", "credentials.json"}

// compileSeg compiles every element as before, and each matches the same
// names.
func TestCompileSegSameAsBefore(t *testing.T) {
	for _, e := range segElements {
		s, err := compileSeg(e)
		b, errB := compileSegBefore(e)
		if (err == nil) != (errB == nil) {
			t.Errorf("%q: error %v, before %v", e, err, errB)
			continue
		}
		if err != nil {
			continue
		}
		if d := sameSeg(s, b, segNames); d != "" {
			t.Errorf("%q: %s", e, d)
		}
	}
}

func FuzzCompileSegSameAsBefore(f *testing.F) {
	for _, e := range segElements {
		f.Add(e, "a.pem")
	}
	f.Fuzz(func(t *testing.T, e, name string) {
		if e == "" || strings.Contains(e, "/") {
			return // compileSegs never passes these
		}
		s, err := compileSeg(e)
		b, errB := compileSegBefore(e)
		if (err == nil) != (errB == nil) {
			t.Fatalf("%q: error %v, before %v", e, err, errB)
		}
		if err != nil {
			return
		}
		if d := sameSeg(s, b, append(segNames, name)); d != "" {
			t.Fatalf("%q: %s", e, d)
		}
	})
}
