package agentcfg

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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

// jdoc is a parsed JSON document. A document parsed for a file's protected
// keys (parseJSONFor) holds nodes only where those keys can be: see ktrie.
type jdoc struct {
	src  []byte
	root *jnode
	// pruned: only the trie's nodes were built; odd: the document has
	// a duplicate or "__proto__" key somewhere (its oddities are then
	// listed by parsing it whole).
	pruned, odd bool
	trie        *ktrie // what was built: edits parse again with it
}

// ktrie says which nodes of a document Merge can look at: the objects on
// the way to a protected key or an exception (with every member, the
// values of the others only as placeholders with their kind and span, for
// the splices), and the values at those keys whole. The rest of the
// document is checked (syntax, duplicate and "__proto__" keys, depth) but
// not built: a ~10 MB ~/.claude.json is mostly per-project history, and
// building it cost ~5 MB/s on every check (issue 16).
type ktrie struct {
	full bool              // the value here is built whole
	kids map[string]*ktrie // by key
	any  *ktrie            // "*": every key (already merged into kids)
}

// fullTrie builds everything: the parser as it was.
var fullTrie = &ktrie{full: true}

func (t *ktrie) child(key []byte) *ktrie {
	if t.full {
		return t
	}
	if c := t.kids[string(key)]; c != nil {
		return c
	}
	return t.any
}

// trieFor is the trie of f's keys and exceptions (placeholders filled from
// ctx).
func trieFor(f File, ctx Context) *ktrie {
	root := &ktrie{}
	add := func(p []string) {
		t := root
		for _, k := range p {
			if t.full {
				return
			}
			next := &t.any
			if k != "*" {
				if t.kids == nil {
					t.kids = map[string]*ktrie{}
				}
				c := t.kids[k]
				if c == nil {
					c = &ktrie{}
					t.kids[k] = c
				}
				next = &c
			} else if *next == nil {
				*next = &ktrie{}
			}
			t = *next
		}
		t.full, t.kids, t.any = true, nil, nil
	}
	for _, k := range f.Keys {
		add(splitPath(k.Path))
		for _, e := range k.Except {
			if ep := exceptPath(e, ctx); ep != nil {
				add(ep)
			}
		}
	}
	return mergeAny(root)
}

// mergeAny makes every named child hold what "*" holds too.
func mergeAny(t *ktrie) *ktrie {
	if t == nil || t.full {
		return t
	}
	for k, c := range t.kids {
		t.kids[k] = mergeAny(unionTrie(c, t.any))
	}
	t.any = mergeAny(t.any)
	return t
}

func unionTrie(a, b *ktrie) *ktrie {
	switch {
	case a == nil && b == nil:
		return nil
	case a == nil:
		a, b = b, nil
	}
	if a.full || (b != nil && b.full) {
		return &ktrie{full: true}
	}
	n := &ktrie{}
	for _, x := range []*ktrie{a, b} {
		if x == nil {
			continue
		}
		for k, c := range x.kids {
			if n.kids == nil {
				n.kids = map[string]*ktrie{}
			}
			n.kids[k] = unionTrie(n.kids[k], c)
		}
		n.any = unionTrie(n.any, x.any)
	}
	return n
}

// parseJSON parses the whole document.
func parseJSON(src []byte) (*jdoc, error) { return parseJSONFor(src, fullTrie) }

// parseJSONFor parses src, building the nodes t names. The syntax checks
// and their errors are those of the whole parse, in the same order.
func parseJSONFor(src []byte, t *ktrie) (*jdoc, error) {
	p := &jparser{src: src}
	// A UTF-8 byte order mark is tolerated (lenient, like the loaders).
	if bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) {
		p.i = 3
	}
	if err := p.skip(); err != nil {
		return nil, err
	}
	root, _, err := p.value(0, t)
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
	return &jdoc{src: src, root: root, pruned: t != fullTrie, odd: p.odd, trie: t}, nil
}

type jparser struct {
	src []byte
	i   int
	// keys: the keys of the open objects (decoded), for the duplicate
	// check; odd: a duplicate or "__proto__" key was seen.
	keys [][]byte
	odd  bool
	slab []jnode
}

// node allocates a node from a slab (placeholders are many and small).
func (p *jparser) node() *jnode {
	if len(p.slab) == cap(p.slab) {
		p.slab = make([]jnode, 0, 256)
	}
	p.slab = p.slab[:len(p.slab)+1]
	return &p.slab[len(p.slab)-1]
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

// value parses one value. With t nil it builds nothing and returns only the
// value's kind (its span is [start, p.i)).
func (p *jparser) value(depth int, t *ktrie) (*jnode, jkind, error) {
	if depth > maxDepth {
		return nil, 0, p.errf("nested deeper than %d", maxDepth)
	}
	if p.i >= len(p.src) {
		return nil, 0, p.errf("unexpected end")
	}
	start := p.i
	switch c := p.src[p.i]; {
	case c == '{':
		n, err := p.object(depth, t)
		return n, jObject, err
	case c == '[':
		n, err := p.array(depth, t)
		return n, jArray, err
	case c == '"':
		if t == nil {
			return nil, jString, p.skipString()
		}
		s, err := p.string()
		if err != nil {
			return nil, 0, err
		}
		n := p.node()
		*n = jnode{kind: jString, start: start, end: p.i, str: s}
		return n, jString, nil
	case c == '-' || (c >= '0' && c <= '9'):
		if err := p.number(); err != nil {
			return nil, 0, err
		}
		if t == nil {
			return nil, jNumber, nil
		}
		n := p.node()
		*n = jnode{kind: jNumber, start: start, end: p.i, str: string(p.src[start:p.i])}
		return n, jNumber, nil
	default:
		var k jkind
		switch {
		case bytes.HasPrefix(p.src[p.i:], []byte("true")):
			p.i, k = p.i+4, jTrue
		case bytes.HasPrefix(p.src[p.i:], []byte("false")):
			p.i, k = p.i+5, jFalse
		case bytes.HasPrefix(p.src[p.i:], []byte("null")):
			p.i, k = p.i+4, jNull
		default:
			return nil, 0, p.errf("unexpected %q", c)
		}
		if t == nil {
			return nil, k, nil
		}
		n := p.node()
		*n = jnode{kind: k, start: start, end: p.i}
		return n, k, nil
	}
}

// member parses a member's value for an object being built: the trie's
// child is built; any other value is checked and left as a placeholder.
func (p *jparser) memberValue(depth int, t *ktrie) (*jnode, error) {
	if t != nil {
		n, _, err := p.value(depth, t)
		return n, err
	}
	start := p.i
	_, k, err := p.value(depth, nil)
	if err != nil {
		return nil, err
	}
	n := p.node()
	*n = jnode{kind: k, start: start, end: p.i}
	return n, nil
}

func (p *jparser) object(depth int, t *ktrie) (*jnode, error) {
	var n *jnode
	if t != nil {
		n = p.node()
		*n = jnode{kind: jObject, start: p.i}
	}
	base := len(p.keys)
	defer func() { p.keys = p.keys[:base] }()
	p.i++ // {
	count := 0
	for {
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.i >= len(p.src) {
			return nil, p.errf("unterminated object")
		}
		if p.src[p.i] == '}' {
			p.i++
			p.checkKeys(base)
			if n != nil {
				n.end = p.i
			}
			return n, nil
		}
		if count > 0 {
			if p.src[p.i] != ',' {
				return nil, p.errf("expected , or }")
			}
			p.i++
			if err := p.skip(); err != nil {
				return nil, err
			}
			if p.i < len(p.src) && p.src[p.i] == '}' { // trailing comma
				p.i++
				p.checkKeys(base)
				if n != nil {
					n.end = p.i
				}
				return n, nil
			}
		}
		if p.i >= len(p.src) || p.src[p.i] != '"' {
			return nil, p.errf("expected a key")
		}
		ks := p.i
		key, err := p.keyBytes()
		if err != nil {
			return nil, err
		}
		p.keys = append(p.keys, key)
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
		count++
		if n == nil {
			if _, _, err := p.value(depth+1, nil); err != nil {
				return nil, err
			}
			continue
		}
		v, err := p.memberValue(depth+1, t.child(key))
		if err != nil {
			return nil, err
		}
		n.members = append(n.members, jmember{key: string(key), keyStart: ks, val: v})
	}
}

// checkKeys looks for a duplicate or "__proto__" among the keys of the
// object that ends (p.keys[base:]).
func (p *jparser) checkKeys(base int) {
	ks := p.keys[base:]
	for i, k := range ks {
		if string(k) == "__proto__" {
			p.odd = true
			return
		}
		if len(ks) <= 16 {
			for _, o := range ks[:i] {
				if bytes.Equal(o, k) {
					p.odd = true
					return
				}
			}
		}
	}
	if len(ks) > 16 {
		s := append([][]byte(nil), ks...)
		slices.SortFunc(s, bytes.Compare)
		for i := 1; i < len(s); i++ {
			if bytes.Equal(s[i-1], s[i]) {
				p.odd = true
				return
			}
		}
	}
}

func (p *jparser) array(depth int, t *ktrie) (*jnode, error) {
	var n *jnode
	// Protected keys never lie inside arrays: an array on the way to
	// one is a placeholder (its elements only checked).
	build := t != nil && t.full
	if t != nil {
		n = p.node()
		*n = jnode{kind: jArray, start: p.i}
	}
	p.i++ // [
	count := 0
	for {
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.i >= len(p.src) {
			return nil, p.errf("unterminated array")
		}
		if p.src[p.i] == ']' {
			p.i++
			if n != nil {
				n.end = p.i
			}
			return n, nil
		}
		if count > 0 {
			if p.src[p.i] != ',' {
				return nil, p.errf("expected , or ]")
			}
			p.i++
			if err := p.skip(); err != nil {
				return nil, err
			}
			if p.i < len(p.src) && p.src[p.i] == ']' {
				p.i++
				if n != nil {
					n.end = p.i
				}
				return n, nil
			}
		}
		count++
		if !build {
			if _, _, err := p.value(depth+1, nil); err != nil {
				return nil, err
			}
			continue
		}
		v, _, err := p.value(depth+1, t)
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, v)
	}
}

// scanString passes a string token (the loop of the whole parse: a
// backslash skips the next byte; a control byte is refused).
func (p *jparser) scanString() (start int, escaped bool, err error) {
	start = p.i
	p.i++ // "
	for p.i < len(p.src) {
		// Eight plain bytes at a time (most of a big document is the
		// text of strings): none is a quote, a backslash or a control.
		for p.i+8 <= len(p.src) && plain8(binary.LittleEndian.Uint64(p.src[p.i:])) {
			p.i += 8
		}
		if p.i >= len(p.src) {
			break
		}
		switch c := p.src[p.i]; {
		case c == '\\':
			escaped = true
			p.i += 2
		case c == '"':
			p.i++
			return start, escaped, nil
		case c < 0x20:
			return start, escaped, p.errf("control character in a string")
		default:
			p.i++
		}
	}
	return start, escaped, p.errf("unterminated string")
}

// plain8: none of the eight bytes of x is '"', '\\' or below 0x20
// (the classic "has a zero byte" test, exact).
func plain8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	hasZero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	return hasZero(x^(ones*'"'))|hasZero(x^(ones*'\\'))|((x-ones*0x20)&^x&highs) == 0
}

// string reads a string token and decodes it with encoding/json (escapes,
// surrogate pairs, invalid UTF-8 replaced as a JavaScript reader would).
func (p *jparser) string() (string, error) {
	start, escaped, err := p.scanString()
	if err != nil {
		return "", err
	}
	raw := p.src[start+1 : p.i-1]
	if !escaped && utf8.Valid(raw) {
		return string(raw), nil // the common case, without the decoder
	}
	var s string
	if err := json.Unmarshal(p.src[start:p.i], &s); err != nil {
		return "", fmt.Errorf("%w: offset %d: bad string: %v", errSyntax, start, err)
	}
	return s, nil
}

// keyBytes reads a key: its decoded bytes, without a copy in the common
// case.
func (p *jparser) keyBytes() ([]byte, error) {
	start, escaped, err := p.scanString()
	if err != nil {
		return nil, err
	}
	raw := p.src[start+1 : p.i-1]
	if !escaped && utf8.Valid(raw) {
		return raw, nil
	}
	var s string
	if err := json.Unmarshal(p.src[start:p.i], &s); err != nil {
		return nil, fmt.Errorf("%w: offset %d: bad string: %v", errSyntax, start, err)
	}
	return []byte(s), nil
}

// skipString checks a string value that is not built: what encoding/json
// would refuse in it is refused with its words.
func (p *jparser) skipString() error {
	start, escaped, err := p.scanString()
	if err != nil || !escaped || validEscapes(p.src[start+1:p.i-1]) {
		return err
	}
	var s string
	if err := json.Unmarshal(p.src[start:p.i], &s); err != nil {
		return fmt.Errorf("%w: offset %d: bad string: %v", errSyntax, start, err)
	}
	return nil
}

// validEscapes: every backslash in s starts an escape encoding/json reads.
func validEscapes(s []byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		i++
		if i >= len(s) {
			return false
		}
		switch s[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			if i+5 > len(s) {
				return false
			}
			for _, h := range s[i+1 : i+5] {
				if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
					return false
				}
			}
			i += 4
		default:
			return false
		}
	}
	return true
}

func (p *jparser) number() error {
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
		return p.errf("bad number")
	}
	if p.i < len(p.src) && p.src[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return p.errf("bad number")
		}
	}
	if p.i < len(p.src) && (p.src[p.i] == 'e' || p.src[p.i] == 'E') {
		p.i++
		if p.i < len(p.src) && (p.src[p.i] == '+' || p.src[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return p.errf("bad number")
		}
	}
	return nil
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

// MarshalJSON writes the literal back (an array put back by putItems).
func (n jnum) MarshalJSON() ([]byte, error) { return []byte(n), nil }

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
		doc, err := parseJSONFor(src, d.trie)
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
	if d.pruned {
		if !d.odd {
			return nil // none anywhere: the parse checked every object
		}
		whole, err := parseJSON(d.src)
		if err != nil {
			return []string{"document that does not read whole"} // never: the same syntax
		}
		return whole.oddities()
	}
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
