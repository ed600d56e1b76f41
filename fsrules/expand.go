package fsrules

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/bits"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/dircache"
	"github.com/jail-sandbox/jail/internal/asciifold"
)

// Input is the filesystem part of the policy. Paths are absolute and clean
// (resolved by the caller); Readable and Writable are the visible roots that
// expansion walks (the workspace is normally in Writable, or in Readable with
// --read-only). Do not pass "/": it would walk the whole host.
type Input struct {
	Workspace string
	// Home is the user's home directory ($HOME): "~/" in --deny patterns, and
	// where home-anchored built-ins (~/.local/bin/) apply.
	Home string
	// Homes are more home directories of the same user (the passwd entry when
	// $HOME points elsewhere): home-anchored built-ins apply there too, as in
	// /root and every /home/*.
	Homes []string
	// Deny holds the --deny patterns as the user wrote them.
	Deny           []string
	NoDefaultDeny  bool
	AllowGitConfig bool
	Readable       []string
	Writable       []string
	// Lifted are the paths (absolute, clean, symlink-free: the caller
	// resolves and checks them) where the built-in protections other than
	// git's do not apply, at them and below (--no-default-deny-at; see
	// lift.go). They must lie in the visible roots to lift anything.
	Lifted []string
	// Own are the Writable roots that are jail's own directories (a
	// cache's, statedir.CacheFrom) bound at a tool's path: no program on
	// the host reads them, only the next sandbox that mounts them. They are
	// walked like any writable root (protected names found there are
	// masked or kept read-only, hard links to protected files caught), but
	// the protected names missing there are not listed in Plan.Absent:
	// watching for a secret or a startup file to appear guards a reader on
	// the host, and there is none.
	Own []string
	// Hidden are paths the sandbox replaces with empty tmpfs (/tmp, /home,
	// the home directory): the walk does not descend into them (a root
	// inside one is walked on its own).
	Hidden []string
	// Mountinfo is /proc/self/mountinfo as the caller read it (nil: Expand
	// reads it), so that a plan reads the mount table once.
	Mountinfo []byte
	// MaxEntries bounds the walk (0: 1,000,000); beyond it Expand fails with
	// ErrTooMany rather than return a partial plan.
	MaxEntries int
	// Dirs, when set, lists the directories the walk reads: package
	// dircache answers for a directory unchanged since an earlier run with
	// what that run kept of it. Nil: every directory is read.
	Dirs DirReader `json:"-"`
	// Rules, when set, are the compiled rules of an Input with the same
	// Workspace, Home, homes' anchors, Deny, NoDefaultDeny and
	// AllowGitConfig (CheckRules): Validate and Expand use them instead
	// of compiling the patterns again. Rules of any other values are not
	// used: the Input's own are compiled.
	Rules *Rules `json:"-"`
}

// DirReader lists a directory for the walk (package dircache implements
// it). ReadDir returns the entries of dir that keep selects, how many
// entries dir has in all and the device it is on; its errors are os.Open's and os.File.ReadDir's.
// keep depends only on view, dir, the name and the type, so an answer kept
// from an earlier read of the same, unchanged directory is the same.
type DirReader interface {
	ReadDir(view, dir string, keep func(name string, t fs.FileMode) bool) (ents []fs.DirEntry, total int, dev uint64, err error)
}

// dirLookup is a DirReader that can answer for a directory unchanged since
// it last read it without reading it (package dircache): then the walk
// does not check its access again either.
type dirLookup interface {
	LookupKey(view, dir string) (ents []fs.DirEntry, total int, key dircache.Key, ok bool)
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
	// while the sandbox runs, moves any that appears into the run's
	// quarantine, and checks them again at exit.
	Absent []Absent `json:"absent,omitempty"`
	// Globs are the directories of home-anchored read-only built-in
	// patterns (~/.codex/*.sqlite*) inside a writable root: the pattern
	// covers the names there at start only, so the supervisor watches the
	// directory for new names matching it (package sentinel lists what is
	// there when it starts, not from this plan: a plan can be older than
	// the start).
	Globs []Glob `json:"globs,omitempty"`
}

// Glob is a directory watched for new names matching a built-in pattern.
type Glob struct {
	Dir string `json:"dir"`
	// Pattern is a path.Match pattern of one name, ASCII-lowered: the
	// built-ins match names whatever their case.
	Pattern string `json:"pattern"`
	Rule    string `json:"rule"`
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
	rules    *Rules
	user     []rule
	all      []rule // user + built-ins
	roots    []string
	writable []string // the roots the agent may write
}

// ErrUnreadable: a visible root cannot be listed, so what it holds cannot be
// checked.
var ErrUnreadable = errors.New("not readable: what it holds cannot be checked")

// Validate checks the flags without walking: every --deny compiles, none
// denies "/", relative patterns stay inside the workspace, and no visible root
// (nor the workspace) lies inside a denied path, nor a writable one inside a
// built-in read-only path. Errors are *Error.
func Validate(in Input) error {
	_, err := compile(in)
	return err
}

// Rules are the compiled rules of an Input (its --deny patterns and, unless
// NoDefaultDeny, the built-in protections), with the values they were
// compiled from. A start checks the options, then each program directory,
// then plans: CheckRules once, and Input.Rules, let the three share one
// compile. Compiled rules are never changed.
type Rules struct {
	workspace, home string
	anchors         []string // of the homes (homeAnchors), when built-ins apply
	deny            []string
	noDefaultDeny   bool
	allowGitConfig  bool
	builtins        []Builtin // the Builtins they hold (the memo's copy)

	user, all []rule
}

// CheckRules is Validate that also returns the rules it compiled, for the
// Input.Rules of later Validate and Expand calls with the same values.
func CheckRules(in Input) (*Rules, error) {
	c, err := compile(in)
	if err != nil {
		return nil, err
	}
	return c.rules, nil
}

// compileRules compiles in's rules: its --deny patterns (errors are
// *Error, as Validate's) and the built-ins.
func compileRules(in Input) (*Rules, error) {
	r := &Rules{workspace: in.Workspace, home: in.Home, deny: slices.Clone(in.Deny),
		noDefaultDeny: in.NoDefaultDeny, allowGitConfig: in.AllowGitConfig}
	for _, d := range in.Deny {
		p, err := Compile(d, in.Workspace, in.Home)
		if err != nil {
			return nil, err
		}
		r.user = append(r.user, rule{pat: p, kind: Hide, name: "deny " + d, user: true})
	}
	if in.NoDefaultDeny {
		r.all = r.user
		return r, nil
	}
	r.anchors = homeAnchors(userHomes(in))
	var b []rule
	b, r.builtins = builtinRulesAt(in.AllowGitConfig, r.anchors)
	r.all = make([]rule, 0, len(r.user)+len(b))
	r.all = append(append(r.all, r.user...), b...)
	return r, nil
}

// compiledFrom reports whether r were compiled from in's values (and the
// built-ins as they are now): only then may in use them.
func (r *Rules) compiledFrom(in Input) bool {
	if r == nil || r.workspace != in.Workspace || r.home != in.Home || r.noDefaultDeny != in.NoDefaultDeny ||
		r.allowGitConfig != in.AllowGitConfig || !slices.Equal(r.deny, in.Deny) {
		return false
	}
	if in.NoDefaultDeny {
		return true
	}
	return slices.Equal(r.anchors, homeAnchors(userHomes(in))) && slices.Equal(r.builtins, Builtins)
}

func compile(in Input) (*compiled, error) {
	for _, p := range append([]string{in.Workspace, in.Home}, append(in.Readable, in.Writable...)...) {
		if p != "" && (p[0] != '/' || path.Clean(p) != p) {
			return nil, &Error{Key: "path", Value: p, Err: fs.ErrInvalid, Hint: "paths must be absolute and clean (a bug in jail if you see this)"}
		}
	}
	rs := in.Rules
	if !rs.compiledFrom(in) {
		var err error
		if rs, err = compileRules(in); err != nil {
			return nil, err
		}
	}
	c := &compiled{rules: rs, user: rs.user, all: rs.all}
	if err := checkLifts(in, c.all); err != nil {
		return nil, err
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
	// Ancestors no rule matches, checked once: the roots share most of
	// theirs (a profile's fifteen caches under ~/.cache, the home, /), and
	// each was ~400 rules' Match again for every root below it. A path no
	// rule matches refuses no root; one a rule matches is checked for
	// each root, as before.
	unmatched := map[string]bool{}
	for _, r := range roots {
		// r and each of its ancestors: a deny there hides r entirely.
		for a := r.p; ; a = path.Dir(a) {
			if unmatched[a] {
				if a == "/" {
					break
				}
				continue
			}
			// Folded once here, not by each of the ~200 case-insensitive
			// built-ins' Match (a copy each when the path has capitals,
			// /home/Alice/Projects); asciifold.Lower of a folded path is itself.
			la := asciifold.Lower(a)
			matched := false
			for _, ru := range c.all {
				x := a
				if ru.pat.Fold {
					x = la
				}
				if !ru.pat.Match(x, true) {
					continue
				}
				if liftable(&ru) && liftedAt(in.Lifted, a) != "" {
					continue // the user lifted it there (lift.go)
				}
				matched = true
				if ru.kind == Hide {
					hint := "remove one of the two"
					if !ru.user {
						hint = "a built-in protection: choose another path, or `no-default-deny-at` " + a + " lifts the built-ins there (`no-default-deny` all of them)"
					}
					return nil, &Error{Key: r.key, Value: r.p, Err: fmt.Errorf("%w: inside %s (deny wins)", ErrConflict, ru.name), Hint: hint, Rule: ru.name}
				}
				if r.writable {
					hint := "a built-in protection: `no-default-deny-at` " + a + " lifts the built-ins there (`no-default-deny` all of them)"
					if ru.git {
						hint = "`allow-git-config` makes git config and hooks writable"
					}
					return nil, &Error{Key: r.key, Value: r.p, Err: fmt.Errorf("%w: inside %s, which is kept read-only", ErrConflict, ru.name), Hint: hint, Rule: ru.name}
				}
			}
			if !matched {
				unmatched[a] = true
			}
			if a == "/" {
				break
			}
		}
		c.roots = append(c.roots, r.p)
		if r.writable {
			c.writable = append(c.writable, r.p)
		}
	}
	sort.Strings(c.roots)
	c.roots = dedupe(c.roots)
	sort.Strings(c.writable)
	c.writable = dedupe(c.writable)
	return c, nil
}

// userHomes returns the invoking user's home directories named in in.
func userHomes(in Input) []string {
	var out []string
	for _, h := range append([]string{in.Home}, in.Homes...) {
		if h != "" && h != "/" && h[0] == '/' && !contains(out, h) {
			out = append(out, path.Clean(h))
		}
	}
	return out
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
// symlinks, descending into other filesystems mounted inside them) and returns
// every path to mask. An absolute --deny outside the roots is expanded from
// its literal prefix (under /proc, /sys and /dev it is ignored with a note:
// those are the sandbox's own).
//
// What a path is decides its protection, not what an earlier run left: a
// directory the walk cannot list or search is hidden whole (its owner could
// chmod it back inside); every other hard link of a protected file gets the
// same protection; a home's dotfiles that are symlinks into a visible tree
// protect their targets.
func Expand(in Input) (Plan, error) {
	c, err := compile(in)
	if err != nil {
		return Plan{}, err
	}
	max := in.MaxEntries
	if max <= 0 {
		max = 1_000_000
	}
	w := &walker{masks: map[string]Mask{}, hits: map[string]int{}, max: max, roots: c.roots, writable: c.writable,
		links: map[[2]uint64]linkInfo{}, skip: map[string]string{}, dirs: in.Dirs}
	if len(in.Lifted) > 0 && !in.NoDefaultDeny {
		w.lifts, w.liftUsed = in.Lifted, map[string]bool{}
	}
	for _, o := range in.Own {
		if contains(c.writable, o) {
			if w.own == nil {
				w.own = map[string]bool{}
			}
			w.own[o] = true
		}
	}
	if w.dirs == nil {
		w.dirs = dircache.Uncached{}
	}
	if statCache {
		w.stats = map[string]lstatResult{}
	}
	for _, h := range in.Hidden {
		w.skip[h] = ""
	}
	b, err := in.Mountinfo, error(nil)
	if b == nil {
		b, err = ReadMountinfo()
	}
	if err == nil {
		sum := sha256.Sum256(b)
		w.mounts = &sum
		for _, m := range ParseMountinfo(b) {
			if pseudoFS(m.FSType) {
				w.skip[m.Point] = m.FSType
			}
		}
	}
	if !in.NoDefaultDeny {
		w.parents = nestedRules(in.AllowGitConfig)
	}
	w.visible = true
	for _, r := range c.roots {
		if err := w.walkRoot(r, c.all, contains(c.writable, r)); err != nil {
			return Plan{}, err
		}
	}
	w.visible = false
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
		if err := w.walkRoot(pre, []rule{ru}, false); err != nil {
			return Plan{}, err
		}
	}
	if !in.NoDefaultDeny {
		w.lists = listings{bases: append(append(userHomes(in), w.writable...), w.homeDirs(in)...), names: map[string]map[string]bool{}, asked: map[string]map[string]bool{}}
		w.homeLinks(in)
		w.homeFileLinks(in)
	}
	if err := w.hardlinks(); err != nil {
		return Plan{}, err
	}
	plan.Notes = append(plan.Notes, w.notes...)
	for _, ru := range c.user {
		if w.hits[ru.name] == 0 {
			plan.Notes = append(plan.Notes, fmt.Sprintf("%s matched nothing (pattern %s)", ru.name, ru.pat.Abs))
		}
	}
	plan.Found = w.found
	if !in.NoDefaultDeny {
		notes, absent := w.absent(in)
		plan.Notes, plan.Absent = append(plan.Notes, notes...), absent
		plan.Globs = w.globs(in)
		plan.Notes = append(plan.Notes, w.liftNotes()...)
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

// linkInfo is a protected file with more than one name: its other names get
// the same protection.
type linkInfo struct {
	path string
	kind Kind
	rule string
}

type walker struct {
	// viewRules and viewSum are viewDigest's last answer: every root of
	// one Expand is walked with the same rules (c.all), whose digest is
	// the same for each; only the root differs in the view's name.
	viewRules    []rule
	viewSum      string
	masks        map[string]Mask
	hits         map[string]int
	n, max       int
	roots        []string
	writable     []string                   // the writable roots
	rootWritable bool                       // the root being walked is writable
	own          map[string]bool            // writable roots of jail's own (Input.Own): no absent names
	linkedMemo   map[string]map[string]bool // each home's entries that are symlinks (linkedFirst)
	links        map[[2]uint64]linkInfo     // (dev, ino) of protected files with other links
	found        []string                   // .git and HEAD entries (Plan.Found)
	notes        []string
	// parents finds the protected names that must exist under a directory
	// (".docker" -> config.json); nested collects those missing in writable
	// roots.
	parents map[string][]nested
	nested  []Absent
	// skip: directories not walked: hidden by the sandbox (""), or mount
	// points of kernel and automount filesystems (their type).
	skip map[string]string
	// lists: names at the top of homes and writable roots.
	lists listings
	// homeNamesList: the built-ins in the user's homes that homeLinks and
	// homeFileLinks look at (homeNames), once homeNamesDone.
	homeNamesList []homeName
	homeNamesDone bool
	// dirs lists directories; view names the walk of this root with these
	// rules for it (viewOf).
	dirs  DirReader
	view  string
	pbuf  []byte // matchEntryBuf's scratch
	every []int  // 0, 1, 2...: everyRule's
	// liveSets: the live rules and their index for each set of liveRules
	// a root had (liveAt), by the set's bits; liveKey its scratch.
	liveRules []rule
	liveSets  map[string]*liveSet
	liveKey   []byte
	// stats remembers lstats for this plan only (see lstat); nil: none.
	stats map[string]lstatResult
	// lifts are Input.Lifted, liftUsed the ones that took something off
	// (lift.go).
	lifts    []string
	liftUsed map[string]bool
	// The visible side, for the hard-link check of the home's protected
	// directories (homelinks.go): while the visible roots are walked
	// (visible), each directory walked (vdirs), each root that is a file
	// (vfiles), and whether the walk left out a directory that hardlinks
	// would read (vPartial). mounts: SHA-256 of /proc/self/mountinfo (nil:
	// not read).
	visible  bool
	vdirs    []vdir
	vfiles   []string
	vPartial bool
	mounts   *[32]byte
}

// vdir is a directory of a visible root as the walk found it: how many
// entries it has, and whether package dircache answered for it
// (unchanged since ctime) or it was read.
type vdir struct {
	path      string
	total     int
	unchanged bool
	ctime     int64
}

func (w *walker) add(m Mask) {
	if old, ok := w.masks[m.Path]; ok && old.Kind == Hide {
		return
	}
	w.masks[m.Path] = m
}

func (w *walker) walkRoot(root string, rules []rule, writable bool) error {
	w.rootWritable = writable
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
		if w.entry(path.Dir(root), path.Base(root), isDir, st.Mode()&fs.ModeSymlink != 0, rules, w.everyRule(len(rules)), nil) {
			return nil
		}
		w.gitEntry(root)
	}
	if !isDir {
		if w.visible {
			w.vfiles = append(w.vfiles, root)
		}
		return nil
	}
	live, idx := w.liveAt(root, rules)
	var ro *Mask
	if m, ok := w.masks[root]; ok && m.Kind == ReadOnly {
		ro = &m
	}
	idx.check = checkBelow(root, live)
	w.view = w.viewName(root, rules)
	if sz, ok := w.dirs.(dirSizer); ok && w.visible {
		// One slice for the directories of an unchanged tree, not a
		// doubling of it all the way (the bench's tree: 2,800).
		w.vdirs = slices.Grow(w.vdirs, sz.Records(w.view))
	}
	return w.walkDir(root, live, &idx, ro)
}

// liveAt returns the rules live at root (in order) and their index, made
// once for each set of live rules a walk meets: a profile's roots (the
// agent's state directory, each of jail's own caches under it, the
// workspace) mostly share one set, and the index (three maps sized for
// ~170 rules) and the slice were made again at each of them (a fifth of
// walkRoot's time under the claude profile's sixteen roots). The index's
// maps and the slice are only read by the walk; check is the caller's.
func (w *walker) liveAt(root string, rules []rule) ([]rule, ruleIndex) {
	key := w.liveKey[:0]
	var set byte
	for i := range rules {
		if rules[i].pat.live(root) {
			set |= 1 << (i & 7)
		}
		if i&7 == 7 || i == len(rules)-1 {
			key = append(key, set)
			set = 0
		}
	}
	w.liveKey = key
	if len(rules) == 0 || len(w.liveRules) != len(rules) || &w.liveRules[0] != &rules[0] {
		// Sets of other rules (the walk of an absolute --deny prefix has
		// a slice of its own): held here, so its address is never reused.
		w.liveRules, w.liveSets = rules, nil
	}
	if ls, ok := w.liveSets[string(key)]; ok {
		return ls.live, ls.idx
	}
	n := 0
	for _, b := range key {
		n += bits.OnesCount8(b)
	}
	live := make([]rule, 0, n) // shared by the roots: never appended to
	for i := range rules {
		if key[i>>3]&(1<<(i&7)) != 0 {
			live = append(live, rules[i])
		}
	}
	ls := &liveSet{live: live, idx: indexRules(live)}
	if w.liveSets == nil {
		w.liveSets = map[string]*liveSet{}
	}
	w.liveSets[string(key)] = ls
	return ls.live, ls.idx
}

// liveSet is a set of rules live at some root, and their index (liveAt).
type liveSet struct {
	live []rule
	idx  ruleIndex
}

// everyRule returns the indices 0 to n-1: the candidates for the root's
// own entry, asked of every rule in order (the rules an index would
// leave out cannot match, and entry decides by the ones that match, in
// order). An index of every rule for that one name cost two maps sized
// for the ~265 built-ins at each root, in fresh heap pages.
func (w *walker) everyRule(n int) []int {
	if len(w.every) < n {
		w.every = make([]int, n)
		for i := range w.every {
			w.every[i] = i
		}
	}
	return w.every[:n]
}

// dirSizer is a DirReader that knows how many directories an earlier walk
// of a view kept (package dircache).
type dirSizer interface {
	Records(view string) int
}

func maskPtr(m Mask) *Mask { return &m }

// viewVersion changes whenever what walkDir keeps of a directory changes:
// records of the old version are then no one's.
const viewVersion = "fsrules-walk-2"

// viewOf names the walk of root with rules for a DirReader's cache: what it
// keeps of a directory depends on the rules (every one of them, in order)
// and on the directory's path, which the reader adds. It names the
// credentials the walk's access checks ran with too (a hit skips the
// check: walkDir): another user, group list or capability set is another
// view.
func viewOf(root string, rules []rule) string {
	return viewName(root, viewDigest(rules))
}

// viewName is the view of root whose rules and credentials have digest sum.
func viewName(root, sum string) string {
	return viewVersion + "\x00" + root + "\x00" + sum
}

// viewName is viewOf, the rules' digest computed once for the walk's
// roots: the same slice (its first element and length: the rules are
// never changed during an Expand) gives the same digest.
func (w *walker) viewName(root string, rules []rule) string {
	if len(rules) == 0 || len(w.viewRules) != len(rules) || &w.viewRules[0] != &rules[0] {
		w.viewRules, w.viewSum = rules, viewDigest(rules)
	}
	return viewName(root, w.viewSum)
}

// viewDigest is the hex SHA-256 of the rules and the credentials, as
// viewOf names them.
func viewDigest(rules []rule) string {
	// The bytes of fmt's "%q %q %t %t %d %q %t %t\n" per rule, built
	// without fmt (a few hundred rules, at every start and exit check):
	// the same names as the cache files already kept.
	h := sha256.New()
	var b []byte
	for _, r := range rules {
		b = appendQuote(b[:0], r.pat.Source)
		b = append(b, ' ')
		b = appendQuote(b, r.pat.Abs)
		b = append(b, ' ')
		b = strconv.AppendBool(b, r.pat.DirOnly)
		b = append(b, ' ')
		b = strconv.AppendBool(b, r.pat.Fold)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(r.kind), 10)
		b = append(b, ' ')
		b = appendQuote(b, r.name)
		b = append(b, ' ')
		b = strconv.AppendBool(b, r.user)
		b = append(b, ' ')
		b = strconv.AppendBool(b, r.git)
		b = append(b, '\n')
		h.Write(b)
	}
	h.Write([]byte("creds " + creds() + "\n"))
	return hex.EncodeToString(h.Sum(nil))
}

// appendQuote is strconv.AppendQuote: a string of printable ASCII without
// '"' or '\\' (every built-in's name and pattern) is its bytes between
// quotes, copied; anything else goes to strconv, which escapes it.
func appendQuote(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return strconv.AppendQuote(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// entry tests one entry against the rules, records a mask, and reports whether
// the walk must not descend into it (hidden). ro is the read-only mask dir is
// inside, if any.
func (w *walker) entry(dir, base string, isDir, isLink bool, rules []rule, cands []int, ro *Mask) bool {
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
		if !r.pat.matchEntryBuf(&w.pbuf, dir, base, dirLike) {
			continue
		}
		if publicBundle(r, dir, base, isDir, isLink) {
			continue // public certificates (publicpem.go)
		}
		if len(w.lifts) > 0 && w.lifted(r, join(dir, base)) {
			continue // the user lifted it there (lift.go)
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
		w.protect(t, ti.IsDir(), hit.kind, hit.name+" (via symlink "+p+")")
		return true
	}
	w.hits[hit.name]++
	if hit.kind == ReadOnly && ro != nil {
		return false // already inside a read-only mask
	}
	if hit.kind == ReadOnly && !w.rootWritable {
		// A read-only root needs no read-only mask; but a hard link of this
		// file in a writable root would write it.
		if !isDir {
			w.noteLinks(p, ReadOnly, hit.name)
		}
		return false
	}
	w.add(Mask{Path: p, Kind: hit.kind, Dir: isDir, Rule: hit.name})
	switch {
	case !isDir:
		w.noteLinks(p, hit.kind, hit.name)
	case hit.kind == Hide:
		w.hiddenLinks(p, hit.name)
	}
	return hit.kind == Hide
}

// protect masks an existing path found through a symlink (anywhere, not
// only in the root being walked), with its hard links.
func (w *walker) protect(p string, isDir bool, kind Kind, why string) {
	if kind == ReadOnly && enclosingRoot(p, w.writable) == "" {
		if !isDir {
			w.noteLinks(p, kind, why)
		}
		if coveredBy(p, w.roots) {
			return // visible read-only anyway
		}
	}
	w.add(Mask{Path: p, Kind: kind, Dir: isDir, Rule: why})
	switch {
	case !isDir:
		w.noteLinks(p, kind, why)
	case kind == Hide:
		w.hiddenLinks(p, why)
	}
}

// noteLinks remembers a protected file that has other hard links, to protect
// those too: a hard link elsewhere in a visible tree reads (and, if writable,
// writes) the same file. The strongest protection of an inode wins.
func (w *walker) noteLinks(p string, kind Kind, rule string) {
	var st syscall.Stat_t
	if syscall.Lstat(p, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Nlink < 2 {
		return
	}
	w.noteLink(p, uint64(st.Dev), st.Ino, kind, rule)
}

// noteLink remembers the file p, (dev, ino), which has other hard links.
func (w *walker) noteLink(p string, dev, ino uint64, kind Kind, rule string) {
	key := [2]uint64{dev, ino}
	if old, ok := w.links[key]; ok && old.kind == Hide {
		return
	}
	w.links[key] = linkInfo{path: p, kind: kind, rule: rule}
}

// noteTree notes every file under dir that has other hard links (walkLinks),
// in the order filepath.WalkDir would (which of an inode's protected names
// a mask's rule names must not depend on getdents' order); bad hears of
// each directory that cannot be listed or searched, seen (when set) of
// each directory read, with its key. It returns how many entries it saw
// and how many files with other links.
func (w *walker) noteTree(dir string, kind Kind, rule string, bad func(dir string, top bool, err error), seen func(string, dircache.Key)) (int, int) {
	type hit struct {
		p        string
		dev, ino uint64
	}
	var hits []hit
	n := walkLinksKeys(dir, nil, bad, seen, func(p string, dev, ino uint64) { hits = append(hits, hit{p, dev, ino}) })
	sort.Slice(hits, func(i, j int) bool { return walkBefore(hits[i].p, hits[j].p) })
	for _, h := range hits {
		w.noteLink(h.p, h.dev, h.ino, kind, rule)
	}
	return n, len(hits)
}

// walkBefore reports whether filepath.WalkDir reaches a before b: their
// elements compared in order, that is the bytes with '/' before all others.
func walkBefore(a, b string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if ca, cb := a[i], b[i]; ca != cb {
			switch {
			case ca == '/':
				return true
			case cb == '/':
				return false
			}
			return ca < cb
		}
	}
	return len(a) < len(b)
}

// hiddenLinks notes the multiply linked files inside a hidden directory (the
// walk does not descend there otherwise): ~/.aws/credentials linked from the
// workspace by an earlier run must stay unreadable. All of them, however
// many (walkLinks: a getdents per directory, an fstatat per file).
func (w *walker) hiddenLinks(dir, rule string) {
	n, _ := w.noteTree(dir, Hide, rule, func(p string, top bool, err error) {
		if !top {
			w.notes = append(w.notes, fmt.Sprintf("%s: unreadable inside hidden %s: its files' other hard links cannot be found", p, dir))
		}
	}, nil)
	w.n += n
}

// unreadable handles a directory the walk cannot list or search: it is hidden
// whole. Its owner could chmod it back inside the sandbox (an earlier run's
// chmod 311 must not switch the masks inside it off), and a directory that
// can be searched but not listed still opens the names one guesses (.env).
func (w *walker) unreadable(dir string, cause error) error {
	if contains(w.roots, dir) {
		return &Error{Key: "path", Value: dir, Err: fmt.Errorf("%w (%v)", ErrUnreadable, cause), Hint: "chmod u+rx it (an earlier run may have changed its mode), or leave it out"}
	}
	if anyUnder(w.roots, dir) {
		return &Error{Key: "path", Value: dir, Err: fmt.Errorf("%w (%v), and it holds another visible path", ErrUnreadable, cause), Hint: "chmod u+rx it (an earlier run may have changed its mode)"}
	}
	mode := ""
	if fi, err := os.Lstat(dir); err == nil {
		mode = fmt.Sprintf(" (mode %#o)", fi.Mode().Perm())
	}
	w.add(Mask{Path: dir, Kind: Hide, Dir: true, Rule: "default: unreadable directory"})
	w.notes = append(w.notes, fmt.Sprintf("unreadable directory %s%s: hidden whole, since what it holds cannot be checked; chmod u+rx it to see it inside (an earlier run may have changed its mode)", dir, mode))
	return nil
}

func (w *walker) walkDir(dir string, rules []rule, idx *ruleIndex, ro *Mask) error {
	// What the loop below does nothing with is not kept: an entry that is
	// no directory, no .git or HEAD, no file of a read-only directory, and
	// that no rule matches. A directory unchanged since an earlier run is
	// answered with what that run kept (package dircache); the view says
	// whether dir lies in a read-only directory, which keeps its files.
	view := w.view
	if ro != nil {
		view += "\x00ro"
	}
	var ents []fs.DirEntry
	var total int
	var ctime int64
	hit := false
	if lk, ok := w.dirs.(dirLookup); ok && !contains(w.roots, dir) {
		// A record is only ever kept for a directory that passed the access
		// check below in a walk of this view, which names the credentials
		// the check ran with (viewOf); its key (device, inode, ctime) says
		// the directory's mode, owner and ACL are what they were then, since
		// chmod, chown and setfacl each set the ctime. So the check would
		// pass again: an earlier run's chmod 311 is a changed ctime, a miss.
		// A root is always checked (that covers the path above it).
		var key dircache.Key
		ents, total, key, hit = lk.LookupKey(view, dir)
		ctime = key.Ctime
	}
	if !hit {
		// Read and search permission, for the user jail runs as (root has
		// both): the walk must see every name and reach every subdirectory.
		if err := unix.Faccessat(unix.AT_FDCWD, dir, unix.R_OK|unix.X_OK, unix.AT_EACCESS); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if errors.Is(err, fs.ErrPermission) {
				return w.unreadable(dir, err)
			}
			return fmt.Errorf("expand deny rules: %s: %w", dir, err)
		}
		var kbuf []int
		keep := func(name string, t fs.FileMode) bool {
			if t.IsDir() || name == ".git" || name == "HEAD" || ro != nil && t.IsRegular() {
				return true
			}
			isLink := t&fs.ModeSymlink != 0
			kbuf = idx.candidates(name, kbuf[:0])
			for _, i := range kbuf {
				if rules[i].pat.matchEntryBuf(&w.pbuf, dir, name, isLink && rules[i].pat.DirOnly) {
					return true
				}
			}
			return false
		}
		var err error
		ents, total, _, err = w.dirs.ReadDir(view, dir, keep)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if errors.Is(err, fs.ErrPermission) {
				return w.unreadable(dir, err)
			}
			return fmt.Errorf("expand deny rules: %w", err)
		}
	}
	if w.visible {
		w.vdirs = append(w.vdirs, vdir{path: dir, total: total, unchanged: hit, ctime: ctime})
	}
	w.n += total
	if w.n > w.max {
		return &Error{Key: "walk", Value: dir, Err: ErrTooMany, Hint: fmt.Sprintf("more than %d entries under the visible roots; narrow `read`/`write`", w.max)}
	}
	var buf []int
	for _, e := range ents {
		name := e.Name()
		t := e.Type()
		isDir, isLink := t.IsDir(), t&fs.ModeSymlink != 0
		buf = idx.candidates(name, buf[:0])
		if w.entry(dir, name, isDir, isLink, rules, buf, ro) {
			continue
		}
		w.gitEntry(join(dir, name))
		if !isDir {
			if ro != nil && t.IsRegular() {
				w.noteLinks(join(dir, name), ReadOnly, ro.Rule) // a file of .git/hooks/
			}
			continue
		}
		p := join(dir, name)
		if contains(w.roots, p) {
			continue // another root, walked on its own
		}
		if fst, ok := w.skip[p]; ok {
			// The sandbox's own /proc, /sys and /dev replace the host's; a
			// kernel filesystem mounted elsewhere in a visible tree (a host
			// /proc bound into a project) is hidden, not shown.
			if fst != "" && !under(p, "/proc") && !under(p, "/sys") && !under(p, "/dev") {
				w.add(Mask{Path: p, Kind: Hide, Dir: true, Rule: "default: " + fst + " mounted in a visible tree"})
			}
			continue
		}
		if w.rootWritable && ro == nil && w.parents != nil {
			w.nestedAbsent(p, name)
		}
		// Other filesystems mounted here (and btrfs subvolumes) are walked
		// like the rest: the sandbox sees them, writable if the root is.
		// Only the rules that may die below dir are asked (idx.check): a
		// "**" rule whose prefix holds dir is live in every directory
		// below it (some 200 rules in each of 2,800 directories, else).
		n := len(rules) - len(idx.check)
		for _, i := range idx.check {
			if rules[i].pat.live(p) {
				n++
			}
		}
		if n == 0 {
			if w.visible {
				w.vPartial = true // hardlinks reads it: the walk vouches for nothing in it
			}
			continue
		}
		live, sub := rules, idx // the same rules in the same order keep their index
		if n != len(rules) {
			live = make([]rule, 0, n)
			for _, r := range rules {
				if r.pat.live(p) {
					live = append(live, r)
				}
			}
			ix := indexRules(live)
			ix.check = checkBelow(p, live)
			sub = &ix
		}
		subRO := ro
		if m, ok := w.masks[p]; ok && m.Kind == ReadOnly && subRO == nil {
			subRO = maskPtr(m) // a copy made only here: &m would be one per directory
		}
		if err := w.walkDir(p, live, sub, subRO); err != nil {
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

// hardlinks finds the other names of protected files with a link count above
// one, and protects them the same way (a read-only file's links only where
// they are writable).
func (w *walker) hardlinks() error {
	if len(w.links) == 0 {
		return nil
	}
	for _, r := range w.roots {
		writable := contains(w.writable, r)
		skip := func(p string) bool {
			if contains(w.roots, p) {
				return true // walked on its own
			}
			if _, ok := w.skip[p]; ok {
				return true
			}
			m, ok := w.masks[p]
			return ok && m.Kind == Hide
		}
		// A directory that cannot be read was hidden whole by the walk
		// (unreadable) or is below a hidden one: nothing to say.
		walkLinks(r, skip, nil, func(p string, dev, ino uint64) {
			li, ok := w.links[[2]uint64{dev, ino}]
			if !ok || li.path == p || (li.kind == ReadOnly && !writable) {
				return
			}
			w.add(Mask{Path: p, Kind: li.kind, Rule: li.rule + " (hard link of " + li.path + ")"})
		})
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

// enclosingRoot returns the deepest root containing p, or "".
func enclosingRoot(p string, roots []string) string {
	best := ""
	for _, r := range roots {
		if under(p, r) && len(r) > len(best) {
			best = r
		}
	}
	return best
}

// ruleIndex finds the rules that can match a name without trying them all:
// rules whose last element is a literal are looked up by that name; the
// others (globs, **) are always candidates. 1000 --deny patterns over 10k
// files were 10M element matches without it. Case-insensitive rules (Fold)
// are indexed by their folded elements and looked up with the folded name.
type ruleIndex struct {
	exact, fold nameIndex
	hasFold     bool
	// check are the rules whose live must be asked of each subdirectory
	// (checkBelow of the directory the index was made for); the others
	// are live in every directory below it.
	check []int
}

// checkBelow returns the indices of the rules that may not be live in some
// directory below dir: every rule but those with "**" (no bounded depth)
// whose prefix holds dir, which live reports live for any path under dir
// (a path under dir is under the prefix too). The rules are live in dir.
func checkBelow(dir string, rules []rule) []int {
	var out []int
	for i := range rules {
		p := rules[i].pat
		if p.depth < 0 && (p.prefix == "/" || underFold(dir, p.prefix, p.Fold)) {
			continue
		}
		out = append(out, i)
	}
	return out
}

type nameIndex struct {
	byName  map[string][]int // last element a literal: that name
	byExt   map[string][]int // last element "*.ext" or "*...*.ext" (one dot): that extension
	byFirst map[byte][]int   // last element starts with a literal: its first byte
	other   []int
}

func indexRules(rules []rule) ruleIndex {
	// Sized for the rules: the built-ins (~200, nearly all folded and
	// named by their last element) would otherwise grow the map from
	// empty, rehashing it several times at every walk of a root.
	nfold := 0
	for i := range rules {
		if rules[i].pat.Fold {
			nfold++
		}
	}
	newIndex := func(n int) nameIndex {
		return nameIndex{byName: make(map[string][]int, n), byExt: map[string][]int{}, byFirst: map[byte][]int{}}
	}
	idx := ruleIndex{exact: newIndex(len(rules) - nfold), fold: newIndex(nfold)}
	for i := range rules {
		ni := &idx.exact
		if rules[i].pat.Fold {
			ni, idx.hasFold = &idx.fold, true
		}
		segs := rules[i].pat.segs
		if l := len(segs); l > 0 {
			last := segs[l-1]
			switch {
			case last.kind == segLiteral:
				ni.byName[last.raw] = append(ni.byName[last.raw], i)
				continue
			case last.kind == segSuffix && strings.LastIndexByte(last.lit(), '.') == 0:
				ext := last.lit()[1:]
				ni.byExt[ext] = append(ni.byExt[ext], i)
				continue
			case last.kind == segPrefix && last.lit() != "":
				ni.byFirst[last.raw[0]] = append(ni.byFirst[last.raw[0]], i)
				continue
			case last.kind == segGlob && last.pre() != "":
				ni.byFirst[last.raw[0]] = append(ni.byFirst[last.raw[0]], i)
				continue
			case last.kind == segGlob && strings.LastIndexByte(last.suf(), '.') == 0 && !strings.ContainsAny(last.suf(), `*?[\`):
				// "*service*account*.json": any match ends in ".json".
				ext := last.suf()[1:]
				ni.byExt[ext] = append(ni.byExt[ext], i)
				continue
			}
		}
		ni.other = append(ni.other, i)
	}
	return idx
}

// candidates appends, in rule order, the rules that may match name.
func (idx ruleIndex) candidates(name string, out []int) []int {
	var lists [8][]int // on the stack: this runs for every entry walked
	idx.exact.lookup(name, lists[:4])
	if idx.hasFold {
		idx.fold.lookup(asciifold.Lower(name), lists[4:])
	}
	return mergeSorted(out, lists[:]...)
}

// lookup fills dst[0:4] with the lists of rules that may match name.
func (ni *nameIndex) lookup(name string, dst [][]int) {
	if d := strings.LastIndexByte(name, '.'); d >= 0 {
		dst[1] = ni.byExt[name[d+1:]]
	}
	if name != "" {
		dst[2] = ni.byFirst[name[0]]
	}
	dst[0], dst[3] = ni.byName[name], ni.other
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
