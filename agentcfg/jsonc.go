package agentcfg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// This file: JSON as agents write it (comments and trailing commas accepted,
// as Gemini CLI's and Copilot CLI's loaders do), parsed into a tree that keeps
// every value's byte span, so that a protected key can be put back by
// splicing bytes: the rest of the file (comments, order, indentation, the
// agent's ordinary changes) stays exactly as written.
//
// The parser is deliberately at least as lenient as the loaders it stands in
// for: a document they read, it reads the same way (duplicate keys: the last
// one wins, as in JSON.parse; escapes in keys are decoded, so "mcp\u0053ervers"
// is mcpServers). A document it cannot read is never merged: the caller puts
// the whole snapshot back.

// maxDepth bounds nesting: deeper documents are refused (and so reverted
// whole), never a stack overflow in the supervisor.
const maxDepth = 256

// errSyntax is wrapped by every parse error.
var errSyntax = errors.New("not a JSON document")

type jkind uint8

const (
	jObject jkind = iota + 1
	jArray
	jString
	jNumber
	jTrue
	jFalse
	jNull
)

// jnode is one value with its span [start, end) in the source.
type jnode struct {
	kind       jkind
	start, end int
	members    []jmember // jObject, in source order, duplicates kept
	elems      []*jnode  // jArray
	str        string    // jString: decoded; jNumber: the literal
	// idx indexes a large object's members by key (built on first use).
	idx map[string]memberRef
}

type memberRef struct {
	last  *jnode
	count int
}

type jmember struct {
	key      string // decoded
	keyStart int    // offset of the key's opening quote
	val      *jnode
}

// jdoc is a parsed JSON document.
type jdoc struct {
	src  []byte
	root *jnode
}

func parseJSON(src []byte) (*jdoc, error) {
	p := &jparser{src: src}
	// A UTF-8 byte order mark is tolerated (lenient, like the loaders).
	if bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) {
		p.i = 3
	}
	if err := p.skip(); err != nil {
		return nil, err
	}
	root, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if err := p.skip(); err != nil {
		return nil, err
	}
	if p.i != len(src) {
		return nil, p.errf("data after the document")
	}
	if root.kind != jObject {
		return nil, p.errf("the document is not an object")
	}
	return &jdoc{src: src, root: root}, nil
}

type jparser struct {
	src []byte
	i   int
}

func (p *jparser) errf(format string, a ...any) error {
	return fmt.Errorf("%w: offset %d: %s", errSyntax, p.i, fmt.Sprintf(format, a...))
}

// skip passes whitespace and comments.
func (p *jparser) skip() error {
	for p.i < len(p.src) {
		switch c := p.src[p.i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.i++
		case c == '/' && p.i+1 < len(p.src) && p.src[p.i+1] == '/':
			for p.i < len(p.src) && p.src[p.i] != '\n' {
				p.i++
			}
		case c == '/' && p.i+1 < len(p.src) && p.src[p.i+1] == '*':
			end := bytes.Index(p.src[p.i+2:], []byte("*/"))
			if end < 0 {
				return p.errf("unterminated comment")
			}
			p.i += 2 + end + 2
		default:
			return nil
		}
	}
	return nil
}

func (p *jparser) value(depth int) (*jnode, error) {
	if depth > maxDepth {
		return nil, p.errf("nested deeper than %d", maxDepth)
	}
	if p.i >= len(p.src) {
		return nil, p.errf("unexpected end")
	}
	start := p.i
	switch c := p.src[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, err := p.string()
		if err != nil {
			return nil, err
		}
		return &jnode{kind: jString, start: start, end: p.i, str: s}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		for _, lit := range []struct {
			w string
			k jkind
		}{{"true", jTrue}, {"false", jFalse}, {"null", jNull}} {
			if bytes.HasPrefix(p.src[p.i:], []byte(lit.w)) {
				p.i += len(lit.w)
				return &jnode{kind: lit.k, start: start, end: p.i}, nil
			}
		}
		return nil, p.errf("unexpected %q", c)
	}
}

func (p *jparser) object(depth int) (*jnode, error) {
	n := &jnode{kind: jObject, start: p.i}
	p.i++ // {
	for {
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.i >= len(p.src) {
			return nil, p.errf("unterminated object")
		}
		if p.src[p.i] == '}' {
			p.i++
			n.end = p.i
			return n, nil
		}
		if len(n.members) > 0 {
			if p.src[p.i] != ',' {
				return nil, p.errf("expected , or }")
			}
			p.i++
			if err := p.skip(); err != nil {
				return nil, err
			}
			if p.i < len(p.src) && p.src[p.i] == '}' { // trailing comma
				p.i++
				n.end = p.i
				return n, nil
			}
		}
		if p.i >= len(p.src) || p.src[p.i] != '"' {
			return nil, p.errf("expected a key")
		}
		ks := p.i
		key, err := p.string()
		if err != nil {
			return nil, err
		}
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.i >= len(p.src) || p.src[p.i] != ':' {
			return nil, p.errf("expected :")
		}
		p.i++
		if err := p.skip(); err != nil {
			return nil, err
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.members = append(n.members, jmember{key: key, keyStart: ks, val: v})
	}
}

func (p *jparser) array(depth int) (*jnode, error) {
	n := &jnode{kind: jArray, start: p.i}
	p.i++ // [
	for {
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.i >= len(p.src) {
			return nil, p.errf("unterminated array")
		}
		if p.src[p.i] == ']' {
			p.i++
			n.end = p.i
			return n, nil
		}
		if len(n.elems) > 0 {
			if p.src[p.i] != ',' {
				return nil, p.errf("expected , or ]")
			}
			p.i++
			if err := p.skip(); err != nil {
				return nil, err
			}
			if p.i < len(p.src) && p.src[p.i] == ']' {
				p.i++
				n.end = p.i
				return n, nil
			}
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, v)
	}
}

// string reads a string token and decodes it with encoding/json (escapes,
// surrogate pairs, invalid UTF-8 replaced as a JavaScript reader would).
func (p *jparser) string() (string, error) {
	start := p.i
	escaped := false
	p.i++ // "
	for p.i < len(p.src) {
		switch c := p.src[p.i]; {
		case c == '\\':
			escaped = true
			p.i += 2
		case c == '"':
			p.i++
			raw := p.src[start+1 : p.i-1]
			if !escaped && utf8.Valid(raw) {
				return string(raw), nil // the common case, without the decoder
			}
			var s string
			if err := json.Unmarshal(p.src[start:p.i], &s); err != nil {
				return "", fmt.Errorf("%w: offset %d: bad string: %v", errSyntax, start, err)
			}
			return s, nil
		case c < 0x20:
			return "", p.errf("control character in a string")
		default:
			p.i++
		}
	}
	return "", p.errf("unterminated string")
}

func (p *jparser) number() (*jnode, error) {
	start := p.i
	if p.src[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.src) && p.src[p.i] >= '0' && p.src[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if digits() == 0 {
		return nil, p.errf("bad number")
	}
	if p.i < len(p.src) && p.src[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, p.errf("bad number")
		}
	}
	if p.i < len(p.src) && (p.src[p.i] == 'e' || p.src[p.i] == 'E') {
		p.i++
		if p.i < len(p.src) && (p.src[p.i] == '+' || p.src[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, p.errf("bad number")
		}
	}
	return &jnode{kind: jNumber, start: start, end: p.i, str: string(p.src[start:p.i])}, nil
}

// member returns the value of key in an object: the last one, as JSON.parse
// keeps, and how many members carry that key.
func (n *jnode) member(key string) (*jnode, int) {
	if len(n.members) > 16 {
		if n.idx == nil {
			n.idx = make(map[string]memberRef, len(n.members))
			for _, m := range n.members {
				r := n.idx[m.key]
				n.idx[m.key] = memberRef{last: m.val, count: r.count + 1}
			}
		}
		r := n.idx[key]
		return r.last, r.count
	}
	var v *jnode
	count := 0
	for _, m := range n.members {
		if m.key == key {
			v = m.val
			count++
		}
	}
	return v, count
}

// lookup walks path from the root: the node there, or nil.
func (d *jdoc) lookup(path []string) *jnode {
	n := d.root
	for _, k := range path {
		if n == nil || n.kind != jObject {
			return nil
		}
		n, _ = n.member(k)
	}
	return n
}

// jnum is a JSON number kept as its literal, so that values compare exactly.
type jnum string

// decode turns a node into plain Go values for comparison: objects are
// map[string]any (last duplicate wins), arrays []any, numbers jnum.
func (n *jnode) decode() any {
	switch n.kind {
	case jObject:
		m := make(map[string]any, len(n.members))
		for _, mb := range n.members {
			m[mb.key] = mb.val.decode()
		}
		return m
	case jArray:
		a := make([]any, len(n.elems))
		for i, e := range n.elems {
			a[i] = e.decode()
		}
		return a
	case jString:
		return n.str
	case jNumber:
		return jnum(n.str)
	case jTrue:
		return true
	case jFalse:
		return false
	}
	return nil
}

// --- edits: each returns new source bytes; the caller parses again. -------

func splice(src []byte, start, end int, with string) []byte {
	out := make([]byte, 0, len(src)-(end-start)+len(with))
	out = append(out, src[:start]...)
	out = append(out, with...)
	return append(out, src[end:]...)
}

// indentAt returns the whitespace that starts the line holding offset i.
func indentAt(src []byte, i int) string {
	ls := bytes.LastIndexByte(src[:i], '\n') + 1
	j := ls
	for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	return string(src[ls:j])
}

// indentUnit guesses the document's indentation step (two spaces by default).
func indentUnit(src []byte) string {
	for _, line := range bytes.Split(src, []byte("\n"))[1:] {
		t := bytes.TrimLeft(line, " \t")
		if len(t) == len(line) || len(t) == 0 {
			continue
		}
		return string(line[:len(line)-len(t)])
	}
	return "  "
}

// deleteMember removes the i-th member of obj with its separating comma.
func deleteMember(src []byte, obj *jnode, i int) []byte {
	ms := obj.members
	switch {
	case i < len(ms)-1:
		return splice(src, ms[i].keyStart, ms[i+1].keyStart, "")
	case i > 0:
		return splice(src, ms[i-1].val.end, ms[i].val.end, "")
	default:
		// The only member: a trailing comma after it must go too.
		end := ms[i].val.end
		q := &jparser{src: src, i: end}
		if q.skip() == nil && q.i < len(src) && src[q.i] == ',' {
			end = q.i + 1
		}
		return splice(src, ms[i].keyStart, end, "")
	}
}

// insertMember adds "key": raw as the last member of obj.
func insertMember(src []byte, obj *jnode, key, raw string) []byte {
	k, _ := json.Marshal(key)
	if n := len(obj.members); n > 0 {
		last := obj.members[n-1]
		ind := indentAt(src, last.keyStart)
		sep := ",\n" + ind
		if !bytes.Contains(src[obj.start:obj.end], []byte("\n")) {
			sep = ", " // a one-line object stays on one line
		}
		return splice(src, last.val.end, last.val.end, sep+string(k)+": "+raw)
	}
	ind := indentAt(src, obj.start)
	return splice(src, obj.start, obj.end, "{\n"+ind+indentUnit(src)+string(k)+": "+raw+"\n"+ind+"}")
}

// nest wraps raw in objects for the keys of path: nest(["a","b"], "1") is
// {"a": {"b": 1}}'s inner part {"b": 1} for key a.
func nest(path []string, raw string) string {
	for i := len(path) - 1; i >= 0; i-- {
		k, _ := json.Marshal(path[i])
		raw = "{" + string(k) + ": " + raw + "}"
	}
	return raw
}

// jsonSet makes path hold raw (nil: be absent) and returns the new source.
// Every member named like the last key is replaced, so that no duplicate
// survives to be read by a loader that keeps the first one.
func jsonSet(d *jdoc, path []string, raw *string) ([]byte, error) {
	if len(path) == 0 {
		return nil, errors.New("agentcfg: empty path")
	}
	src := d.src
	for {
		doc, err := parseJSON(src)
		if err != nil {
			return nil, fmt.Errorf("agentcfg: edit broke the document: %w", err)
		}
		// The deepest existing object on the path.
		obj, depth := doc.root, 0
		for depth < len(path)-1 {
			next, _ := obj.member(path[depth])
			if next == nil || next.kind != jObject {
				break
			}
			obj, depth = next, depth+1
		}
		if depth < len(path)-1 {
			// path[depth] is missing or not an object.
			next, count := obj.member(path[depth])
			if raw == nil {
				if next == nil {
					return src, nil // nothing to remove
				}
				// A non-object in the way holds nothing below: done.
				return src, nil
			}
			inner := nest(path[depth+1:], *raw)
			if count == 1 {
				return splice(src, next.start, next.end, inner), nil
			}
			if count > 1 {
				src = deleteFirst(src, obj, path[depth])
				continue
			}
			return insertMember(src, obj, path[depth], inner), nil
		}
		key := path[len(path)-1]
		cur, count := obj.member(key)
		switch {
		case count == 0 && raw == nil:
			return src, nil
		case count == 0:
			return insertMember(src, obj, key, *raw), nil
		case count == 1 && raw != nil:
			return splice(src, cur.start, cur.end, *raw), nil
		default:
			src = deleteFirst(src, obj, key)
		}
	}
}

func deleteFirst(src []byte, obj *jnode, key string) []byte {
	for i, m := range obj.members {
		if m.key == key {
			return deleteMember(src, obj, i)
		}
	}
	return src
}

// raw returns the source text of a node, with comments inside kept.
func (d *jdoc) raw(n *jnode) string { return string(d.src[n.start:n.end]) }

// oddities lists what a loader may read differently from this parser:
// "__proto__" members (Object.assign and many merge helpers take them as the
// prototype, so a key hidden there reaches the loader without being where
// the table looks) and duplicate keys (a loader that keeps the first one
// would read another value). Agents never write either; merge reverts a
// document that gained one.
func (d *jdoc) oddities() []string {
	var out []string
	var stack []string // the path, built into a string only when needed
	where := func(key string) string {
		return strings.Join(append(append([]string{}, stack...), key), ".")
	}
	var walk func(n *jnode)
	walk = func(n *jnode) {
		switch n.kind {
		case jObject:
			var seen map[string]bool
			if len(n.members) > 1 {
				seen = make(map[string]bool, len(n.members))
			}
			for _, m := range n.members {
				if m.key == "__proto__" {
					out = append(out, "__proto__ key at "+where(m.key))
				}
				if seen != nil {
					if seen[m.key] {
						out = append(out, "duplicate key "+where(m.key))
					}
					seen[m.key] = true
				}
				if m.val.kind == jObject || m.val.kind == jArray {
					stack = append(stack, m.key)
					walk(m.val)
					stack = stack[:len(stack)-1]
				}
			}
		case jArray:
			for i, e := range n.elems {
				if e.kind == jObject || e.kind == jArray {
					stack = append(stack, fmt.Sprintf("[%d]", i))
					walk(e)
					stack = stack[:len(stack)-1]
				}
			}
		}
	}
	walk(d.root)
	return out
}
