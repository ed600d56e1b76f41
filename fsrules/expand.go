package fsrules

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// Input is the filesystem part of the policy. Paths are absolute and clean
// (resolved by the caller); Readable and Writable are the visible roots that
// expansion walks (the workspace is normally in Writable, or in Readable with
// --read-only). Do not pass "/": it would walk the whole host.
type Input struct {
	Workspace string
	Home      string
	// Deny holds the --deny patterns as the user wrote them.
	Deny           []string
	NoDefaultDeny  bool
	AllowGitConfig bool
	Readable       []string
	Writable       []string
	// MaxEntries bounds the walk (0: 1,000,000); beyond it Expand fails with
	// ErrTooMany rather than return a partial plan.
	MaxEntries int
}

// Mask is one path to cover.
type Mask struct {
	Path string `json:"path"`
	Kind Kind   `json:"kind"`
	Dir  bool   `json:"dir"`
	// Rule says why: "deny secrets/**", "default: .env",
	// "default: .ssh/ (via symlink /ws/keys)".
	Rule string `json:"rule"`
}

// Plan is the result of Expand.
type Plan struct {
	// Masks, sorted so that a parent comes before anything inside it: mount
	// them in order, after the --read/--write binds (deny wins). A mask whose
	// path does not exist in the sandbox's tree (under a private tmpfs) can be
	// skipped.
	Masks []Mask `json:"masks"`
	// Found are the entries named ".git" or "HEAD" that the walk saw and did
	// not hide: the git directories and .git files of the visible trees,
	// for package gitguard (which decides what in them must not change).
	Found []string `json:"found,omitempty"`
	// Notes are warnings for stderr and --dry-run: patterns that matched
	// nothing, protections that could not apply.
	Notes []string `json:"notes,omitempty"`
	// Absent lists protected paths that did not exist at start inside a
	// writable root. Nothing can be mounted over them (jail creates nothing on
	// the host), so the agent could create them: the supervisor watches them
	// while the sandbox runs and checks them again at exit.
	Absent []Absent `json:"absent,omitempty"`
}

// Absent is one protected path that does not exist yet.
type Absent struct {
	Path string `json:"path"`
	// Dir: the rule protects a directory of that name (trailing '/').
	Dir  bool   `json:"dir,omitempty"`
	Kind Kind   `json:"kind"`
	Rule string `json:"rule"`
}

type compiled struct {
	user  []rule
	all   []rule // user + built-ins
	roots []string
}

// Validate checks the flags without walking: every --deny compiles, none
// denies "/", relative patterns stay inside the workspace, and no visible root
// (nor the workspace) lies inside a denied path, nor a writable one inside a
// built-in read-only path. Errors are *Error.
func Validate(in Input) error {
	_, err := compile(in)
	return err
}

func compile(in Input) (*compiled, error) {
	for _, p := range append([]string{in.Workspace, in.Home}, append(in.Readable, in.Writable...)...) {
		if p != "" && (p[0] != '/' || path.Clean(p) != p) {
			return nil, &Error{Key: "path", Value: p, Err: fs.ErrInvalid, Hint: "paths must be absolute and clean (a bug in jail if you see this)"}
		}
	}
	c := &compiled{}
	for _, d := range in.Deny {
		p, err := Compile(d, in.Workspace, in.Home)
		if err != nil {
			return nil, err
		}
		c.user = append(c.user, rule{pat: p, kind: Hide, name: "deny " + d, user: true})
	}
	c.all = append(c.all, c.user...)
	if !in.NoDefaultDeny {
		c.all = append(c.all, builtinRules(in.AllowGitConfig)...)
	}
	type root struct {
		key, p   string
		writable bool
	}
	var roots []root
	if in.Workspace != "" {
		roots = append(roots, root{"workspace", in.Workspace, !contains(in.Readable, in.Workspace)})
	}
	for _, p := range in.Writable {
		roots = append(roots, root{"write", p, true})
	}
	for _, p := range in.Readable {
		roots = append(roots, root{"read", p, false})
	}
	for _, r := range roots {
		// r and each of its ancestors: a deny there hides r entirely.
		for a := r.p; ; a = path.Dir(a) {
			for _, ru := range c.all {
				if !ru.pat.Match(a, true) {
					continue
				}
				if ru.kind == Hide {
					hint := "remove one of the two"
					if !ru.user {
						hint = "a built-in protection; `no-default-deny` lifts all built-ins, or choose another path"
					}
					return nil, &Error{Key: r.key, Value: r.p, Err: fmt.Errorf("%w: inside %s (deny wins)", ErrConflict, ru.name), Hint: hint, Rule: ru.name}
				}
				if r.writable {
					hint := "`no-default-deny` lifts the built-in read-only rules"
					if ru.git {
						hint = "`allow-git-config` makes git config and hooks writable"
					}
					return nil, &Error{Key: r.key, Value: r.p, Err: fmt.Errorf("%w: inside %s, which is kept read-only", ErrConflict, ru.name), Hint: hint, Rule: ru.name}
				}
			}
			if a == "/" {
				break
			}
		}
		c.roots = append(c.roots, r.p)
	}
	sort.Strings(c.roots)
	c.roots = dedupe(c.roots)
	return c, nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func dedupe(l []string) []string {
	out := l[:0]
	for i, s := range l {
		if i == 0 || s != l[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// Expand validates in, then walks the visible roots once (not following
// symlinks, not crossing mount points) and returns every path to mask. An
// absolute --deny outside the roots is expanded from its literal prefix (under
// /proc, /sys and /dev it is ignored with a note: those are the sandbox's own).
func Expand(in Input) (Plan, error) {
	c, err := compile(in)
	if err != nil {
		return Plan{}, err
	}
	max := in.MaxEntries
	if max <= 0 {
		max = 1_000_000
	}
	w := &walker{masks: map[string]Mask{}, hits: map[string]int{}, max: max, roots: c.roots, links: map[[2]uint64]string{}}
	for _, r := range c.roots {
		if err := w.walkRoot(r, c.all); err != nil {
			return Plan{}, err
		}
	}
	// Absolute user patterns whose literal prefix is outside every root.
	var plan Plan
	for _, ru := range c.user {
		pre := ru.pat.prefix
		if coveredBy(pre, c.roots) || anyUnder(c.roots, pre) {
			continue // walked (or will be) with the roots
		}
		switch {
		case in.Home != "" && under(pre, in.Home):
			plan.Notes = append(plan.Notes, fmt.Sprintf("%s: %s is inside the home directory, which the sandbox replaces with an empty tmpfs: nothing to mask", ru.name, pre))
			w.hits[ru.name]++
			continue
		case under(pre, "/proc") || under(pre, "/sys") || under(pre, "/dev"):
			plan.Notes = append(plan.Notes, fmt.Sprintf("%s: %s belongs to the sandbox's own /proc, /sys or /dev: ignored", ru.name, pre))
			w.hits[ru.name]++
			continue
		}
		if err := w.walkRoot(pre, []rule{ru}); err != nil {
			return Plan{}, err
		}
	}
	if err := w.hardlinks(); err != nil {
		return Plan{}, err
	}
	for _, ru := range c.user {
		if w.hits[ru.name] == 0 {
			plan.Notes = append(plan.Notes, fmt.Sprintf("%s matched nothing (pattern %s)", ru.name, ru.pat.Abs))
		}
	}
	plan.Found = w.found
	if !in.NoDefaultDeny {
		for _, r := range in.Writable {
			notes, absent := absentNotes(r, in.Home, in.AllowGitConfig)
			plan.Notes, plan.Absent = append(plan.Notes, notes...), append(plan.Absent, absent...)
		}
		if in.Workspace != "" && !contains(in.Writable, in.Workspace) && !contains(in.Readable, in.Workspace) {
			notes, absent := absentNotes(in.Workspace, in.Home, in.AllowGitConfig)
			plan.Notes, plan.Absent = append(plan.Notes, notes...), append(plan.Absent, absent...)
		}
	}
	plan.Masks = w.result()
	return plan, nil
}

func coveredBy(p string, roots []string) bool {
	for _, r := range roots {
		if under(p, r) {
			return true
		}
	}
	return false
}

func anyUnder(roots []string, p string) bool {
	for _, r := range roots {
		if under(r, p) {
			return true
		}
	}
	return false
}

type walker struct {
	masks  map[string]Mask
	hits   map[string]int
	n, max int
	roots  []string
	links  map[[2]uint64]string // (dev, ino) of hidden files with other links -> path
	found  []string             // .git and HEAD entries (Plan.Found)
}

func (w *walker) add(m Mask) {
	if old, ok := w.masks[m.Path]; ok && old.Kind == Hide {
		return
	}
	w.masks[m.Path] = m
}

func (w *walker) walkRoot(root string, rules []rule) error {
	st, err := os.Lstat(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // an absolute deny prefix that does not exist: "matched nothing"
		}
		return fmt.Errorf("expand deny rules: %w", err)
	}
	isDir := st.IsDir()
	// The root itself (an absolute --deny naming one file or directory).
	if root != "/" {
		if w.entry(path.Dir(root), path.Base(root), isDir, st.Mode()&fs.ModeSymlink != 0, rules, indexRules(rules).candidates(path.Base(root), nil), false) {
			return nil
		}
		w.gitEntry(root)
	}
	if !isDir {
		return nil
	}
	var live []rule
	for _, r := range rules {
		if r.pat.live(root) {
			live = append(live, r)
		}
	}
	m, ok := w.masks[root]
	idx := indexRules(live)
	return w.walkDir(root, devOf(st), live, &idx, ok && m.Kind == ReadOnly)
}

func devOf(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev)
	}
	return 0
}

// entry tests one entry against the rules, records a mask, and reports whether
// the walk must not descend into it (hidden).
func (w *walker) entry(dir, base string, isDir, isLink bool, rules []rule, cands []int, inRO bool) bool {
	var hit *rule
	for _, i := range cands {
		r := &rules[i]
		if hit != nil && hit.kind == Hide {
			break
		}
		dirLike := isDir
		if isLink && r.pat.DirOnly {
			dirLike = true // decided on the target below
		}
		if !r.pat.matchEntry(dir, base, dirLike) {
			continue
		}
		if hit == nil || r.kind == Hide {
			hit = r
		}
	}
	if hit == nil {
		return false
	}
	p := join(dir, base)
	if isLink {
		// A matching symlink: mask what it points to, since opening it inside
		// the sandbox reaches the target (same paths inside and out).
		t, err := filepath.EvalSymlinks(p)
		if err != nil {
			return true // dangling: nothing to read through it
		}
		ti, err := os.Stat(t)
		if err != nil || (hit.pat.DirOnly && !ti.IsDir()) {
			return true
		}
		w.hits[hit.name]++
		w.add(Mask{Path: t, Kind: hit.kind, Dir: ti.IsDir(), Rule: hit.name + " (via symlink " + p + ")"})
		return true
	}
	w.hits[hit.name]++
	if hit.kind == ReadOnly && inRO {
		return false // already inside a read-only mask
	}
	w.add(Mask{Path: p, Kind: hit.kind, Dir: isDir, Rule: hit.name})
	if hit.kind == Hide && !isDir {
		w.noteLinks(p)
	}
	return hit.kind == Hide
}

// noteLinks remembers a hidden file that has other hard links, to hide those
// too (a hard link elsewhere in a visible tree reads the same secret).
func (w *walker) noteLinks(p string) {
	var st syscall.Stat_t
	if syscall.Lstat(p, &st) == nil && st.Nlink > 1 {
		w.links[[2]uint64{uint64(st.Dev), st.Ino}] = p
	}
}

func (w *walker) walkDir(dir string, dev uint64, rules []rule, idx *ruleIndex, inRO bool) error {
	// Unsorted (f.ReadDir, not os.ReadDir): the masks are sorted at the end.
	f, err := os.Open(dir)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist) {
			return nil // unreadable on the host: unreadable inside too
		}
		return fmt.Errorf("expand deny rules: %w", err)
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist) {
			return nil // unreadable on the host: unreadable inside too
		}
		return fmt.Errorf("expand deny rules: %w", err)
	}
	w.n += len(ents)
	if w.n > w.max {
		return &Error{Key: "walk", Value: dir, Err: ErrTooMany, Hint: fmt.Sprintf("more than %d entries under the visible roots; narrow `read`/`write`", w.max)}
	}
	var buf []int
	for _, e := range ents {
		name := e.Name()
		t := e.Type()
		isDir, isLink := t.IsDir(), t&fs.ModeSymlink != 0
		buf = idx.candidates(name, buf[:0])
		hidden := w.entry(dir, name, isDir, isLink, rules, buf, inRO)
		if !hidden {
			w.gitEntry(join(dir, name))
		}
		if hidden || !isDir {
			continue
		}
		p := join(dir, name)
		if contains(w.roots, p) {
			continue // another root, walked on its own
		}
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if devOf(fi) != dev {
			continue // a mount point: not descended
		}
		var live []rule
		for _, r := range rules {
			if r.pat.live(p) {
				live = append(live, r)
			}
		}
		if len(live) == 0 {
			continue
		}
		m, ok := w.masks[p]
		sub := idx
		if len(live) != len(rules) { // the same rules in the same order keep their index
			ix := indexRules(live)
			sub = &ix
		}
		if err := w.walkDir(p, dev, live, sub, inRO || (ok && m.Kind == ReadOnly)); err != nil {
			return err
		}
	}
	return nil
}

// gitEntry records a .git or HEAD entry for Plan.Found.
func (w *walker) gitEntry(p string) {
	if b := path.Base(p); b == ".git" || b == "HEAD" {
		w.found = append(w.found, p)
	}
}

// hardlinks finds the other names of hidden files with a link count above one.
func (w *walker) hardlinks() error {
	if len(w.links) == 0 {
		return nil
	}
	for _, r := range w.roots {
		err := filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() {
				if m, ok := w.masks[p]; ok && m.Kind == Hide {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			var st syscall.Stat_t
			if syscall.Lstat(p, &st) != nil || st.Nlink < 2 {
				return nil
			}
			if orig, ok := w.links[[2]uint64{uint64(st.Dev), st.Ino}]; ok && orig != p {
				w.add(Mask{Path: p, Kind: Hide, Rule: w.masks[orig].Rule + " (hard link of " + orig + ")"})
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("expand deny rules: hard links: %w", err)
		}
	}
	return nil
}

// result drops masks inside hidden directories and read-only masks inside
// read-only directories, and sorts parents first.
func (w *walker) result() []Mask {
	paths := make([]string, 0, len(w.masks))
	for p := range w.masks {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []Mask
	var hidden, ro []string
	for _, p := range paths {
		m := w.masks[p]
		if coveredByAny(p, hidden) || (m.Kind == ReadOnly && coveredByAny(p, ro)) {
			continue
		}
		out = append(out, m)
		if m.Dir && m.Kind == Hide {
			hidden = append(hidden, p)
		}
		if m.Dir && m.Kind == ReadOnly {
			ro = append(ro, p)
		}
	}
	return out
}

func coveredByAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if p != d && under(p, d) {
			return true
		}
	}
	return false
}

// absentNotes lists the protected names missing at the top of a writable root:
// they cannot be masked (nothing exists to mount over and jail creates nothing
// on the host), so the agent may create them there.
func absentNotes(root, home string, allowGit bool) ([]string, []Absent) {
	var ro, hide, made []string
	var absent []Absent
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return nil, nil // a file given with --write: nothing can be created under it
	}
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }
	for _, b := range Builtins {
		if b.Git && allowGit || strings.ContainsAny(b.Name, "*?[") {
			continue
		}
		name := strings.TrimSuffix(b.Name, "/")
		if strings.HasPrefix(name, ".git/") {
			// Names inside a git dir: package gitguard knows which exist in
			// each repository and watches the absent ones (and git init).
			continue
		}
		if b.Git {
			if st, err := os.Lstat(filepath.Join(root, ".git")); err != nil || !st.IsDir() {
				continue // .gitmodules matters in a git checkout only
			}
		}
		p := filepath.Join(root, name)
		if first, rest, ok := strings.Cut(name, "/"); ok && filepath.Base(root) == first {
			// The root is the name's own directory (-w ~/.claude for
			// .claude/plugins/): the protected path is inside it.
			p = filepath.Join(root, rest)
		}
		if exists(p) {
			continue
		}
		if why, ok := agentMade[b.Name]; ok && home != "" && p == filepath.Join(home, name) {
			// The agent's own directory in its own home: it makes it at
			// its first start (see agentMade), so it may appear.
			shown, _ := filepath.Rel(root, p)
			made = append(made, fmt.Sprintf("%s: %s/ does not exist: %s, so it may appear (read-only from the next run on)", root, shown, why))
			continue
		}
		absent = append(absent, Absent{Path: p, Dir: strings.HasSuffix(b.Name, "/"), Kind: b.Kind, Rule: "default: " + b.Name})
		shown, _ := filepath.Rel(root, p)
		if strings.HasSuffix(b.Name, "/") {
			shown += "/"
		}
		switch b.Kind {
		case ReadOnly:
			ro = append(ro, shown)
		case Hide:
			if strings.HasSuffix(b.Name, "/") {
				hide = append(hide, shown)
			}
		}
	}
	out := made
	if len(ro) > 0 {
		out = append(out, fmt.Sprintf("%s: %s do not exist, so nothing is mounted over them: if the agent creates one, the supervisor moves it out of the tree into the quarantine (watched while the sandbox runs, checked again at exit)", root, strings.Join(ro, " ")))
	}
	if len(hide) > 0 {
		out = append(out, fmt.Sprintf("%s: %s do not exist, so nothing is masked: if the agent creates one, the supervisor moves it out of the tree into the quarantine (no secret is exposed; watched while the sandbox runs, checked again at exit)", root, strings.Join(hide, " ")))
	}
	return out, absent
}

// ruleIndex finds the rules that can match a name without trying them all:
// rules whose last element is a literal are looked up by that name; the
// others (globs, **) are always candidates. 1000 --deny patterns over 10k
// files were 10M element matches without it.
type ruleIndex struct {
	byName  map[string][]int // last element a literal: that name
	byExt   map[string][]int // last element "*.ext" (one dot): that extension
	byFirst map[byte][]int   // last element starts with a literal: its first byte
	other   []int
}

func indexRules(rules []rule) ruleIndex {
	idx := ruleIndex{byName: map[string][]int{}, byExt: map[string][]int{}, byFirst: map[byte][]int{}}
	for i := range rules {
		segs := rules[i].pat.segs
		if l := len(segs); l > 0 {
			last := segs[l-1]
			switch {
			case last.kind == segLiteral:
				idx.byName[last.lit] = append(idx.byName[last.lit], i)
				continue
			case last.kind == segSuffix && strings.LastIndexByte(last.lit, '.') == 0:
				idx.byExt[last.lit[1:]] = append(idx.byExt[last.lit[1:]], i)
				continue
			case last.kind == segPrefix && last.lit != "":
				idx.byFirst[last.lit[0]] = append(idx.byFirst[last.lit[0]], i)
				continue
			case last.kind == segGlob && last.pre != "":
				idx.byFirst[last.pre[0]] = append(idx.byFirst[last.pre[0]], i)
				continue
			}
		}
		idx.other = append(idx.other, i)
	}
	return idx
}

// candidates appends, in rule order, the rules that may match name.
func (idx ruleIndex) candidates(name string, out []int) []int {
	var ext []int
	if d := strings.LastIndexByte(name, '.'); d >= 0 {
		ext = idx.byExt[name[d+1:]]
	}
	var first []int
	if name != "" {
		first = idx.byFirst[name[0]]
	}
	return mergeSorted(out, idx.byName[name], ext, first, idx.other)
}

// mergeSorted appends the union of ascending lists, in ascending order.
func mergeSorted(out []int, lists ...[]int) []int {
	for {
		best := -1
		for i, l := range lists {
			if len(l) > 0 && (best < 0 || l[0] < lists[best][0]) {
				best = i
			}
		}
		if best < 0 {
			return out
		}
		out = append(out, lists[best][0])
		lists[best] = lists[best][1:]
	}
}
