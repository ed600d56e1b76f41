package fsrules

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"unsafe"

	"github.com/jail-sandbox/jail/internal/asciifold"
)

// Sentinel errors, wrapped in *Error; check them with errors.Is.
var (
	// ErrDenyRoot: a deny pattern matches "/" (it would hide everything).
	ErrDenyRoot = errors.New("denies the whole filesystem")
	// ErrEscapesWorkspace: a relative pattern climbs out of the workspace with "..".
	ErrEscapesWorkspace = errors.New("escapes the workspace with '..'")
	// ErrConflict: a write/read path or the workspace lies inside a denied
	// (or, for writing, built-in read-only) path.
	ErrConflict = errors.New("conflicts with a deny rule")
	// ErrTooMany: the visible roots hold more entries than Input.MaxEntries.
	ErrTooMany = errors.New("too many files to expand deny rules")
)

// Error is a rejected value: Key (the policy option: "deny", "write",
// "read", "workspace") and Value say which; Err is one of the sentinels above
// or ErrBadPattern; Hint says what to do. Key is not a flag: the value may come
// from a config file or a profile, and the reader that knows says where (its
// OptionValue method is what readers look for). Other options named in Hint are
// written `key` (see package policy).
type Error struct {
	Key   string
	Value string
	Err   error
	Hint  string
	// Rule is the rule an ErrConflict is with: "deny PATTERN" (the user's)
	// or "default: NAME" (a built-in).
	Rule string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %q: %s", e.Key, e.Value, e.reason())
}

func (e *Error) reason() string {
	s := e.Err.Error()
	if e.Hint != "" {
		s += ": " + e.Hint
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// OptionValue returns the option, the value and the reason, for a reader to
// prefix with where the value came from.
func (e *Error) OptionValue() (key, value, reason string) { return e.Key, e.Value, e.reason() }

// Pattern is a glob anchored at an absolute directory.
type Pattern struct {
	// Source is the pattern as written (or the built-in rule's name).
	Source string
	// Abs is the absolute glob it was anchored to ("/ws/**/*.pem").
	Abs string
	// DirOnly is set by a trailing '/': only directories match.
	DirOnly bool
	// Fold matches ASCII letters case-insensitively (SERVER.PEM, .ENV): set
	// for every built-in rule, and for a --deny glob written "(?i)GLOB".
	Fold bool

	segs   []seg
	prefix string // leading literal directory, "/" at least
	nlit   int    // number of leading literal elements (len of prefix's elements)
	depth  int    // elements after the prefix; -1 when the pattern has "**"
	// inner are "/"+lit of the literal elements after the prefix: a path
	// that lacks one cannot match (a fast reject for "/ws/**/secrets/**",
	// which the last element cannot reject).
	inner []string
}

// FoldPrefix starts a --deny glob matched case-insensitively (ASCII letters):
// "(?i)**/*.sql" hides a.sql and B.SQL. Without it --deny is case-sensitive.
// Folding lowers the pattern and the name alike (so "[A-Z]" means a letter).
const FoldPrefix = "(?i)"

// Compile anchors and compiles one --deny pattern. Relative patterns are
// relative to workspace, "~/" and "~" to home, absolute ones stay. A relative
// pattern may not escape the workspace with "..". A leading "(?i)" makes it
// case-insensitive. Errors are *Error with Key "deny".
func Compile(pat, workspace, home string) (*Pattern, error) {
	bad := func(err error, hint string) (*Pattern, error) {
		return nil, &Error{Key: "deny", Value: pat, Err: err, Hint: hint}
	}
	src := pat
	fold := strings.HasPrefix(pat, FoldPrefix)
	pat = strings.TrimPrefix(pat, FoldPrefix)
	if pat == "" || strings.ContainsRune(pat, 0) {
		return bad(ErrBadPattern, "give a non-empty glob")
	}
	dirOnly := strings.HasSuffix(pat, "/") && pat != "/"
	var abs string
	switch {
	case pat == "~" || strings.HasPrefix(pat, "~/"):
		if home == "" || home[0] != '/' {
			return bad(ErrBadPattern, "the home directory is unknown; use an absolute path")
		}
		abs = path.Join(home, strings.TrimPrefix(pat, "~"))
	case strings.HasPrefix(pat, "~"):
		return bad(ErrBadPattern, "only ~/ (your own home) is supported; use an absolute path")
	case pat[0] == '/':
		abs = path.Clean(pat)
	default:
		rel := path.Clean(pat)
		if rel == ".." || strings.HasPrefix(rel, "../") {
			return bad(ErrEscapesWorkspace, "use an absolute path or ~/ for files outside the workspace")
		}
		if workspace == "" || workspace[0] != '/' {
			return bad(ErrBadPattern, "the workspace is unknown; use an absolute path")
		}
		abs = path.Join(workspace, rel)
	}
	p, err := compileAbs(abs, dirOnly, fold)
	if err != nil {
		return bad(err, "check the brackets and backslashes of the glob")
	}
	p.Source = src
	if p.Match("/", true) {
		return bad(ErrDenyRoot, "deny specific paths instead")
	}
	return p, nil
}

func compileAbs(abs string, dirOnly, fold bool) (*Pattern, error) {
	return compileAbsIn(nil, abs, dirOnly, fold)
}

// compileAbsIn is compileAbs with the pattern's parts taken from a (nil:
// their own).
func compileAbsIn(a *arena, abs string, dirOnly, fold bool) (*Pattern, error) {
	glob := abs
	if fold {
		glob = asciifold.Lower(abs) // names are folded the same way when matched
	}
	segs, err := compileSegsIn(a, glob)
	if err != nil {
		return nil, err
	}
	p := a.pattern()
	*p = Pattern{Source: abs, Abs: abs, DirOnly: dirOnly, Fold: fold, segs: segs, depth: -1}
	for _, s := range segs {
		if s.kind != segLiteral {
			break
		}
		p.nlit++
	}
	var b strings.Builder
	b.WriteByte('/')
	for i, s := range segs[:p.nlit] {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(s.raw)
	}
	p.prefix = b.String()
	hasDS := false
	for _, s := range segs {
		hasDS = hasDS || s.kind == segDoubleStar
	}
	if !hasDS {
		p.depth = len(segs) - p.nlit
	}
	for _, s := range segs[p.nlit:] {
		if s.kind == segLiteral {
			p.inner = append(p.inner, "/"+s.raw)
		}
	}
	return p, nil
}

// Match reports whether the clean absolute path matches; isDir tells whether
// it is a directory (for DirOnly patterns).
func (p *Pattern) Match(abs string, isDir bool) bool {
	if p.DirOnly && !isDir {
		return false
	}
	if p.Fold {
		abs = asciifold.Lower(abs)
	}
	if !under(abs, p.prefix) {
		return false
	}
	for _, l := range p.inner {
		if !strings.Contains(abs, l) {
			return false
		}
	}
	// Fast reject on the last element, where most candidates fail, before
	// the path is split: an element of the prefix is never the last one
	// the pattern's own last element would see, so this rejects only what
	// the check below rejects.
	if l := len(p.segs); l > p.nlit && p.segs[l-1].kind != segDoubleStar {
		if last := lastElement(abs); last == "" || !p.segs[l-1].match(last) {
			return false
		}
	}
	// Split into a buffer on the stack: Match runs for every candidate rule
	// of every entry walked and for every rule at every ancestor of every
	// visible root, and a new slice each time was a start's largest
	// source of garbage after the compiled rules.
	var buf [24]string
	ns := appendElements(buf[:0], abs)
	if len(ns) < p.nlit {
		return false
	}
	ns = ns[p.nlit:]
	ps := p.segs[p.nlit:]
	if l := len(ps); l > 0 && ps[l-1].kind != segDoubleStar {
		if len(ns) == 0 || !ps[l-1].match(ns[len(ns)-1]) {
			return false
		}
	}
	if p.depth >= 0 && len(ns) != p.depth {
		return false
	}
	return matchSegs(ps, ns)
}

// matchEntryBuf is Match for an entry named base inside directory dir. It
// rejects on the last element before joining, and joins in *scratch (the
// walker's, reused): the walk asks this for a few rules of every entry of
// every directory it reads (280,000 names in a large checkout), and a new
// string each time was most of what a cold walk allocated. Match keeps
// nothing of its argument.
func (p *Pattern) matchEntryBuf(scratch *[]byte, dir, base string, isDir bool) bool {
	if p.DirOnly && !isDir {
		return false
	}
	lb := base
	if p.Fold {
		lb = asciifold.Lower(base)
	}
	if l := len(p.segs); l > 0 && p.segs[l-1].kind != segDoubleStar && !p.segs[l-1].match(lb) {
		return false
	}
	b := append((*scratch)[:0], dir...)
	if dir != "/" {
		b = append(b, '/')
	}
	b = append(b, base...)
	*scratch = b
	return p.Match(unsafe.String(&b[0], len(b)), isDir)
}

// live reports whether the pattern can match dir or something below it. It
// runs for every rule in every directory walked: no allocation.
func (p *Pattern) live(dir string) bool {
	if p.depth < 0 && p.prefix == "/" {
		return true // "/**/name": anywhere
	}
	in := underFold(dir, p.prefix, p.Fold)
	if !in && !underFold(p.prefix, dir, p.Fold) {
		return false
	}
	if p.depth >= 0 && in {
		// elements of dir below the prefix must leave room for at least one more
		below := elements(dir) - p.nlit
		return below < p.depth
	}
	return true
}

// underFold is under, ignoring ASCII case when fold is set.
func underFold(p, base string, fold bool) bool {
	if !fold || base == "/" {
		return under(p, base)
	}
	if len(p) < len(base) {
		return false
	}
	for i := 0; i < len(base); i++ {
		a, b := p[i], base[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return len(p) == len(base) || p[len(base)] == '/'
}

// elements counts the non-empty elements of a clean absolute path, without
// allocating (live runs for every rule in every directory walked).
func elements(p string) int {
	n := 0
	for i := 0; i < len(p); i++ {
		if p[i] != '/' && (i == 0 || p[i-1] == '/') {
			n++
		}
	}
	return n
}

// under reports whether p is base or inside it (both clean and absolute).
func under(p, base string) bool {
	if base == "/" {
		return true
	}
	return p == base || (strings.HasPrefix(p, base) && p[len(base)] == '/')
}

func join(dir, base string) string {
	if dir == "/" {
		return "/" + base
	}
	return dir + "/" + base
}
