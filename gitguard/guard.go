package gitguard

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jail-sandbox/jail/dircache"
	"github.com/jail-sandbox/jail/internal/asciifold"
)

// Ident is a file's identity: a path that now names another file than at
// start is judged as new. Device and inode alone are not enough: a file
// removed and created again often gets the same inode number back. For
// anything but a directory the change time is part of it (no one can set
// it back, and a read-only mount cannot change it); a directory's changes
// with every entry added, so there only the type, device and inode count.
type Ident struct {
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	Type  uint32 `json:"type"`
	Ctime int64  `json:"ctime,omitempty"`
}

func identOf(fi fs.FileInfo) Ident {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Ident{}
	}
	id := Ident{Dev: uint64(st.Dev), Ino: uint64(st.Ino), Type: uint32(st.Mode) & syscall.S_IFMT}
	if !fi.IsDir() {
		id.Ctime = ctime(st)
	}
	return id
}

// Roles of observed directories: what Inspect judges in them.
const (
	RoleRoot      = "root"      // a writable root: a new .git here, and its new subdirectories
	RoleSub       = "subdir"    // a first-level subdirectory: a new .git here
	RoleRepo      = "repo"      // a git dir known at start: new worktrees/ and modules/ entries
	RoleNewRepo   = "new-repo"  // a git dir made during the run: every control file
	RoleHooks     = "hooks"     // hooks/ of a new git dir: every hook but *.sample
	RoleFrozen    = "frozen"    // a read-only directory no mount protects (Freeze): every entry new or changed since start but *.sample
	RoleWorktrees = "worktrees" // G/worktrees: each entry a linked worktree's git dir
	RoleWorktree  = "worktree"  // G/worktrees/NAME: commondir, config.worktree
	RoleModules   = "modules"   // G/modules[/...]: submodule git dirs
	RoleTarget    = "target"    // where a .git file leads that is no git dir yet
	RoleLink      = "gitlink"   // on the way to a gitlink's checkout (Links): a .git there
	RoleGlob      = "glob"      // only for a hook manager's glob (Globs): its new matches
)

// Role is what is judged in an observed directory. Repo is the git dir it
// belongs to (for hooks, worktrees, worktree and modules). Refs are .git
// files that lead here while this is no git dir yet: judged again at every
// change here (whatever the Kind).
// Links are the gitlink checkouts (submodule paths of an index) at or
// below this directory: judged again at every change here, whatever the
// Kind (see gitlink.go).
// Globs are hook managers' glob patterns relative to this directory: a
// new match leaves the tree, whatever the Kind (globwatch.go).
type Role struct {
	Kind      string   `json:"kind"`
	Repo      string   `json:"repo,omitempty"`
	Submodule bool     `json:"submodule,omitempty"`
	Refs      []string `json:"refs,omitempty"`
	Links     []string `json:"links,omitempty"`
	Globs     []Glob   `json:"globs,omitempty"`
}

// Guard judges what appears in the writable trees after start. Its state is
// plain data: the supervisor keeps a copy on disk so that the next start can
// run the exit check of a supervisor that was killed.
type Guard struct {
	// Roots are the writable roots (and a verified worktree's common dir):
	// nothing outside them is judged.
	Roots []string `json:"roots"`
	// Known are the .git entries, git dirs and control files that existed at
	// start, with their identity: these were protected (read-only) or
	// judged then.
	Known map[string]Ident `json:"known"`
	// Dirs are the observed directories.
	Dirs map[string]Role `json:"dirs"`
	// MaxDirs bounds Dirs (inotify watches); beyond it, only the exit check.
	MaxDirs int `json:"max_dirs"`
	// Dropped counts directories not observed because of MaxDirs.
	Dropped int `json:"dropped,omitempty"`
	// Since is when Scan ran (Unix nanoseconds): a change time before it is
	// not the agent's.
	Since int64 `json:"since,omitempty"`
	// Told are the index files already reported as naming more gitlinks
	// than are observed (gitlink.go): said once each.
	Told map[string]bool `json:"told,omitempty"`
	// Globs are the hook managers' globs whose fixed part is no directory
	// made read-only (the work tree's top): the exit check reads them
	// from these directories whole (globwatch.go).
	Globs []GlobAt `json:"globs,omitempty"`

	// Names are other protected file names the exit check judges at any
	// depth, the caller's (package fsrules' ExitNames: files a host
	// program loads from the directory it runs in): lower-case ASCII
	// name -> rule. The sweep walks every tree anyway; a file of such a
	// name that is not in Kept, in no Covered or Lifted directory, and
	// changed since Since, leaves it.
	Names map[string]string `json:"names,omitempty"`
	// Kept are the files of Names' names that existed at start (kept
	// read-only then, or hidden). A file whose inode did not change since
	// Since is not judged either (one the sandbox never saw).
	Kept map[string]bool `json:"kept,omitempty"`
	// Covered are directories whose insides the agent could not write on
	// the host (masked whole, a cache of jail's own over the host's path,
	// a private tmpfs): nothing in them is judged by name.
	Covered []string `json:"covered,omitempty"`
	// Lifted are the trees where the built-ins are lifted: nothing in
	// them is judged by name.
	Lifted []string `json:"lifted,omitempty"`
	// NoGit: git is trusted (--allow-git-config): the exit check judges
	// Names only.
	NoGit bool `json:"no_git,omitempty"`
}

// Finding is one thing found that must leave the tree (or be reported).
type Finding struct {
	Path   string `json:"path"`
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
	// Replace, when set, is what to write in place of the captured content
	// (a config file keeps its harmless keys). changed false: the captured
	// content is harmless after all, put it back.
	Replace func(captured []byte) (out []byte, changed bool) `json:"-"`
	// ReportOnly findings are told, not moved.
	ReportOnly bool `json:"report_only,omitempty"`
}

func (g *Guard) known(p string, fi fs.FileInfo) bool {
	id, ok := g.Known[p]
	return ok && id == identOf(fi)
}

func (g *Guard) inRoots(p string) bool {
	for _, r := range g.Roots {
		if under(p, r) {
			return true
		}
	}
	return false
}

func under(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// observe adds dir with role r; it reports whether dir is newly observed.
func (g *Guard) observe(dir string, r Role) bool {
	if old, ok := g.Dirs[dir]; ok {
		if r.Kind == RoleGlob || old.Kind == RoleGlob {
			// A glob adds to what is judged here, never replaces it.
			if r.Kind == RoleGlob {
				r, old = old, r
			}
			r.Refs, r.Links = append(r.Refs, old.Refs...), append(r.Links, old.Links...)
			r.Globs = addGlobs(r.Globs, old.Globs)
			g.Dirs[dir] = r
			return false
		}
		r.Globs = old.Globs // a role that takes old's place keeps its globs
		if old.Kind == RoleLink && r.Kind != RoleLink {
			// On the way to a gitlink, and more now: judged as both.
			r.Refs = append(r.Refs, old.Refs...)
			r.Links = append(r.Links, old.Links...)
			g.Dirs[dir] = r
			return false
		}
		r.Links = append(r.Links, old.Links...)
		if old.Kind == RoleSub && r.Kind == RoleFrozen {
			// A first-level subdirectory that is read-only too (.husky/):
			// frozen judges a new .git in it as a subdirectory would.
			r.Refs = old.Refs
			g.Dirs[dir] = r
			return false
		}
		if (old.Kind == RoleSub || old.Kind == RoleTarget) && r.Kind != RoleSub && r.Kind != RoleTarget {
			// A subdirectory, or a .git file's target, that turned out
			// to be a git dir or a worktree's: judged as that now.
			r.Refs = append(r.Refs, old.Refs...)
			g.Dirs[dir] = r
		}
		return false
	}
	if g.MaxDirs > 0 && len(g.Dirs) >= g.MaxDirs {
		g.Dropped++
		return false
	}
	g.Dirs[dir] = r
	return true
}

// Inspect judges observed directory dir after a change. names are the
// entries that changed (nil: look at everything). It returns what must
// leave the tree and the directories to observe from now on (the caller
// watches them and inspects each once).
func (g *Guard) Inspect(dir string, names []string) (found []Finding, observe []string) {
	r, ok := g.Dirs[dir]
	if !ok {
		return nil, nil
	}
	j := &judge{g: g}
	j.inspect(dir, r, names)
	return j.out(), j.newDirs
}

// Sweep is the exit check: it walks every root (not following symlinks,
// not crossing mount points, not reading objects/) and judges every .git
// entry and git dir that was not there at start, and the new worktree and
// submodule entries of those that were. maxEntries bounds the walk (0:
// 1,000,000); an incomplete walk is said in notes.
func (g *Guard) Sweep(maxEntries int) (found []Finding, notes []string) {
	return g.SweepDirs(maxEntries, nil)
}

// DirReader lists a directory for Sweep (package dircache implements it):
// the entries of dir that keep selects, and how many dir has in all; its
// errors are os.Open's and os.File.ReadDir's. keep depends only on view,
// dir, the name and the type, so that an answer kept from an earlier read
// of the same, unchanged directory is the same.
type DirReader interface {
	ReadDir(view, dir string, keep func(name string, t fs.FileMode) bool) (ents []fs.DirEntry, total int, dev uint64, err error)
}

// sweepView names Sweep's walk of a root for a DirReader's cache; it
// changes whenever what the keep functions keep does (with the Names,
// which the view's name holds: viewOf).
const sweepView = "gitguard-sweep-2\x00"

// sweepKeep: Sweep looks at directories, .git entries and HEAD files, and
// the files of Names' names.
func (g *Guard) sweepKeep(name string, t fs.FileMode) bool {
	return t.IsDir() || name == ".git" || name == "HEAD" || len(g.Names) > 0 && g.Names[asciifold.Lower(name)] != ""
}

// viewOf is the view of root's walk: the keep function depends on the
// names judged, which the view names (sorted, hashed), so that a listing
// kept for other names is not taken for this one.
func (g *Guard) viewOf(root string) string {
	if len(g.Names) == 0 {
		return sweepView + root
	}
	names := make([]string, 0, len(g.Names))
	for n := range g.Names {
		names = append(names, n)
	}
	sort.Strings(names)
	sum := sha256.Sum256([]byte(strings.Join(names, "\x00")))
	return sweepView + hex.EncodeToString(sum[:8]) + "\x00" + root
}

// preloader is a DirReader that can read a view's records ahead of the
// pass that uses them, taking no stat (package dircache).
type preloader interface {
	Preload(view string)
}

// PreloadSweep has dirs read what SweepDirs will ask of it (each root's
// records) ahead of the exit check, while the agent still runs; nothing is
// stat'ed or judged: SweepDirs' own stats, taken once every process of the
// sandbox is gone, decide what those records answer.
func (g *Guard) PreloadSweep(dirs DirReader) {
	p, ok := dirs.(preloader)
	if !ok {
		return
	}
	for _, root := range g.Roots {
		p.Preload(g.viewOf(root))
	}
}

// SweepDirs is Sweep with directories listed by dirs (nil: each is read):
// a directory unchanged since the reader last listed it need not be read
// again, since a new .git or HEAD in it would have changed it.
func (g *Guard) SweepDirs(maxEntries int, dirs DirReader) (found []Finding, notes []string) {
	if maxEntries <= 0 {
		maxEntries = 1_000_000
	}
	if dirs == nil {
		dirs = dircache.Uncached{}
	}
	j := &judge{g: g, final: true}
	n := 0
	for _, root := range g.Roots {
		st, err := os.Lstat(root)
		if err != nil || !st.IsDir() {
			continue
		}
		sw := sweeper{j: j, g: g, dirs: dirs, root: root, dev: identOf(st).Dev, view: g.viewOf(root), n: &n, max: maxEntries}
		sw.name(root, filepath.Base(root), true)
		if err := sw.dir(root); errors.Is(err, errTooMany) {
			notes = append(notes, fmt.Sprintf("git exit check: more than %d entries under %s; the rest was not checked", maxEntries, root))
			break
		}
	}
	if g.NoGit {
		return j.out(), notes
	}
	// Git dirs known at start: their new worktrees and submodules; frozen
	// directories: what changed in them.
	var repos []string
	for d, r := range g.Dirs {
		if r.Kind == RoleRepo || r.Kind == RoleFrozen {
			repos = append(repos, d)
		}
	}
	sort.Strings(repos)
	for _, d := range repos {
		j.inspect(d, g.Dirs[d], nil)
	}
	// Hook managers' globs, read whole from their fixed part.
	for _, a := range g.Globs {
		j.globs(a.Dir, []Glob{a.Glob}, nil)
	}
	return j.out(), notes
}

// sweeper walks one root for SweepDirs.
type sweeper struct {
	j    *judge
	g    *Guard
	dirs DirReader
	root string
	dev  uint64
	view string
	n    *int
	max  int
}

// name judges one entry by its name.
func (s *sweeper) name(p, name string, isDir bool) {
	switch {
	case s.g.NoGit:
	case name == ".git":
		s.j.dotGit(p)
		return
	case name == "HEAD" && !isDir:
		s.j.headDir(filepath.Dir(p))
		return
	}
	if !isDir && len(s.g.Names) > 0 {
		if rule := s.g.Names[asciifold.Lower(name)]; rule != "" {
			s.j.named(p, rule)
		}
	}
}

// dir walks directory p, judging it by its name unless it is the root:
// a directory on another device (a mount point) is not this tree's, and
// neither judged nor walked.
func (s *sweeper) dir(p string) error {
	*s.n++
	ents, total, dev, err := s.dirs.ReadDir(s.view, p, s.g.sweepKeep)
	if err != nil {
		if p == s.root || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if st, serr := os.Lstat(p); serr != nil || identOf(st).Dev != s.dev {
			return nil
		}
		s.name(p, filepath.Base(p), true)
		if !s.g.NoGit && s.g.changedSince(p) {
			// Unreadable now (it was walked at start, or hidden whole): git
			// cannot read it either, but its owner can chmod it back and
			// find what the agent left there.
			s.j.add(Finding{Path: p, Rule: "git: unreadable directory", ReportOnly: true,
				Reason: fmt.Sprintf("the exit check cannot read it (%v): a .git or git dir inside was not checked; look before you make it readable", err)})
		}
		return nil
	}
	if dev != s.dev {
		return nil // a mount point: not this tree
	}
	if p != s.root {
		s.name(p, filepath.Base(p), true)
	}
	if *s.n += total; *s.n > s.max {
		return errTooMany
	}
	// In name order (a cache's answer already is: no sort, no closure).
	if !slices.IsSortedFunc(ents, byName) {
		slices.SortFunc(ents, byName)
	}
	for _, d := range ents {
		name := d.Name()
		q := joinName(p, name)
		switch {
		case !d.IsDir():
			s.name(q, name, false)
		case name == "objects" && IsGitDir(p):
			// a git dir's object store
		case isRoot(s.g.Roots, q):
			// another root, walked on its own
		default:
			if err := s.dir(q); err != nil {
				return err
			}
		}
	}
	return nil
}

var errTooMany = errors.New("too many entries")

// joinName is filepath.Join(dir, name) for a clean absolute dir and name
// one element of a directory listing (no '/', not "." or ".."), without
// Join's Clean: the sweep joins every directory's name (2,800 a run on the
// bench's tree).
func joinName(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

func byName(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) }

// changedSince reports whether p's inode changed (mode, owner, content)
// after Scan; true when unknown. File times come from a coarse clock (up to
// a scheduler tick behind the precise one): 50 ms of slack.
func (g *Guard) changedSince(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil || g.Since == 0 {
		return true
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || ctime(st) >= g.Since-int64(50*time.Millisecond)
}

// controlWhy says what each control name of a git dir does, for findings.
// (A switch, not a map: a package-level map is built in the package init
// of every jail process.)
func controlWhy(name string) string {
	switch name {
	case "hooks":
		return "hooks/ appeared in a repository that had none: git runs what is in it"
	case "commondir":
		return "commondir makes git take config, hooks and objects from another directory"
	case "remotes":
		return "legacy remotes/ names where git fetches from and pushes to"
	case "branches":
		return "legacy branches/ names where git fetches from and pushes to"
	}
	return ""
}

func isRoot(roots []string, p string) bool {
	for _, r := range roots {
		if r == p {
			return true
		}
	}
	return false
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// judge collects the findings and new observations of one Inspect or Sweep.
type judge struct {
	g       *Guard
	found   []Finding
	seen    map[string]bool
	newDirs []string
	done    map[string]bool // git dirs judged in this pass
	// final: the exit check; nothing is left for a later event.
	final bool
}

func (j *judge) out() []Finding {
	sort.SliceStable(j.found, func(a, b int) bool { return j.found[a].Path < j.found[b].Path })
	return j.found
}

func (j *judge) add(f Finding) {
	if j.seen == nil {
		j.seen = map[string]bool{}
	}
	if j.seen[f.Path] || !j.g.inRoots(f.Path) {
		return // only inside the writable trees: nothing else is the agent's
	}
	j.seen[f.Path] = true
	j.found = append(j.found, f)
}

// named judges a file of one of Names' names found by the exit sweep:
// one that was not there at start, outside a lifted tree, leaves the
// tree. The watch saw only the tops of the trees: a host program run in
// this directory during the run could have loaded it, and one run there
// later would.
func (j *judge) named(p, rule string) {
	if j.g.Kept[p] || !j.g.changedSince(p) {
		// There at start: kept then, or in a place the sandbox did not
		// see (a hidden directory, a cache's host path), untouched since.
		return
	}
	for _, l := range j.g.Lifted {
		if under(p, l) {
			return // the built-ins are lifted there: the user's choice
		}
	}
	for _, c := range j.g.Covered {
		if under(p, c) {
			return // the host's: the sandbox could not write there
		}
	}
	j.add(Finding{Path: p, Rule: rule, Reason: "a protected name created during the run below the top of its tree, which only the exit check looks at: a host program run in that directory loads it"})
}

func (j *judge) observe(dir string, r Role) {
	if j.g.observe(dir, r) {
		j.newDirs = append(j.newDirs, dir)
	}
}

func (j *judge) inspect(dir string, r Role, names []string) {
	has := func(n string) bool {
		if names == nil {
			return true
		}
		for _, x := range names {
			if x == n {
				return true
			}
		}
		return false
	}
	for _, f := range r.Refs {
		j.dotGit(f)
	}
	for _, p := range r.Links {
		j.link(dir, p)
	}
	if len(r.Globs) > 0 {
		j.globs(dir, r.Globs, names)
	}
	switch r.Kind {
	case RoleRoot, RoleSub:
		if has(".git") {
			j.dotGit(filepath.Join(dir, ".git"))
		}
		if r.Kind == RoleRoot {
			j.subdirs(dir, names)
		}
		// A bare repository made right here (HEAD, objects/, refs/): git
		// in this directory uses it, so every change is judged (a config
		// written after HEAD too).
		j.headDir(dir)
	case RoleRepo:
		// Control files absent at start (present ones are read-only
		// mounts, which cannot be replaced).
		for _, n := range []string{"config", "config.worktree"} {
			if has(n) {
				j.config(filepath.Join(dir, n), r.Submodule)
			}
		}
		for _, n := range []string{"hooks", "commondir", "remotes", "branches"} {
			if !has(n) {
				continue
			}
			p := filepath.Join(dir, n)
			if fi, err := os.Lstat(p); err == nil && !j.g.known(p, fi) {
				j.add(Finding{Path: p, Rule: "git: " + n, Reason: controlWhy(n)})
			}
		}
		if has("worktrees") {
			j.worktrees(dir, filepath.Join(dir, "worktrees"), r.Submodule)
		}
		if has("modules") {
			j.modules(filepath.Join(dir, "modules"))
		}
		if has("index") {
			j.gitlinks(dir)
		}
	case RoleNewRepo:
		j.newRepo(dir, r.Submodule)
	case RoleHooks:
		j.hooks(dir, names)
	case RoleFrozen:
		j.frozen(dir, names)
	case RoleWorktrees:
		j.worktrees(r.Repo, dir, r.Submodule)
	case RoleWorktree:
		j.worktree(dir, r.Repo)
		if has("index") {
			j.gitlinks(dir)
		}
	case RoleModules:
		j.modules(dir)
	case RoleLink:
		// Also what a first-level subdirectory is judged for (it may be
		// one, observed first on the way to a gitlink).
		if has(".git") {
			j.dotGit(filepath.Join(dir, ".git"))
		}
		j.headDir(dir)
	}
}

// listed is names, the entries of dir that changed, or when nil (look at
// everything) dir's listing; false when dir cannot be read.
func listed(dir string, names []string) ([]string, bool) {
	if names != nil {
		return names, true
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, false
	}
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names, true
}

// subdirs observes new first-level subdirectories of a root: names, the
// entries that changed (each lstat'ed), or, nil, the whole listing, whose
// entries' types getdents(2) gives (os.ReadDir lstats only an entry of
// unknown type): a stat per entry was 20 ms of a start in a root of 3,000
// files.
func (j *judge) subdirs(root string, names []string) {
	if names != nil {
		for _, n := range names {
			if fi, err := os.Lstat(filepath.Join(root, n)); err == nil && fi.IsDir() {
				j.subdir(root, n)
			}
		}
		return
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.IsDir() { // the entry's own type: a link to a directory is none
			j.subdir(root, e.Name())
		}
	}
}

// subdir observes directory n of root as a subdirectory (not .git).
func (j *judge) subdir(root, n string) {
	if n == ".git" {
		return
	}
	p := filepath.Join(root, n)
	// Observed for a glob only (judged first): a subdirectory too.
	if r, ok := j.g.Dirs[p]; !ok || r.Kind == RoleGlob {
		j.observe(p, Role{Kind: RoleSub})
	}
}

// dotGit judges a .git entry that is not the one known at start.
func (j *judge) dotGit(p string) {
	fi, err := os.Lstat(p)
	if err != nil || j.g.known(p, fi) {
		return // gone, or the one protected at start
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		t, _ := os.Readlink(p)
		j.add(Finding{Path: p, Rule: "git: .git symlink", Reason: fmt.Sprintf("a .git symlink makes git use %s", t)})
	case fi.Mode().IsRegular() && fi.Size() == 0:
		// Being written (git worktree add, git submodule: open, then
		// write): the write is another event. git refuses an empty .git
		// file ("invalid gitfile format"), so it does nothing meanwhile.
	case fi.Mode().IsRegular():
		b, err := readSmall(p)
		if err != nil {
			j.add(Finding{Path: p, Rule: "git: .git file", Reason: fmt.Sprintf("a .git file jail cannot read: %v", err)})
			return
		}
		target, err := ParseGitFile(b)
		if err != nil {
			j.add(Finding{Path: p, Rule: "git: .git file", Reason: fmt.Sprintf("a .git file git would refuse or read otherwise: %v", err)})
			return
		}
		t := rel(filepath.Dir(p), target)
		if !j.final && t != "" && j.g.inRoots(t) && unsettled(t) && j.watchTarget(p, t) {
			// No git dir (yet): git refuses the file meanwhile. git
			// worktree add writes the checkout's .git file before the
			// worktree's commondir; judged again when t changes.
			return
		}
		switch kind := VerifyGitFile(p, t); kind {
		case "worktree":
			common, _ := CommonDir(t)
			// A repository made during the run, reached through one of
			// its worktrees: git reads its config and hooks.
			j.gitDir(common, false)
			j.worktree(t, common)
			j.observe(t, Role{Kind: RoleWorktree, Repo: common})
		case "submodule":
			j.gitDir(t, true)
		default:
			j.add(Finding{Path: p, Rule: "git: .git file", Reason: fmt.Sprintf("a .git file makes git use %s, which is not a linked worktree or submodule of a repository here", target)})
		}
	case fi.IsDir():
		j.gitDir(p, false)
	default:
		j.add(Finding{Path: p, Rule: "git: .git entry", Reason: "a .git that is neither a file nor a directory"})
	}
}

// unsettled reports whether t is no git dir yet, for git: no commondir and
// no git dir of its own, or a commondir still empty (git dies on it).
func unsettled(t string) bool {
	fi, err := os.Lstat(filepath.Join(t, "commondir"))
	if err == nil {
		return fi.Mode().IsRegular() && fi.Size() == 0
	}
	return !IsGitDir(t)
}

// watchTarget makes .git file p be judged again whenever directory t
// changes; false when t cannot be observed (then p is judged now).
func (j *judge) watchTarget(p, t string) bool {
	r, ok := j.g.Dirs[t]
	if !ok {
		if !j.g.observe(t, Role{Kind: RoleTarget, Refs: []string{p}}) {
			return false
		}
		j.newDirs = append(j.newDirs, t)
		return true
	}
	for _, x := range r.Refs {
		if x == p {
			return true
		}
	}
	r.Refs = append(r.Refs, p)
	j.g.Dirs[t] = r
	return true
}

// gitDir judges a git dir reached during the run (new unless known).
func (j *judge) gitDir(d string, submodule bool) {
	fi, err := os.Lstat(d)
	if err != nil || !fi.IsDir() {
		return
	}
	if j.g.known(d, fi) {
		return // protected at start
	}
	j.newRepo(d, submodule)
	j.observe(d, Role{Kind: RoleNewRepo, Submodule: submodule})
}

// headDir judges a directory holding HEAD: a git dir (bare, a submodule's,
// a worktree's, or a .git) not known at start.
func (j *judge) headDir(d string) {
	fi, err := os.Lstat(d)
	if err != nil || !fi.IsDir() || j.g.known(d, fi) {
		return
	}
	if j.done[d] {
		return
	}
	if !exists(filepath.Join(d, "HEAD")) {
		return
	}
	hasCommon := exists(filepath.Join(d, "commondir"))
	if !hasCommon && !IsGitDir(d) {
		return
	}
	parent := filepath.Dir(d)
	if hasCommon && filepath.Base(parent) == "worktrees" && IsGitDir(filepath.Dir(parent)) {
		j.worktree(d, filepath.Dir(parent))
		return
	}
	sub := false
	for a := parent; a != "/" && a != "."; a = filepath.Dir(a) {
		if filepath.Base(a) == "modules" && IsGitDir(filepath.Dir(a)) {
			sub = true
			break
		}
	}
	j.gitDir(d, sub)
}

// newRepo judges every control file of a git dir made during the run.
func (j *judge) newRepo(d string, submodule bool) {
	if j.done == nil {
		j.done = map[string]bool{}
	}
	if j.done[d] {
		return
	}
	j.done[d] = true
	for _, name := range []string{"config", "config.worktree"} {
		j.config(filepath.Join(d, name), submodule)
	}
	if fi, err := os.Lstat(filepath.Join(d, "commondir")); err == nil && !j.g.known(filepath.Join(d, "commondir"), fi) {
		j.add(Finding{Path: filepath.Join(d, "commondir"), Rule: "git: commondir", Reason: controlWhy("commondir")})
	}
	h := filepath.Join(d, "hooks")
	if fi, err := os.Lstat(h); err == nil && !j.g.known(h, fi) {
		if fi.IsDir() {
			j.hooks(h, nil)
			j.observe(h, Role{Kind: RoleHooks, Repo: d})
		} else {
			j.add(Finding{Path: h, Rule: "git: hooks", Reason: "hooks that is not a directory of a new repository"})
		}
	}
	alt := filepath.Join(d, "objects", "info", "alternates")
	if fi, err := os.Lstat(alt); err == nil && !j.g.known(alt, fi) {
		j.add(Finding{Path: alt, Rule: "git: alternates", ReportOnly: true,
			Reason: "objects/info/alternates makes git read objects from other directories (kept: removing it would break the repository)"})
	}
	j.worktrees(d, filepath.Join(d, "worktrees"), submodule)
	j.modules(filepath.Join(d, "modules"))
	j.gitlinks(d)
}

// config judges a config or config.worktree file of a new git dir.
func (j *judge) config(p string, submodule bool) {
	fi, err := os.Lstat(p)
	if err != nil || j.g.known(p, fi) {
		return
	}
	rule := "git: " + filepath.Base(p)
	if !fi.Mode().IsRegular() {
		j.add(Finding{Path: p, Rule: rule, Reason: "a " + filepath.Base(p) + " that is not a regular file"})
		return
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return
	}
	if _, dropped, ok := Sanitize(b, submodule); !ok {
		j.add(Finding{Path: p, Rule: rule,
			Reason: "config that can make git run code or use other files: " + strings.Join(dropped, ", ") + " (the harmless keys stay)",
			Replace: func(captured []byte) ([]byte, bool) {
				out, _, ok := Sanitize(captured, submodule)
				return out, !ok
			}})
	}
}

// hooks judges the hooks/ of a new git dir: only *.sample files (which git
// never runs) may be there.
func (j *judge) hooks(h string, names []string) {
	names, ok := listed(h, names)
	if !ok {
		return
	}
	for _, n := range names {
		p := filepath.Join(h, n)
		fi, err := os.Lstat(p)
		if err != nil || j.g.known(p, fi) {
			continue
		}
		if strings.HasSuffix(n, ".sample") && fi.Mode().IsRegular() {
			continue
		}
		j.add(Finding{Path: p, Rule: "git: hook", Reason: "a hook git would run on the host, in a repository made during the run"})
	}
}

// frozen judges dir, a read-only directory that no mount protects (see
// Freeze): an entry that is not the one of the start (new, replaced,
// written: its change time moved) leaves the tree, but *.sample files,
// which git never runs.
func (j *judge) frozen(dir string, names []string) {
	names, ok := listed(dir, names)
	if !ok {
		return
	}
	for _, n := range names {
		p := filepath.Join(dir, n)
		if n == ".git" {
			j.dotGit(p)
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil || j.g.known(p, fi) {
			continue
		}
		if strings.HasSuffix(n, ".sample") && fi.Mode().IsRegular() {
			continue
		}
		j.add(Finding{Path: p, Rule: "git: read-only", Reason: "written in a directory git runs code from, which no mount could make read-only (degraded mode)"})
	}
}

// frozenFiles are the control files that the observed git dirs already
// judge at every change (RoleRepo, RoleWorktree): Freeze covers them.
func frozenFiles(role string) []string {
	switch role {
	case RoleRepo:
		return []string{"config", "config.worktree", "commondir", "hooks", "remotes", "branches"}
	case RoleWorktree:
		return []string{"commondir", "gitdir", "config.worktree"}
	}
	return nil
}

// maxFrozen bounds what Freeze walks in one read-only directory.
const maxFrozen = 10000

// Freeze is for a run in which the read-only mounts of the plan cannot be
// made (jail --degraded: no mount namespace). Every read-only directory
// (hooks/, a core.hooksPath directory, a hook manager's) is observed from
// now on, with its entries as they are now: what is added or written there
// leaves the tree (Inspect, Sweep). A read-only file is covered when the git
// dir it is in is observed and judges it (config, commondir...); the others
// are returned: nothing watches them in this run.
func (g *Guard) Freeze(ro []Protect) (uncovered []string) {
	for _, pr := range ro {
		if !pr.Dir {
			parent := g.Dirs[filepath.Dir(pr.Path)]
			if slices.Contains(frozenFiles(parent.Kind), filepath.Base(pr.Path)) {
				if fi, err := os.Lstat(pr.Path); err == nil {
					g.Known[pr.Path] = identOf(fi) // a change is judged
				}
				continue
			}
			uncovered = append(uncovered, pr.Path)
			continue
		}
		n := 0
		err := filepath.WalkDir(pr.Path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if n++; n > maxFrozen {
				return errTooMany
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			g.Known[p] = identOf(fi)
			if d.IsDir() && !g.observe(p, Role{Kind: RoleFrozen}) && g.Dirs[p].Kind != RoleFrozen {
				// Observed as something else already (or past MaxDirs).
				uncovered = append(uncovered, p)
			}
			return nil
		})
		if err != nil {
			uncovered = append(uncovered, pr.Path+" (beyond its first "+strconv.Itoa(maxFrozen)+" entries)")
		}
	}
	return uncovered
}

// worktrees judges wdir, the worktrees/ of git dir repo.
func (j *judge) worktrees(repo, wdir string, submodule bool) {
	fi, err := os.Lstat(wdir)
	if err != nil || !fi.IsDir() {
		return
	}
	j.observe(wdir, Role{Kind: RoleWorktrees, Repo: repo, Submodule: submodule})
	ents, err := os.ReadDir(wdir)
	if err != nil {
		return
	}
	for _, e := range ents {
		w := filepath.Join(wdir, e.Name())
		if fi, err := os.Lstat(w); err == nil && fi.IsDir() && !j.g.known(w, fi) {
			j.worktree(w, repo)
			j.observe(w, Role{Kind: RoleWorktree, Repo: repo})
		}
	}
}

// worktree judges a linked worktree's git dir w of repository repo: its
// commondir must lead back to repo; its config.worktree keeps only
// harmless keys.
func (j *judge) worktree(w, repo string) {
	cd := filepath.Join(w, "commondir")
	// An empty commondir is being written (git dies on one meanwhile).
	if fi, err := os.Lstat(cd); err == nil && !j.g.known(cd, fi) && !(fi.Mode().IsRegular() && fi.Size() == 0) {
		c, ok := CommonDir(w)
		want, _ := filepath.EvalSymlinks(repo)
		if !ok || c != want {
			j.add(Finding{Path: cd, Rule: "git: commondir",
				Reason: fmt.Sprintf("the commondir of worktree %s leads to %s, not to its repository %s", filepath.Base(w), c, repo)})
		}
	}
	j.config(filepath.Join(w, "config.worktree"), false)
}

// modules judges m, a modules/ directory (or one level of a nested
// submodule name): each git dir in it is a new submodule git dir.
func (j *judge) modules(m string) {
	fi, err := os.Lstat(m)
	if err != nil || !fi.IsDir() {
		return
	}
	j.observe(m, Role{Kind: RoleModules})
	ents, err := os.ReadDir(m)
	if err != nil {
		return
	}
	for _, e := range ents {
		c := filepath.Join(m, e.Name())
		fi, err := os.Lstat(c)
		if err != nil || !fi.IsDir() {
			continue
		}
		if IsGitDir(c) {
			j.gitDir(c, true)
		} else {
			j.modules(c) // submodule names may contain '/'
		}
	}
}

// VerifyGitFile tells whether the .git file at file, whose target resolves
// to t, is what git itself writes: "worktree" (t is NAME under a repo's
// worktrees/, its gitdir back-pointer names this file and its commondir
// leads back to that repo), "submodule" (t is a git dir whose core.worktree
// is the directory holding this file), or "" (anything else).
func VerifyGitFile(file, t string) string {
	if t == "" {
		return ""
	}
	self, err := filepath.EvalSymlinks(file)
	if err != nil {
		return ""
	}
	if exists(filepath.Join(t, "commondir")) {
		common, ok := CommonDir(t)
		if !ok || filepath.Dir(t) != filepath.Join(common, "worktrees") || !IsGitDir(common) {
			return ""
		}
		b, err := readSmall(filepath.Join(t, "gitdir"))
		if err != nil {
			return ""
		}
		back := strings.TrimRight(string(b), " \t\r\n")
		if back == "" || rel(t, back) != self {
			return ""
		}
		return "worktree"
	}
	if !IsGitDir(t) {
		return ""
	}
	b, err := readSmall(filepath.Join(t, "config"))
	if err != nil {
		return ""
	}
	es, _ := ParseConfig(b)
	wt := ""
	for _, e := range es {
		if e.Section == "core" && !e.HasSub && e.Key == "worktree" {
			wt = e.Value // the last one wins
		}
	}
	if wt == "" || rel(t, wt) != filepath.Dir(self) {
		return ""
	}
	return "submodule"
}
