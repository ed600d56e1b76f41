package agentcfg

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// Context is what the table's placeholders stand for.
type Context struct {
	// Workspace replaces "{workspace}" in exceptions.
	Workspace string
}

// Version is one state of a file's content.
type Version struct {
	Exists bool
	Data   []byte
}

// Result says what a file must become.
type Result struct {
	// Keys are the protected key paths the agent changed (for display), or,
	// with Whole, one sentence saying why the whole file is put back.
	Keys []string
	// Whole: the snapshot comes back as it was (or the file is removed).
	Whole bool
	// Remove: the file must not exist (it did not at start).
	Remove bool
	// Out is the new content when neither Remove nor nothing-to-do.
	Out []byte
	// Unreadable: the agent's version could not be parsed (it may be a
	// write still in progress; the guard waits for the writer to close).
	Unreadable bool
}

// Changed reports whether anything must be done.
func (r Result) Changed() bool { return len(r.Keys) > 0 }

// maxEdits bounds the splices of one merge: past it the whole snapshot comes
// back (each splice parses the document again).
const maxEdits = 64

// document is a parsed configuration file.
type document interface {
	lookup(path []string) (any, bool)
	// has: lookup's bool, without decoding the value.
	has(path []string) bool
	keysAt(path []string) []string
	// set makes path hold what from holds there (absent: remove it).
	set(path []string, from document) error
	bytes() ([]byte, error)
	oddities() []string
}

// parse reads a document; a JSON one only as far as t needs (nil: whole).
func parse(f Format, data []byte, t *ktrie) (document, error) {
	switch f {
	case JSON:
		if t == nil {
			t = fullTrie
		}
		d, err := parseJSONFor(data, t)
		if err != nil {
			return nil, err
		}
		return &jsonDoc{d}, nil
	case TOML:
		return parseTOML(data)
	}
	return nil, fmt.Errorf("agentcfg: format %q is not parsed", f)
}

func emptyDoc(f Format) document {
	d, _ := parse(f, []byte("{}"), nil)
	if f == TOML {
		d, _ = parse(f, nil, nil)
	}
	return d
}

// Merge compares the agent's version of a file (cur) with the host's at
// start (snap) and returns what the file must become: the agent's version
// with every protected key as it was at start.
func Merge(f File, ctx Context, snap, cur Version) Result {
	return newMerger(f, ctx, snap).merge(cur)
}

// merger merges versions of one file against one snapshot, which it parses
// once (the guard checks a file after every write the agent makes).
type merger struct {
	f     File
	ctx   Context
	snap  Version
	trie  *ktrie // JSON: the nodes Merge looks at
	sd    document
	sdOK  bool
	sdErr error
}

func newMerger(f File, ctx Context, snap Version) *merger {
	m := &merger{f: f, ctx: ctx, snap: snap}
	if f.Format == JSON {
		m.trie = trieFor(f, ctx)
	}
	return m
}

// snapDoc is the snapshot parsed (the first call parses it). Merge only
// reads it.
func (m *merger) snapDoc() (document, error) {
	if !m.sdOK {
		m.sd, m.sdErr = parse(m.f.Format, m.snap.Data, m.trie)
		m.sdOK = true
	}
	return m.sd, m.sdErr
}

func (m *merger) merge(cur Version) Result {
	f, ctx, snap, trie := m.f, m.ctx, m.snap, m.trie
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
		sd, err := m.snapDoc()
		if err != nil {
			return whole("the file was deleted")
		}
		ed := emptyDoc(f.Format)
		for _, pk := range protectedPaths(f, ctx, sd, ed) {
			if !equalMasked(sd, ed, pk) {
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
	cd, err := parse(f.Format, cur.Data, trie)
	if err != nil {
		r := whole(fmt.Sprintf("the agent's version cannot be read (%v)", err))
		r.Unreadable = true
		return r
	}
	sd := emptyDoc(f.Format)
	if snap.Exists {
		if sd, err = m.snapDoc(); err != nil {
			return whole(fmt.Sprintf("the host's version could not be read (%v), so no change to it is kept", err))
		}
	}
	if odd := minus(cd.oddities(), sd.oddities()); len(odd) > 0 {
		return whole("the agent's version has a " + odd[0])
	}
	var changed [][]string
	pks := protectedPaths(f, ctx, sd, cd)
	// isChanged[i]: pks[i] is in changed (its paths are distinct: a list
	// search per path was quadratic, seconds for a file of thousands of
	// projects whose every mcpServers the agent changed).
	isChanged := make([]bool, len(pks))
	for i, pk := range pks {
		if !equalMasked(sd, cd, pk) {
			changed = append(changed, pk.path)
			isChanged[i] = true
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
	for i, pk := range pks {
		if isChanged[i] {
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
	var orig document
	if j, ok := cd.(*jsonDoc); ok {
		orig = &jsonDoc{j.d} // set replaces out's tree, never changes it
	} else {
		orig, _ = parse(f.Format, cur.Data, trie)
	}
	out := cd
	for i, pk := range pks {
		if !isChanged[i] {
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
		if err := putItems(out, orig, pk, func(b []byte) (document, error) { return parse(f.Format, b, nil) }); err != nil {
			return whole(fmt.Sprintf("a protected key could not be put back (%v)", err))
		}
	}
	b, err := out.bytes()
	if err != nil {
		return whole(fmt.Sprintf("the merged version could not be written (%v)", err))
	}
	// Belt and braces: the result must read back with every protected key
	// as at start, or the whole snapshot comes back.
	check, err := parse(f.Format, b, trie)
	if err != nil {
		return whole(fmt.Sprintf("the merged version does not read back (%v)", err))
	}
	for _, pk := range protectedPaths(f, ctx, sd, check) {
		if !equalMasked(sd, check, pk) {
			return whole("the merged version does not read back as the host's for " + Display(pk.path))
		}
	}
	if odd := minus(check.oddities(), sd.oddities()); len(odd) > 0 {
		return whole("the merged version has a " + odd[0])
	}
	r.Out = b
	return r
}

// protectedPath is one concrete protected path and the exception paths
// inside it that stay the agent's.
type protectedPath struct {
	path  []string
	masks [][]string
	// items: array elements inside that stay the agent's (Except.Item).
	items []item
	// falseSet: a false value there is not absence (Key.FalseIsSet).
	falseSet bool
}

// item is one string element of the array at path (Except.Item, filled).
type item struct {
	path  []string
	value string
}

// protectedPaths expands the file's keys over both documents: "*" takes
// every key either has there. A path inside another protected path is left
// out (the outer one covers it); a path inside an applicable exception too.
func protectedPaths(f File, ctx Context, docs ...document) []protectedPath {
	type named struct {
		p    []string
		name string
	}
	// The patterns and exceptions split once (a big ~/.claude.json has
	// thousands of concrete paths).
	type except struct {
		e  Except
		ep []string
		it string // Except.Item filled
	}
	pats := make([][]string, len(f.Keys))
	excepts := make([][]except, len(f.Keys))
	var all []named
	for i, k := range f.Keys {
		pats[i] = splitPath(k.Path)
		for _, e := range k.Except {
			ep, it := exceptPath(e, ctx), exceptItem(e, ctx)
			if ep != nil && (e.Item == "" || it != "") {
				excepts[i] = append(excepts[i], except{e, ep, it})
			}
		}
		for _, p := range expand(pats[i], docs) {
			all = append(all, named{p, Display(p)})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		return len(all[i].p) < len(all[j].p) || len(all[i].p) == len(all[j].p) && all[i].name < all[j].name
	})
	var out []protectedPath
	seen := make(map[string]bool, len(all))
	for _, n := range all {
		p := n.p
		if seen[n.name] || coveredBy(p, seen) {
			continue
		}
		seen[n.name] = true
		pp := protectedPath{path: p}
		skip := false
		for i := range f.Keys {
			if !matches(pats[i], p) {
				continue
			}
			if f.Keys[i].FalseIsSet && len(pats[i]) == len(p) {
				pp.falseSet = true
			}
			for _, x := range excepts[i] {
				if !exceptionHolds(x.e, x.ep, docs[len(docs)-1]) {
					continue
				}
				switch {
				case x.e.Item != "":
					// One element of an array at or below p, never
					// the whole path.
					if hasPrefix(x.ep, p) {
						pp.items = append(pp.items, item{x.ep, x.it})
					}
				case hasPrefix(p, x.ep):
					skip = true // the whole path is the agent's
				case hasPrefix(x.ep, p):
					pp.masks = append(pp.masks, x.ep)
				}
			}
		}
		if !skip {
			out = append(out, pp)
		}
	}
	return out
}

// coveredBy: a proper prefix of p is protected already (seen holds the
// display names so far, shorter paths first).
func coveredBy(p []string, seen map[string]bool) bool {
	for i := 1; i < len(p); i++ {
		// Display(p[:1]) is p[0] for a plain key: no string built.
		if i == 1 && !strings.ContainsAny(p[0], `./ "[]`) && p[0] != "" {
			if seen[p[0]] {
				return true
			}
			continue
		}
		if seen[Display(p[:i])] {
			return true
		}
	}
	return false
}

// exceptPath splits an exception's path with the placeholders filled in;
// nil when a placeholder has no value.
func exceptPath(e Except, ctx Context) []string {
	p := splitPath(e.Path)
	for i, s := range p {
		if s == "{workspace}" {
			if ctx.Workspace == "" {
				return nil
			}
			p[i] = ctx.Workspace
		}
	}
	return p
}

// exceptItem is an exception's Item with the placeholder filled; "" when
// it has none or the placeholder has no value.
func exceptItem(e Except, ctx Context) string {
	if e.Item == "{workspace}" {
		return ctx.Workspace
	}
	return e.Item
}

// exceptionHolds: an exception with a required value holds only while the
// agent's document has exactly that value there.
func exceptionHolds(e Except, ep []string, cur document) bool {
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

// normalize makes decoded JSON and TOML scalars comparable with a literal.
func normalize(v any) any {
	switch x := v.(type) {
	case jnum:
		return string(x)
	case float64:
		return fmt.Sprint(x)
	case int64:
		return fmt.Sprint(x)
	}
	return v
}

// expand turns a pattern into the concrete paths present in any of docs.
func expand(pat []string, docs []document) [][]string {
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
			if d.has(p) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

func matches(pat, p []string) bool {
	if len(pat) != len(p) {
		return false
	}
	for i := range pat {
		if pat[i] != "*" && pat[i] != p[i] {
			return false
		}
	}
	return true
}

func appendPath(p []string, k string) []string {
	return append(append(make([]string, 0, len(p)+1), p...), k)
}

func hasPrefix(p, pre []string) bool {
	if len(pre) > len(p) {
		return false
	}
	for i := range pre {
		if p[i] != pre[i] {
			return false
		}
	}
	return true
}

func splitPath(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ".")
}

// equalMasked compares the values at pk's path in both documents, with the
// exception paths (its masks) left out of both.
func equalMasked(a, b document, pk protectedPath) bool {
	path, masks := pk.path, pk.masks
	if ja, ok := a.(*jsonDoc); ok && len(masks) == 0 && len(pk.items) == 0 {
		if jb, ok := b.(*jsonDoc); ok {
			// The same bytes read the same: no need to decode them.
			na, nb := ja.d.lookup(path), jb.d.lookup(path)
			if na != nil && nb != nil && bytes.Equal(ja.d.src[na.start:na.end], jb.d.src[nb.start:nb.end]) {
				return true
			}
		}
	}
	va, oka := a.lookup(path)
	vb, okb := b.lookup(path)
	if len(masks) > 0 || len(pk.items) > 0 {
		va, oka = mask(va, oka, path, masks, pk.items)
		vb, okb = mask(vb, okb, path, masks, pk.items)
	}
	// null, false, "", {} and [] say what absence says (no servers, no
	// hooks, no approvals, switched off): agents write such defaults (Claude
	// Code gives every project it opens "mcpServers": {}, "allowedTools": []
	// and "hasTrustDialogAccepted": false).
	if pk.falseSet {
		// The host's false stays false: dropped or turned on, it differs.
		oka, okb = oka && (va == false || !empty(va)), okb && (vb == false || !empty(vb))
	} else {
		oka, okb = oka && !empty(va), okb && !empty(vb)
	}
	if !oka || !okb {
		return oka == okb
	}
	return reflect.DeepEqual(va, vb)
}

// mask returns a copy of v (found at path) without the mask paths and the
// items' elements; a value that is nothing but masked parts counts as
// absent.
func mask(v any, ok bool, path []string, masks [][]string, items []item) (any, bool) {
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

// dropAt deletes rel inside m, and the objects on its way that it leaves
// empty: an exception deeper than one level (Qwen Code's
// security.auth.selectedType) leaves nothing of the agent's behind, as an
// exception one level down does.
func dropAt(m map[string]any, rel []string) {
	if len(rel) == 1 {
		delete(m, rel[0])
		return
	}
	sub, ok := m[rel[0]].(map[string]any)
	if !ok {
		return
	}
	dropAt(sub, rel[1:])
	if len(sub) == 0 {
		delete(m, rel[0])
	}
}

// withoutItem drops the string elements equal to s from the array at rel
// inside v (a copy it may change); v itself when rel leads to no array.
func withoutItem(v any, rel []string, s string) any {
	if len(rel) > 0 {
		if m, ok := v.(map[string]any); ok {
			if e, ok := m[rel[0]]; ok {
				m[rel[0]] = withoutItem(e, rel[1:], s)
			}
		}
		return v
	}
	a, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, 0, len(a))
	for _, e := range a {
		if e != s {
			out = append(out, e)
		}
	}
	return out
}

// putItems gives back to out (the host's value at pk's path put back) the
// agent's answer for each item: its element in the agent's array (orig),
// or not. reparse reads the document that carries the new array to set.
func putItems(out, orig document, pk protectedPath, reparse func([]byte) (document, error)) error {
	for _, it := range pk.items {
		have, _ := out.lookup(it.path)
		h, isArray := have.([]any)
		if have != nil && !isArray {
			continue // the host's value is no list: it stays whole
		}
		v, _ := orig.lookup(it.path)
		a, _ := v.([]any)
		agentHas := slices.Contains(a, any(it.value))
		if slices.Contains(h, any(it.value)) == agentHas {
			continue // the host's order kept
		}
		want := append(slices.Clip(h), it.value)
		if !agentHas {
			want, _ = withoutItem(h, nil, it.value).([]any)
		}
		var nest any = want
		for i := len(it.path) - 1; i >= 0; i-- {
			nest = map[string]any{it.path[i]: nest}
		}
		b, err := json.Marshal(nest)
		if err != nil {
			return err
		}
		from, err := reparse(b)
		if err != nil {
			return err
		}
		if err := out.set(it.path, from); err != nil {
			return err
		}
	}
	return nil
}

func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return x == ""
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = deepCopy(e)
		}
		return a
	}
	return v
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		found := false
		for _, y := range b {
			found = found || x == y
		}
		if !found {
			out = append(out, x)
		}
	}
	return out
}

// Display renders a key path: dotted, with keys that hold dots, slashes or
// spaces quoted (projects["/home/u/app"].mcpServers).
func Display(p []string) string {
	var b strings.Builder
	for i, k := range p {
		if k == "" || strings.ContainsAny(k, `./ "[]`) {
			q, _ := json.Marshal(k)
			b.WriteString("[" + string(q) + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(k)
	}
	return b.String()
}

// --- JSON ------------------------------------------------------------------

type jsonDoc struct{ d *jdoc }

func (j *jsonDoc) lookup(path []string) (any, bool) {
	n := j.d.lookup(path)
	if n == nil {
		return nil, false
	}
	return n.decode(), true
}

func (j *jsonDoc) has(path []string) bool { return j.d.lookup(path) != nil }

func (j *jsonDoc) keysAt(path []string) []string {
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

func (j *jsonDoc) set(path []string, from document) error {
	var raw *string
	if src, ok := from.(*jsonDoc); ok {
		if n := src.d.lookup(path); n != nil {
			s := src.d.raw(n)
			raw = &s
		}
	}
	b, err := jsonSet(j.d, path, raw)
	if err != nil {
		return err
	}
	d, err := parseJSONFor(b, j.d.trie)
	if err != nil {
		return fmt.Errorf("edit broke the document: %w", err)
	}
	j.d = d
	return nil
}

func (j *jsonDoc) bytes() ([]byte, error) { return j.d.src, nil }

func (j *jsonDoc) oddities() []string { return j.d.oddities() }
