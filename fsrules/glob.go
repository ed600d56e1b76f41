package fsrules

import (
	"errors"
	"math"
	"path"
	"strings"
)

// ErrBadPattern is wrapped by every malformed-glob error.
var ErrBadPattern = errors.New("malformed glob")

type segKind uint8

const (
	segLiteral    segKind = iota // no metacharacters: string equality
	segSuffix                    // "*lit": HasSuffix
	segPrefix                    // "lit*": HasPrefix
	segGlob                      // anything else: path.Match
	segDoubleStar                // "**": any number of elements
)

// seg is one compiled element of a glob. Its literal parts are slices of
// raw, kept as offsets rather than strings of their own: a seg is 32
// bytes, not 72, and the built-ins are ~1,100 of them, compiled at every
// start into fresh heap pages (each a page fault).
type seg struct {
	raw string // the element as written (runs of "*" folded, see compileSeg)
	// i and j mark the literal parts: lit is raw[i:j] for the fast kinds;
	// a segGlob element must start with pre, raw[:i], and end with suf,
	// raw[j:] (cheap rejection before path.Match).
	i, j int32
	kind segKind
}

// lit is the literal part of a segLiteral, segSuffix or segPrefix element.
func (s seg) lit() string { return s.raw[s.i:s.j] }

// pre is the literal run a segGlob element starts with ("" if none).
func (s seg) pre() string { return s.raw[:s.i] }

// suf is the literal run a segGlob element ends with ("" if none).
func (s seg) suf() string { return s.raw[s.j:] }

func (s seg) match(name string) bool {
	switch s.kind {
	case segLiteral:
		return name == s.raw
	case segSuffix:
		return strings.HasSuffix(name, s.lit())
	case segPrefix:
		return strings.HasPrefix(name, s.lit())
	case segGlob:
		if !strings.HasPrefix(name, s.pre()) || !strings.HasSuffix(name, s.suf()) {
			return false
		}
		ok, _ := path.Match(s.raw, name)
		return ok
	}
	return false
}

func compileSeg(e string) (seg, error) {
	if e == "**" {
		return seg{kind: segDoubleStar, raw: e}, nil
	}
	if len(e) > math.MaxInt32 {
		return seg{}, ErrBadPattern // the offsets are int32
	}
	if _, err := path.Match(e, ""); err != nil {
		return seg{}, ErrBadPattern
	}
	if strings.Contains(e, "**") {
		// "a**b" is not a recursive wildcard: it behaves like "a*b".
		for strings.Contains(e, "**") {
			e = strings.ReplaceAll(e, "**", "*")
		}
	}
	n := int32(len(e))
	if !strings.ContainsAny(e, `*?[\`) {
		return seg{kind: segLiteral, raw: e, i: 0, j: n}, nil
	}
	if rest := e[1:]; e[0] == '*' && !strings.ContainsAny(rest, `*?[\`) {
		return seg{kind: segSuffix, raw: e, i: 1, j: n}, nil
	}
	if l := len(e) - 1; e[l] == '*' && !strings.ContainsAny(e[:l], `*?[\`) {
		return seg{kind: segPrefix, raw: e, i: 0, j: int32(l)}, nil
	}
	g := seg{kind: segGlob, raw: e, i: 0, j: n}
	if i := strings.IndexAny(e, `*?[\`); i > 0 {
		g.i = int32(i)
	}
	if i := strings.LastIndexAny(e, `*?[]\`); i < len(e)-1 && (i < 1 || e[i-1] != '\\') {
		g.j = int32(i + 1)
	}
	return g, nil
}

// compileSegs splits a slash-separated glob into elements, dropping empty
// ones, and collapses runs of "**".
func compileSegs(pat string) ([]seg, error) { return compileSegsIn(nil, pat) }

// compileSegsIn is compileSegs with the segments taken from a (nil: a
// slice of their own).
func compileSegsIn(a *arena, pat string) ([]seg, error) {
	// Sized once, to the non-empty elements: the built-ins alone are a few
	// hundred patterns, compiled at every start ("/**/.ssh/" is 2, not
	// the 4 its slashes would say).
	out := a.segSlice(elements(pat))
	for rest := pat; rest != ""; {
		var e string
		e, rest, _ = strings.Cut(rest, "/")
		if e == "" {
			continue
		}
		s, err := compileSeg(e)
		if err != nil {
			return nil, err
		}
		if s.kind == segDoubleStar && len(out) > 0 && out[len(out)-1].kind == segDoubleStar {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// matchSegs reports whether ps matches the elements ns. Linear-memory dynamic
// programming, so patterns with many "**" cannot blow up (O(len(ps)*len(ns))).
func matchSegs(ps []seg, ns []string) bool {
	// cur[j]: ps[i:] matches ns[j:], computed for i from len(ps) down to 0.
	n := len(ns)
	var buf [2][33]bool
	var cur, next []bool
	if n < 32 {
		cur, next = buf[0][:n+1], buf[1][:n+1]
	} else {
		cur, next = make([]bool, n+1), make([]bool, n+1)
	}
	for j := range next {
		next[j] = j == n
	}
	for i := len(ps) - 1; i >= 0; i-- {
		p := ps[i]
		if p.kind == segDoubleStar {
			// ** matches ns[j:k] for any k >= j: cur[j] = OR of next[j..n].
			acc := false
			for j := n; j >= 0; j-- {
				acc = acc || next[j]
				cur[j] = acc
			}
		} else {
			cur[n] = false
			for j := n - 1; j >= 0; j-- {
				cur[j] = next[j+1] && p.match(ns[j])
			}
		}
		cur, next = next, cur
	}
	return next[0]
}

func splitPath(p string) []string { return appendElements(nil, p) }

// appendElements appends the non-empty slash-separated elements of p to
// dst (splitPath into a buffer of the caller's).
func appendElements(dst []string, p string) []string {
	for p != "" {
		var e string
		e, p, _ = strings.Cut(p, "/")
		if e != "" {
			dst = append(dst, e)
		}
	}
	return dst
}

// lastElement is the last non-empty slash-separated element of p ("" when
// it has none), without splitting it.
func lastElement(p string) string {
	end := len(p)
	for end > 0 && p[end-1] == '/' {
		end--
	}
	return p[strings.LastIndexByte(p[:end], '/')+1 : end]
}

// Match reports whether the slash-separated name matches the glob pattern
// (syntax in the package doc; a trailing '/' is ignored here). Empty elements
// are ignored on both sides, so "a//b" is "a/b". The error wraps ErrBadPattern.
func Match(pattern, name string) (bool, error) {
	ps, err := compileSegs(pattern)
	if err != nil {
		return false, err
	}
	return matchSegs(ps, splitPath(name)), nil
}

// arena hands out the parts of many compiled patterns from a few large
// blocks: the built-ins are a few hundred patterns compiled at every start
// in a fresh heap, where each new small object's span costs page faults.
// Compiled patterns are never changed, and each slice is capped at its
// own part, so an append by a holder copies rather than overwrite the next.
type arena struct {
	pats []Pattern
	segs []seg
}

// pattern returns a zero Pattern of a's (a new one when a is nil).
func (a *arena) pattern() *Pattern {
	if a == nil {
		return &Pattern{}
	}
	if len(a.pats) == 0 {
		a.pats = make([]Pattern, 128)
	}
	p := &a.pats[0]
	a.pats = a.pats[1:]
	return p
}

// segSlice returns an empty slice of capacity n of a's (a new one when a is
// nil).
func (a *arena) segSlice(n int) []seg {
	if a == nil {
		return make([]seg, 0, n)
	}
	if cap(a.segs)-len(a.segs) < n {
		a.segs = make([]seg, 0, max(n, 512))
	}
	l := len(a.segs)
	a.segs = a.segs[:l+n]
	return a.segs[l : l : l+n]
}
