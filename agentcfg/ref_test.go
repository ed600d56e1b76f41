package agentcfg

// This file: the JSON parser and Merge as they were before session 5's fast
// path (agentcfg-fast), kept verbatim as the reference the differential
// fuzz target (FuzzMergeDifferential) holds the fast path to: the same
// verdicts, keys and bytes.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"
)

func refParseJSON(src []byte) (*jdoc, error) {
	p := &refParser{src: src}
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

type refParser struct {
	src []byte
	i   int
}

func (p *refParser) errf(format string, a ...any) error {
	return fmt.Errorf("%w: offset %d: %s", errSyntax, p.i, fmt.Sprintf(format, a...))
}

// skip passes whitespace and comments.
func (p *refParser) skip() error {
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

func (p *refParser) value(depth int) (*jnode, error) {
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

func (p *refParser) object(depth int) (*jnode, error) {
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

func (p *refParser) array(depth int) (*jnode, error) {
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
func (p *refParser) string() (string, error) {
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

func (p *refParser) number() (*jnode, error) {
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

// --- edits: each returns new source bytes; the caller parses again. -------

func refSplice(src []byte, start, end int, with string) []byte {
	out := make([]byte, 0, len(src)-(end-start)+len(with))
	out = append(out, src[:start]...)
	out = append(out, with...)
	return append(out, src[end:]...)
}

// refIndentAt returns the whitespace that starts the line holding offset i.
func refIndentAt(src []byte, i int) string {
	ls := bytes.LastIndexByte(src[:i], '\n') + 1
	j := ls
	for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	return string(src[ls:j])
}

// refIndentUnit guesses the document's indentation step (two spaces by default).
func refIndentUnit(src []byte) string {
	for _, line := range bytes.Split(src, []byte("\n"))[1:] {
		t := bytes.TrimLeft(line, " \t")
		if len(t) == len(line) || len(t) == 0 {
			continue
		}
		return string(line[:len(line)-len(t)])
	}
	return "  "
}

// refDeleteMember removes the i-th member of obj with its separating comma.
func refDeleteMember(src []byte, obj *jnode, i int) []byte {
	ms := obj.members
	switch {
	case i < len(ms)-1:
		return refSplice(src, ms[i].keyStart, ms[i+1].keyStart, "")
	case i > 0:
		return refSplice(src, ms[i-1].val.end, ms[i].val.end, "")
	default:
		// The only member: a trailing comma after it must go too.
		end := ms[i].val.end
		q := &refParser{src: src, i: end}
		if q.skip() == nil && q.i < len(src) && src[q.i] == ',' {
			end = q.i + 1
		}
		return refSplice(src, ms[i].keyStart, end, "")
	}
}

// refInsertMember adds "key": raw as the last member of obj.
func refInsertMember(src []byte, obj *jnode, key, raw string) []byte {
	k, _ := json.Marshal(key)
	if n := len(obj.members); n > 0 {
		last := obj.members[n-1]
		ind := refIndentAt(src, last.keyStart)
		sep := ",\n" + ind
		if !bytes.Contains(src[obj.start:obj.end], []byte("\n")) {
			sep = ", " // a one-line object stays on one line
		}
		return refSplice(src, last.val.end, last.val.end, sep+string(k)+": "+raw)
	}
	ind := refIndentAt(src, obj.start)
	return refSplice(src, obj.start, obj.end, "{\n"+ind+refIndentUnit(src)+string(k)+": "+raw+"\n"+ind+"}")
}

// refNest wraps raw in objects for the keys of path: refNest(["a","b"], "1") is
// {"a": {"b": 1}}'s inner part {"b": 1} for key a.
func refNest(path []string, raw string) string {
	for i := len(path) - 1; i >= 0; i-- {
		k, _ := json.Marshal(path[i])
		raw = "{" + string(k) + ": " + raw + "}"
	}
	return raw
}

// refJSONSet makes path hold raw (nil: be absent) and returns the new source.
// Every member named like the last key is replaced, so that no duplicate
// survives to be read by a loader that keeps the first one.
func refJSONSet(d *jdoc, path []string, raw *string) ([]byte, error) {
	if len(path) == 0 {
		return nil, errors.New("agentcfg: empty path")
	}
	src := d.src
	for {
		doc, err := refParseJSON(src)
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
			inner := refNest(path[depth+1:], *raw)
			if count == 1 {
				return refSplice(src, next.start, next.end, inner), nil
			}
			if count > 1 {
				src = refDeleteFirst(src, obj, path[depth])
				continue
			}
			return refInsertMember(src, obj, path[depth], inner), nil
		}
		key := path[len(path)-1]
		cur, count := obj.member(key)
		switch {
		case count == 0 && raw == nil:
			return src, nil
		case count == 0:
			return refInsertMember(src, obj, key, *raw), nil
		case count == 1 && raw != nil:
			return refSplice(src, cur.start, cur.end, *raw), nil
		default:
			src = refDeleteFirst(src, obj, key)
		}
	}
}

func refDeleteFirst(src []byte, obj *jnode, key string) []byte {
	for i, m := range obj.members {
		if m.key == key {
			return refDeleteMember(src, obj, i)
		}
	}
	return src
}

// raw returns the source text of a node, with comments inside kept.

// oddities lists what a loader may read differently from this parser:
// "__proto__" members (Object.assign and many merge helpers take them as the
// prototype, so a key hidden there reaches the loader without being where
// the table looks) and duplicate keys (a loader that keeps the first one
// would read another value). Agents never write either; merge reverts a
// document that gained one.
func refOddities(d *jdoc) []string {
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
func refParse(f Format, data []byte) (document, error) {
	switch f {
	case JSON:
		d, err := refParseJSON(data)
		if err != nil {
			return nil, err
		}
		return &refJSONDoc{d}, nil
	case TOML:
		return parseTOML(data)
	}
	return nil, fmt.Errorf("agentcfg: format %q is not parsed", f)
}

func refEmptyDoc(f Format) document {
	d, _ := refParse(f, []byte("{}"))
	if f == TOML {
		d, _ = refParse(f, nil)
	}
	return d
}

// refMerge compares the agent's version of a file (cur) with the host's at
// start (snap) and returns what the file must become: the agent's version
// with every protected key as it was at start.
func refMerge(f File, ctx Context, snap, cur Version) Result {
	whole := func(why string) Result {
		if !snap.Exists {
			return Result{Keys: []string{why}, Whole: true, Remove: true}
		}
		return Result{Keys: []string{why}, Whole: true, Out: snap.Data}
	}
	if !cur.Exists {
		if !snap.Exists {
			return Result{}
		}
		if f.Format == Whole {
			return whole("the file was deleted")
		}
		sd, err := refParse(f.Format, snap.Data)
		if err != nil {
			return whole("the file was deleted")
		}
		ed := refEmptyDoc(f.Format)
		for _, pk := range refProtectedPaths(f, ctx, sd, ed) {
			if !refEqualMasked(sd, ed, pk) {
				return whole("the file was deleted")
			}
		}
		return Result{}
	}
	if snap.Exists && bytes.Equal(snap.Data, cur.Data) {
		return Result{}
	}
	if f.Format == Whole {
		if !snap.Exists {
			return whole("the file was created")
		}
		return whole("the file was changed")
	}
	cd, err := refParse(f.Format, cur.Data)
	if err != nil {
		r := whole(fmt.Sprintf("the agent's version cannot be read (%v)", err))
		r.Unreadable = true
		return r
	}
	sd := refEmptyDoc(f.Format)
	if snap.Exists {
		if sd, err = refParse(f.Format, snap.Data); err != nil {
			return whole(fmt.Sprintf("the host's version could not be read (%v), so no change to it is kept", err))
		}
	}
	if odd := minus(cd.oddities(), sd.oddities()); len(odd) > 0 {
		return whole("the agent's version has a " + odd[0])
	}
	var changed [][]string
	pks := refProtectedPaths(f, ctx, sd, cd)
	for _, pk := range pks {
		if !refEqualMasked(sd, cd, pk) {
			changed = append(changed, pk.path)
		}
	}
	if len(changed) == 0 {
		return Result{}
	}
	r := Result{}
	for _, p := range changed {
		r.Keys = append(r.Keys, Display(p))
	}
	edits := 0
	for _, pk := range pks {
		if containsPath(changed, pk.path) {
			edits += 1 + len(pk.masks) + len(pk.items)
		}
	}
	if len(changed) > maxEdits || edits > 4*maxEdits {
		w := whole(fmt.Sprintf("%d protected keys changed", len(changed)))
		w.Keys = append(w.Keys, r.Keys...)
		return w
	}
	// Put each changed key back, then the agent's values of the exceptions
	// inside it. The agent's original document is the source of those.
	orig, _ := refParse(f.Format, cur.Data)
	out := cd
	for _, pk := range pks {
		if !containsPath(changed, pk.path) {
			continue
		}
		if err := out.set(pk.path, sd); err != nil {
			return whole(fmt.Sprintf("a protected key could not be put back (%v)", err))
		}
		for _, m := range pk.masks {
			if err := out.set(m, orig); err != nil {
				return whole(fmt.Sprintf("a protected key could not be put back (%v)", err))
			}
		}
		// The item elements: the same code as the fast path's (this file
		// holds the parser and the key walk to, not the list edit).
		if err := putItems(out, orig, pk, func(b []byte) (document, error) { return refParse(f.Format, b) }); err != nil {
			return whole(fmt.Sprintf("a protected key could not be put back (%v)", err))
		}
	}
	b, err := out.bytes()
	if err != nil {
		return whole(fmt.Sprintf("the merged version could not be written (%v)", err))
	}
	// Belt and braces: the result must read back with every protected key
	// as at start, or the whole snapshot comes back.
	check, err := refParse(f.Format, b)
	if err != nil {
		return whole(fmt.Sprintf("the merged version does not read back (%v)", err))
	}
	for _, pk := range refProtectedPaths(f, ctx, sd, check) {
		if !refEqualMasked(sd, check, pk) {
			return whole("the merged version does not read back as the host's for " + Display(pk.path))
		}
	}
	if odd := minus(check.oddities(), sd.oddities()); len(odd) > 0 {
		return whole("the merged version has a " + odd[0])
	}
	r.Out = b
	return r
}

// --- JSON ------------------------------------------------------------------

type refJSONDoc struct{ d *jdoc }

func (j *refJSONDoc) lookup(path []string) (any, bool) {
	n := j.d.lookup(path)
	if n == nil {
		return nil, false
	}
	return n.decode(), true
}

func (j *refJSONDoc) has(path []string) bool { return j.d.lookup(path) != nil }

func (j *refJSONDoc) keysAt(path []string) []string {
	n := j.d.lookup(path)
	if n == nil || n.kind != jObject {
		return nil
	}
	var out []string
	for _, m := range n.members {
		out = append(out, m.key)
	}
	return out
}

func (j *refJSONDoc) set(path []string, from document) error {
	var raw *string
	if src, ok := from.(*refJSONDoc); ok {
		if n := src.d.lookup(path); n != nil {
			s := src.d.raw(n)
			raw = &s
		}
	}
	b, err := refJSONSet(j.d, path, raw)
	if err != nil {
		return err
	}
	d, err := refParseJSON(b)
	if err != nil {
		return fmt.Errorf("edit broke the document: %w", err)
	}
	j.d = d
	return nil
}

func (j *refJSONDoc) bytes() ([]byte, error) { return j.d.src, nil }

func (j *refJSONDoc) oddities() []string { return refOddities(j.d) }

// refProtectedPaths expands the file's keys over both documents: "*" takes
// every key either has there. A path inside another protected path is left
// out (the outer one covers it); a path inside an applicable exception too.
func refProtectedPaths(f File, ctx Context, docs ...document) []protectedPath {
	type named struct {
		p    []string
		name string
	}
	var all []named
	for _, k := range f.Keys {
		for _, p := range refExpand(splitPath(k.Path), docs) {
			all = append(all, named{p, Display(p)})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		return len(all[i].p) < len(all[j].p) || len(all[i].p) == len(all[j].p) && all[i].name < all[j].name
	})
	var out []protectedPath
	seen := map[string]bool{}
	for _, n := range all {
		p := n.p
		if seen[n.name] || refCoveredBy(p, seen) {
			continue
		}
		seen[n.name] = true
		pp := protectedPath{path: p}
		skip := false
		for _, k := range f.Keys {
			if !matches(splitPath(k.Path), p) {
				continue
			}
			for _, e := range k.Except {
				ep := exceptPath(e, ctx)
				if ep == nil || !refExceptionHolds(e, ep, docs[len(docs)-1]) {
					continue
				}
				switch {
				case e.Item != "":
					if it := exceptItem(e, ctx); it != "" && hasPrefix(ep, p) {
						pp.items = append(pp.items, item{ep, it})
					}
				case hasPrefix(p, ep):
					skip = true // the whole path is the agent's
				case hasPrefix(ep, p):
					pp.masks = append(pp.masks, ep)
				}
			}
		}
		if !skip {
			out = append(out, pp)
		}
	}
	return out
}

// refCoveredBy: a proper prefix of p is protected already (seen holds the
// display names so far, shorter paths first).
func refCoveredBy(p []string, seen map[string]bool) bool {
	for i := 1; i < len(p); i++ {
		if seen[Display(p[:i])] {
			return true
		}
	}
	return false
}

// refExceptionHolds: an exception with a required value holds only while the
// agent's document has exactly that value there.
func refExceptionHolds(e Except, ep []string, cur document) bool {
	if e.Value == "" {
		return true
	}
	v, ok := cur.lookup(ep)
	if !ok {
		return false
	}
	var want any
	if err := json.Unmarshal([]byte(e.Value), &want); err != nil {
		return false
	}
	return reflect.DeepEqual(normalize(v), normalize(want))
}

// refExpand turns a pattern into the concrete paths present in any of docs.
func refExpand(pat []string, docs []document) [][]string {
	paths := [][]string{{}}
	for _, seg := range pat {
		var next [][]string
		for _, p := range paths {
			if seg != "*" {
				next = append(next, appendPath(p, seg))
				continue
			}
			seen := map[string]bool{}
			for _, d := range docs {
				for _, k := range d.keysAt(p) {
					if !seen[k] {
						seen[k] = true
						next = append(next, appendPath(p, k))
					}
				}
			}
		}
		paths = next
	}
	// Keep the paths that exist in some document.
	var out [][]string
	for _, p := range paths {
		for _, d := range docs {
			if _, ok := d.lookup(p); ok {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// refEqualMasked compares the values at path in both documents, with the
// exception paths (masks) left out of both.
func refEqualMasked(a, b document, pk protectedPath) bool {
	path, masks := pk.path, pk.masks
	va, oka := a.lookup(path)
	vb, okb := b.lookup(path)
	if len(masks) > 0 || len(pk.items) > 0 {
		va, oka = refMask(va, oka, path, masks, pk.items)
		vb, okb = refMask(vb, okb, path, masks, pk.items)
	}
	// null, false, "", {} and [] say what absence says (no servers, no
	// hooks, no approvals, switched off): agents write such defaults (Claude
	// Code gives every project it opens "mcpServers": {}, "allowedTools": []
	// and "hasTrustDialogAccepted": false).
	oka, okb = oka && !empty(va), okb && !empty(vb)
	if !oka || !okb {
		return oka == okb
	}
	return reflect.DeepEqual(va, vb)
}

// refMask returns a copy of v (found at path) without the refMask paths; a value
// that is nothing but masked parts counts as absent.
func refMask(v any, ok bool, path []string, masks [][]string, items []item) (any, bool) {
	if !ok {
		return nil, false
	}
	v = deepCopy(v)
	for _, it := range items {
		v = withoutItem(v, it.path[len(path):], it.value)
	}
	for _, m := range masks {
		rel := m[len(path):]
		if len(rel) == 0 {
			return nil, false
		}
		if obj, ok := v.(map[string]any); ok {
			dropAt(obj, rel)
		}
	}
	if m, isMap := v.(map[string]any); isMap && len(m) == 0 {
		return nil, false
	}
	return v, true
}

func containsPath(l [][]string, p []string) bool {
	for _, x := range l {
		if reflect.DeepEqual(x, p) {
			return true
		}
	}
	return false
}
