package gitguard

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jail-sandbox/jail/hostpath"
)

// Input is what Scan needs. Paths are absolute and symlink-free.
type Input struct {
	// Found are the paths of entries named ".git" or "HEAD" seen by the
	// walk of the visible trees (fsrules.Plan.Found).
	Found []string
	// Writable are the writable roots (the workspace and --write paths).
	Writable  []string
	Workspace string
	Home      string
	// UserConfigs are the system and global config files, lowest priority
	// first (UserConfigFiles).
	UserConfigs []string
	// EnvConfig is the configuration git takes from the environment
	// (EnvConfig): read as the user's config files are.
	EnvConfig []Entry
	// AllowGitConfig: the user trusts the agent with git (--allow-git-config):
	// only the verified worktree's common dir is computed.
	AllowGitConfig bool
	// MaxObserve bounds the observed directories (inotify watches); 0: 4096.
	MaxObserve int
	// KeptSince says since when a git dir's history has been kept
	// outside the sandbox (package gitkeep's store; false: not kept): past
	// the budget of pack mounts, the oldest stores' packs are taken first
	// (keepPacks). Nil: none is.
	KeptSince func(gitDir string) (int64, bool)
}

// Protect is one path of the plan and why.
type Protect struct {
	Path string `json:"path"`
	Dir  bool   `json:"dir,omitempty"`
	Why  string `json:"why"`
}

// Plan is what Scan decides at start.
type Plan struct {
	// ReadOnly paths are mounted read-only over themselves.
	ReadOnly []Protect `json:"read_only,omitempty"`
	// Hide paths are masked (a .git file that does not verify).
	Hide []Protect `json:"hide,omitempty"`
	// Absent paths did not exist: if one appears it leaves the tree.
	Absent []Protect `json:"absent,omitempty"`
	// Watch are control files absent from a git dir at start: judged by the
	// Guard when they appear (a config is cut down to its harmless keys,
	// anything else leaves the tree).
	Watch []Protect `json:"watch,omitempty"`
	// Writable: the common dir of a verified linked worktree (git commit
	// writes objects and refs there), its control files in ReadOnly.
	Writable []string `json:"writable,omitempty"`
	// Observe are the directories where a new .git, git dir, worktree or
	// submodule is judged as it appears.
	Observe []string `json:"observe,omitempty"`
	// Repos are the git dirs found in the writable trees.
	Repos []string `json:"repos,omitempty"`
	// Links are symlinks inside the writable trees on the way to a
	// protected path (a global core.hooksPath of ws/hl -> hooks): the
	// mount protects the target, not the link, an entry the agent can
	// replace with a directory of its own. The caller keeps each a
	// symlink to the same place (package agentcfg's guard).
	Links []Protect `json:"links,omitempty"`
	// Ways are paths the user's config names (core.hooksPath...) reached
	// through a symlink inside the writable trees: the caller pins the
	// directories each passes and leaves by a ".." (ws/l/../hooks with l ->
	// sub/dir leaves sub/dir), which the agent could otherwise swap for a
	// link of its own, the links and the end unchanged (review20a).
	Ways []Protect `json:"ways,omitempty"`
	// History are the pack files (pack-*.pack and its .idx) of every git
	// dir in the writable trees, mounted read-only over themselves like
	// ReadOnly (see history).
	History []Protect `json:"history,omitempty"`
	// PacksLeft are the pack directories (resolved) past the budget of
	// read-only pack mounts (keepPacks): their packs are the agent's to
	// delete in this run. The git-kept store of their repositories must
	// not count on them any more (gitkeep.Unprotected).
	PacksLeft []string `json:"packs_left,omitempty"`
	Notes     []string `json:"notes,omitempty"`
	// Guard judges what appears later (nil with AllowGitConfig).
	Guard *Guard `json:"-"`
}

type scanner struct {
	in       Input
	roots    []string // writable roots + worktree common dir
	g        *Guard
	plan     Plan
	ro, hide map[string]Protect
	packs    []Protect           // Plan.History's candidates: each pack's .idx, then its .pack
	packDirs map[string]bool     // pack directories taken (resolved)
	packGit  map[string][]string // the git dirs reaching each one taken
	links    map[string]Protect
	ways     map[string]Protect
	absent   map[string]Protect
	watch    map[string]Protect
	done     map[string]bool
	user     []Entry // entries of the user's own config files
	userSrc  []string
	// managed: hook managers' work-tree files made read-only (they exist),
	// said in one note at the start (Scan).
	managed []string
}

// Scan inventories the git directories in the writable trees and decides
// their protection (see the package doc).
func Scan(in Input) Plan {
	s := &scanner{in: in, ro: map[string]Protect{}, hide: map[string]Protect{}, absent: map[string]Protect{}, watch: map[string]Protect{}, done: map[string]bool{}, packDirs: map[string]bool{}, packGit: map[string][]string{}}
	s.roots = append(s.roots, in.Writable...)
	s.worktreeRoot()
	if in.AllowGitConfig {
		return s.plan
	}
	max := in.MaxObserve
	if max <= 0 {
		max = 4096
	}
	s.g = &Guard{Known: map[string]Ident{}, Dirs: map[string]Role{}, MaxDirs: max, Since: time.Now().UnixNano()}
	for _, f := range in.UserConfigs {
		s.readUser(f, 0)
	}
	s.readEnv(in.EnvConfig)
	s.userEffects()
	// The verified worktree's git dirs first (outside the walk).
	for _, w := range s.plan.Writable {
		s.gitDir(w)
	}
	found := append([]string{}, in.Found...)
	sort.Strings(found)
	for _, p := range found {
		if !s.writable(p) {
			continue
		}
		switch filepath.Base(p) {
		case ".git":
			s.dotGit(p)
		case "HEAD":
			if d := filepath.Dir(p); IsGitDir(d) || exists(filepath.Join(d, "commondir")) {
				s.gitDir(d)
			}
		}
	}
	// New .git entries and git init: every writable root and its first
	// level of subdirectories are observed; relative core.hooksPath values
	// of the user's own config apply to a repository made there.
	for _, r := range in.Writable {
		fi, err := os.Lstat(r)
		if err != nil || !fi.IsDir() {
			continue
		}
		s.g.observe(r, Role{Kind: RoleRoot})
		ents, _ := os.ReadDir(r)
		for _, e := range ents {
			if e.IsDir() && e.Name() != ".git" {
				s.g.observe(filepath.Join(r, e.Name()), Role{Kind: RoleSub})
			}
		}
		for _, e := range s.user {
			if e.Section == "core" && !e.HasSub && e.Key == "hookspath" && !filepath.IsAbs(e.Value) && !strings.HasPrefix(e.Value, "~") {
				s.protectVia(filepath.Join(r, e.Value), true, "core.hooksPath (relative, from your git config) of a repository made here")
			}
		}
	}
	if s.g.Dropped > 0 {
		s.plan.Notes = append(s.plan.Notes, fmt.Sprintf("git: %d directories are not watched (more than %d); the exit check still covers them", s.g.Dropped, max))
	}
	if len(s.managed) > 0 {
		// Said, because an agent asked to add a lint step fails to write
		// them and the user needs to know how to allow it.
		s.plan.Notes = append(s.plan.Notes, fmt.Sprintf("git: the files your installed git hooks' manager runs are read-only in this run (%s); `allow-git-config` lets the agent change them", someOf(s.managed)))
	}
	s.g.Roots = append([]string{}, s.roots...)
	sort.Strings(s.g.Roots)
	s.plan.Guard = s.g
	s.plan.ReadOnly, s.plan.Hide, s.plan.Absent, s.plan.Watch = sorted(s.ro), sorted(s.hide), sorted(s.absent), sorted(s.watch)
	s.plan.Links, s.plan.Ways = sorted(s.links), sorted(s.ways)
	s.plan.History = s.keepPacks()
	for d := range s.g.Dirs {
		s.plan.Observe = append(s.plan.Observe, d)
	}
	sort.Strings(s.plan.Observe)
	sort.Strings(s.plan.Repos)
	return s.plan
}

func sorted(m map[string]Protect) []Protect {
	out := make([]Protect, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func (s *scanner) writable(p string) bool {
	for _, r := range s.roots {
		if under(p, r) {
			return true
		}
	}
	return false
}

func (s *scanner) know(p string) {
	if fi, err := os.Lstat(p); err == nil {
		s.g.Known[p] = identOf(fi)
	}
}

// knowAs records p's identity from fi, an lstat of p the caller just made
// (one lstat, not two, for each protected path).
func (s *scanner) knowAs(p string, fi os.FileInfo) {
	s.g.Known[p] = identOf(fi)
}

// protect makes p read-only if it exists, or watches it if it does not; only
// inside the writable trees (elsewhere the agent cannot touch it anyway).
func (s *scanner) protect(p string, dir bool, why string) {
	p = filepath.Clean(p)
	if !s.writable(p) {
		return
	}
	fi, err := os.Lstat(p)
	s.protectStat(p, fi, err, dir, why)
}

// protectStat is protect with p's lstat already made (fi, err): control
// lstats each control file once, not three times (exists, protect, know).
func (s *scanner) protectStat(p string, fi os.FileInfo, err error, dir bool, why string) {
	if err != nil {
		if _, ok := s.absent[p]; !ok {
			s.absent[p] = Protect{Path: p, Dir: dir, Why: why}
		}
		return
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		// A mount lands on the link's target: protect that, and know the
		// link (replacing it is judged at exit); the link is kept as it
		// is while the sandbox runs (Links).
		s.knowAs(p, fi)
		s.link(p, why)
		t, err := filepath.EvalSymlinks(p)
		if err != nil {
			return
		}
		p = t
		if fi, err = os.Lstat(p); err != nil || !s.writable(p) {
			return
		}
	}
	s.knowAs(p, fi)
	if _, ok := s.ro[p]; !ok {
		s.ro[p] = Protect{Path: p, Dir: fi.IsDir(), Why: why}
	}
}

// link records symlink l on the way to a protected path (Plan.Links).
func (s *scanner) link(l, why string) {
	if !s.writable(l) {
		return
	}
	if s.links == nil {
		s.links = map[string]Protect{}
	}
	if _, ok := s.links[l]; !ok {
		s.links[l] = Protect{Path: l, Why: "a symlink on the way: " + why}
	}
}

// protectVia protects p (a path the user's own config names, which may
// lie anywhere in a writable tree) after the symlinks on the way to it,
// which it records (link) and knows, every one of them inside the writable
// trees: protect handles a link at p itself, but one on the way
// (ws/hl/pre-commit, hl -> hooks) would leave the mount on a path through
// the link, and so would a second link inside the first one's target
// (hooksPath ws/a/c/hooks, a -> b, b/c -> ../d: review13e kept a only, and
// the agent repointed b/c). The path is resolved as the kernel does for
// git (hostpath: '..' after a link from its target, up to 40 links).
func (s *scanner) protectVia(p string, dir bool, why string) {
	real, links, err := hostpath.ResolveAsNamed(p)
	for _, l := range links {
		if s.writable(l.Path) {
			// Kept a symlink to the same place while the sandbox runs,
			// and known (replacing it is judged at exit).
			s.know(l.Path)
			s.link(l.Path, why)
			if s.ways == nil {
				s.ways = map[string]Protect{}
			}
			s.ways[p] = Protect{Path: p, Dir: dir, Why: why}
		}
	}
	if err != nil {
		return // a loop, or unreadable: nothing there runs
	}
	s.protect(real, dir, why)
}

// control protects a control file of a git dir: read-only if it exists,
// else judged by the Guard when it appears (the git dir is observed).
func (s *scanner) control(p string, dir bool, why string) {
	if !s.writable(p) {
		return // outside the writable trees the agent cannot touch it
	}
	fi, err := os.Lstat(p)
	s.controlStat(p, fi, err, dir, why)
}

// controlStat is control with p's lstat already made (fi, err).
func (s *scanner) controlStat(p string, fi os.FileInfo, err error, dir bool, why string) {
	if !s.writable(p) {
		return
	}
	if err != nil {
		s.watch[p] = Protect{Path: p, Dir: dir, Why: why}
		return
	}
	s.protectStat(filepath.Clean(p), fi, nil, dir, why)
}

// worktreeRoot: a workspace whose .git is a verified worktree's .git file
// gets the repository's common dir writable (git commit must write objects
// and refs there); everything in it that runs code stays protected.
func (s *scanner) worktreeRoot() {
	if s.in.Workspace == "" {
		return
	}
	dotgit := filepath.Join(s.in.Workspace, ".git")
	fi, err := os.Lstat(dotgit)
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	note := func(format string, a ...any) {
		s.plan.Notes = append(s.plan.Notes, fmt.Sprintf("%s: "+format+"; its git directory stays read-only (git commit will fail; add it with `write` if you trust it)", append([]any{dotgit}, a...)...))
	}
	b, err := readSmall(dotgit)
	if err != nil {
		note("unreadable: %v", err)
		return
	}
	target, err := ParseGitFile(b)
	if err != nil {
		note("%v", err)
		return
	}
	t := rel(s.in.Workspace, target)
	if t == "" {
		note("gitdir %s does not exist", target)
		return
	}
	if !exists(filepath.Join(t, "commondir")) {
		return // a submodule checkout: its git dir is judged like any other
	}
	if VerifyGitFile(dotgit, t) != "worktree" {
		note("%s is not the git dir of this worktree (its gitdir, commondir or place under worktrees/ disagree)", t)
		return
	}
	common, _ := CommonDir(t)
	if s.writable(common) {
		return
	}
	s.plan.Writable = append(s.plan.Writable, common)
	s.roots = append(s.roots, common)
}

// dotGit handles a .git entry found at start.
func (s *scanner) dotGit(p string) {
	fi, err := os.Lstat(p)
	if err != nil {
		return
	}
	s.knowAs(p, fi)
	switch {
	case fi.IsDir():
		if IsGitDir(p) {
			s.gitDir(p)
		}
	case fi.Mode()&os.ModeSymlink != 0:
		// Mounting over it would land on the target; the link itself is
		// known: replaced, it is judged (observed places, and at exit).
		if t, err := filepath.EvalSymlinks(p); err == nil && IsGitDir(t) && s.writable(t) {
			s.gitDir(t)
		}
	case fi.Mode().IsRegular():
		s.gitFile(p)
	}
}

// gitFile handles a .git file found at start: a verified one is kept
// read-only (the agent must not point it elsewhere); one that does not
// verify is hidden inside and reported, unless it leads to a git dir the
// agent cannot write (a --separate-git-dir the user made), or to a --write
// root the user named.
func (s *scanner) gitFile(p string) {
	b, err := readSmall(p)
	var target string
	if err == nil {
		target, err = ParseGitFile(b)
	}
	if err != nil {
		s.hideGitFile(p, fmt.Sprintf("git cannot follow it (%v)", err))
		return
	}
	t := rel(filepath.Dir(p), target)
	switch VerifyGitFile(p, t) {
	case "worktree":
		s.protect(p, false, "a linked worktree's .git file")
		common, _ := CommonDir(t)
		s.gitDir(t)
		if s.writable(common) {
			s.gitDir(common)
		}
		return
	case "submodule":
		s.protect(p, false, "a submodule's .git file")
		if s.writable(t) {
			s.gitDir(t)
		}
		return
	}
	switch {
	case t != "" && IsGitDir(t) && (!s.writable(t) || isRoot(s.in.Writable, t)):
		s.protect(p, false, "a .git file to a repository the agent cannot redirect")
		if s.writable(t) {
			s.gitDir(t)
		}
		if p != filepath.Join(s.in.Workspace, ".git") {
			s.plan.Notes = append(s.plan.Notes, fmt.Sprintf("%s leads to %s, which is not a linked worktree or submodule of a repository here; kept read-only", p, t))
		}
	default:
		s.hideGitFile(p, fmt.Sprintf("it makes git use %s, which is not a linked worktree or submodule git dir", target))
	}
}

func (s *scanner) hideGitFile(p, why string) {
	s.hide[p] = Protect{Path: p, Why: "a .git file that does not verify"}
	s.plan.Notes = append(s.plan.Notes, fmt.Sprintf("%s is hidden inside: %s. Git on the host still follows it: if you did not make it, move it away", p, why))
}

// gitDir protects every control file of git dir d.
func (s *scanner) gitDir(d string) {
	if s.done[d] || !s.writable(d) {
		return
	}
	s.done[d] = true
	s.know(d)
	s.plan.Repos = append(s.plan.Repos, d)
	// commondir's lstat, once: it tells a linked worktree's git dir, and
	// it is a control file either way.
	cd := filepath.Join(d, "commondir")
	cfi, cerr := os.Lstat(cd)
	if cerr == nil {
		// A linked worktree's git dir: HEAD, index and logs are its own;
		// commondir and gitdir say where its repository and checkout are.
		s.controlStat(cd, cfi, nil, false, "commondir: which repository this worktree uses")
		if exists(filepath.Join(d, "gitdir")) {
			s.protect(filepath.Join(d, "gitdir"), false, "gitdir: where this worktree is checked out")
		}
		s.control(filepath.Join(d, "config.worktree"), false, "config.worktree can set core.hooksPath and core.fsmonitor")
		s.g.observe(d, Role{Kind: RoleWorktree, Repo: filepath.Dir(filepath.Dir(d))})
		return
	}
	sub := strings.Contains(d, "/modules/")
	s.control(filepath.Join(d, "config"), false, "config: core.hooksPath, core.fsmonitor, aliases and filters run code")
	s.control(filepath.Join(d, "config.worktree"), false, "config.worktree can set core.hooksPath and core.fsmonitor")
	s.control(filepath.Join(d, "hooks"), true, "hooks run on the next git command")
	s.controlStat(cd, cfi, cerr, false, "commondir would make git take config and hooks from another directory")
	for _, n := range []string{"remotes", "branches"} {
		s.control(filepath.Join(d, n), true, "legacy "+n+"/ names remotes git fetches from and pushes to")
	}
	// Absent at start, it is watched and leaves the tree if it appears
	// (protect): an alternates file the agent adds, naming a copy of the
	// objects it made in the workspace, makes the host's next ordinary
	// `git gc` (repack -l: local objects only) delete every local pack,
	// the history then living only in that copy, which the agent deletes
	// in a later run (review15c).
	s.protect(filepath.Join(d, "objects", "info", "alternates"), false, "alternates make git read objects from other directories")
	// What the host's next `git gc` believes is reachable: it deletes
	// the rest (packed objects older than its two weeks of grace, so the
	// read-only packs do not save them). .git/shallow cuts the walk at
	// the commits it lists; a commit-graph gives the parents git reads
	// instead of the commits' own (one entry's parent taken out, the
	// checksum made again, and everything below it is gone). With the
	// reflogs expired (data the agent may rewrite) no ref moves and
	// nothing is said (review15f). Read-only if present (git commit-graph
	// write and gc inside fail to replace it, said by git), leaving the
	// tree if it appears: git rebuilds a commit-graph at the host's next
	// gc, and a shallow clone's `fetch --deepen/--unshallow` is the user's
	// to run on the host.
	for _, p := range []string{"shallow", filepath.Join("objects", "info", "commit-graph")} {
		s.protect(filepath.Join(d, p), false, "it decides what git gc on the host keeps")
	}
	s.protect(filepath.Join(d, "objects", "info", "commit-graphs"), true, "it decides what git gc on the host keeps")
	s.g.observe(d, Role{Kind: RoleRepo, Submodule: sub})
	s.history(d)
	for _, n := range []string{"worktrees", "modules"} {
		if fi, err := os.Lstat(filepath.Join(d, n)); err == nil && fi.IsDir() {
			s.know(filepath.Join(d, n))
			kind := RoleWorktrees
			if n == "modules" {
				kind = RoleModules
			}
			s.g.observe(filepath.Join(d, n), Role{Kind: kind, Repo: d, Submodule: sub})
			if n == "worktrees" {
				ents, _ := os.ReadDir(filepath.Join(d, n))
				for _, e := range ents {
					w := filepath.Join(d, n, e.Name())
					if e.IsDir() {
						s.know(w)
						s.gitDir(w)
					}
				}
			} else {
				s.knowTree(filepath.Join(d, n))
			}
		}
	}
	s.effects(d, sub)
}

// resolveBelow resolves names (one component each) below git dir d, which
// is symlink-free (Input's paths are; gitDir's other callers resolve what
// they read): one lstat a component, where filepath.EvalSymlinks of the
// whole path lstats every component from / again (gitpacks3: half of the
// scan's calls with 2,000 repositories). A symlink on the way is followed
// as EvalSymlinks does (a linked objects/ or pack/ is protected where it
// leads, review15c; a linked hooks/ is read where it leads). fi is the
// lstat of the result (never a symlink).
func resolveBelow(d string, names ...string) (string, os.FileInfo, error) {
	p := d
	var fi os.FileInfo
	for _, n := range names {
		p = filepath.Join(p, n)
		var err error
		if fi, err = os.Lstat(p); err != nil {
			return "", nil, err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			r, err := filepath.EvalSymlinks(filepath.Join(d, filepath.Join(names...)))
			if err != nil {
				return "", nil, err
			}
			fi, err = os.Lstat(r)
			return r, fi, err
		}
	}
	return p, fi, nil
}

// HistoryWhy is the reason given for every pack Plan.History holds.
const HistoryWhy = "history: a pack of commits (deleting or rewriting it loses them)"

// MaxHistoryPacks bounds the packs made read-only in one run (two mounts
// each): past it the rest is said (Plan.Notes).
const MaxHistoryPacks = 256

// history makes the packs of git dir d read-only: a commit, a clone, a
// fetch or a gc writes each pack once, under a new name, and never changes
// it; git deletes one only when it repacks. A read-only bind is a mount
// point: the agent can neither write, chmod, truncate, unlink nor rename
// it (EROFS, EBUSY), and the directories above it are pinned (package
// sandbox), so `rm -rf .git`, `git gc --prune=now` and a pack overwritten
// in place lose no packed commit. Inside, git keeps working: a commit
// writes loose objects, a fetch or gc writes new packs beside the old ones
// (which stay, as garbage, until a gc on the host). Not covered: loose
// objects (commits made since the last gc, often the unpushed ones) and
// refs and reflogs (where a branch points), which are data the agent may
// rewrite; the objects survive a rewritten ref, `git fsck --lost-found`
// or the reflog finds them. Only regular files named as git names them are
// taken. A symlinked objects/ or pack/ is followed, and the packs are
// protected where they are when that is inside a writable tree (outside
// one the agent cannot delete them anyway): in a young repository (loose
// objects only, nothing pinned) an agent can move objects/ aside and leave
// a link git follows; the host's next gc packs the history behind the link,
// and a run that skipped linked pack directories left it deletable, said
// nowhere (review15c).
func (s *scanner) history(d string) {
	dir, fi, err := resolveBelow(d, "objects", "pack")
	if err != nil || !s.writable(dir) || !fi.IsDir() {
		return
	}
	s.packGit[dir] = append(s.packGit[dir], d)
	if s.packDirs[dir] {
		return
	}
	// One pack directory reached from two git dirs (a link, a
	// submodule's) is taken once.
	s.packDirs[dir] = true
	ents, err := os.ReadDir(dir) // no stat per entry: the type is the dirent's
	if err != nil {
		return
	}
	have := map[string]bool{}
	for _, e := range ents {
		if e.Type().IsRegular() {
			have[e.Name()] = true
		}
	}
	for _, e := range ents {
		n := e.Name()
		base, ok := strings.CutSuffix(n, ".pack")
		if !ok || !strings.HasPrefix(n, "pack-") || !have[n] || !have[base+".idx"] {
			continue
		}
		s.packs = append(s.packs,
			Protect{Path: filepath.Join(dir, base+".idx"), Why: HistoryWhy},
			Protect{Path: filepath.Join(dir, n), Why: HistoryWhy})
	}
}

// keepPacks returns the packs of Plan.History: all of them up to
// MaxHistoryPacks. Past it the mounts are a budget shared by pack
// directory (one per repository), never by pack: each directory, in the
// order below, first gets one mount (the directory read-only whole: every
// pack in it kept, however many); then the remaining budget makes
// directories pack by pack (two mounts a pack, the directory writable so
// that git fetch and git gc inside still work), the workspace's own
// repository first, then those with the fewest packs; a directory of more
// than WholePackDir packs stays whole. The order is the workspace's own
// repository, then those whose history a store has kept longest
// (Input.KeptSince, oldest first), then the shallowest directories, then
// by name; the
// directories past the budget are left, said in one line (Notes).
// Never by pack: review15c ranked packs by ctime (the agent names files as
// it likes, "pack-!000.pack" sorts before every hex name), and review15f
// put the workspace's own first; but the agent can plant its pairs before
// the real pack exists -- in a run before the user's next gc on the host
// packs a nested repository's history into a new pack, newer than every
// planted one (valid packs with a .keep each: the gc neither fails on them
// nor deletes them) -- and six nested repositories of 50 planted packs
// each took the whole budget from the user's nested repository
// (gitpacks3). Now a repository loses its protection only past
// 2*MaxHistoryPacks pack directories in front of it, and every mount
// counts: a thousand directories of 51 packs are no longer a thousand
// mounts.
func (s *scanner) keepPacks() []Protect {
	if len(s.packs)/2 <= MaxHistoryPacks {
		return s.packs
	}
	type packDir struct {
		dir         string
		pairs       []Protect // each pack's .idx, then its .pack
		own         bool
		depth       int
		since       int64 // the oldest store's (KeptSince) of its git dirs
		kept0       bool  // one of them has a store
		kept, split bool  // one mount at least; pack by pack
	}
	own := ""
	if s.in.Workspace != "" {
		own, _ = filepath.EvalSymlinks(filepath.Join(s.in.Workspace, ".git", "objects", "pack"))
	}
	var dirs []*packDir
	byDir := map[string]*packDir{}
	for i := 0; i+1 < len(s.packs); i += 2 {
		d := filepath.Dir(s.packs[i+1].Path)
		pd := byDir[d]
		if pd == nil {
			pd = &packDir{dir: d, own: d == own, depth: strings.Count(d, "/")}
			for _, g := range s.packGit[d] {
				if s.in.KeptSince == nil {
					break
				}
				if t, ok := s.in.KeptSince(g); ok && (!pd.kept0 || t < pd.since) {
					pd.since, pd.kept0 = t, true
				}
			}
			byDir[d] = pd
			dirs = append(dirs, pd)
		}
		pd.pairs = append(pd.pairs, s.packs[i], s.packs[i+1])
	}
	sort.SliceStable(dirs, func(i, j int) bool {
		a, b := dirs[i], dirs[j]
		if a.own != b.own {
			return a.own
		}
		// Why: the store's prune frees a copy when a pack holds it,
		// counting on that pack being read-only in every later run; a
		// repository cut from the budget is marked (its copies go by age
		// only) but a copy freed before stays freed, so a repository the
		// store counted on must never fall behind ones planted after. By
		// the store's age: the agent's repositories have no store when the
		// start that first sees them plans, then a younger one; a
		// repository first cut at its first start is marked before any
		// copy is freed (review16b, TestGitHistoryPruneFreedThenCut).
		if a.kept0 != b.kept0 {
			return a.kept0
		}
		if a.kept0 && a.since != b.since {
			return a.since < b.since
		}
		if a.depth != b.depth {
			return a.depth < b.depth
		}
		return a.dir < b.dir
	})
	budget := 2 * MaxHistoryPacks
	for _, d := range dirs {
		if budget == 0 {
			break
		}
		d.kept = true
		budget--
	}
	split := make([]*packDir, 0, len(dirs))
	for _, d := range dirs {
		if d.kept && len(d.pairs)/2 <= WholePackDir {
			split = append(split, d)
		}
	}
	sort.SliceStable(split, func(i, j int) bool {
		if split[i].own != split[j].own {
			return split[i].own
		}
		return len(split[i].pairs) < len(split[j].pairs)
	})
	for _, d := range split {
		if extra := len(d.pairs) - 1; extra <= budget {
			d.split = true
			budget -= extra
		}
	}
	out := make([]Protect, 0, 2*MaxHistoryPacks)
	var whole, left []string
	for _, d := range dirs {
		switch {
		case d.split:
			out = append(out, d.pairs...)
		case d.kept:
			out = append(out, Protect{Path: d.dir, Dir: true, Why: HistoryWhy})
			whole = append(whole, d.dir)
		default:
			left = append(left, d.dir)
		}
	}
	if len(whole) > 0 {
		s.plan.Notes = append(s.plan.Notes, fmt.Sprintf("git: past %d packs, %d pack directories are read-only whole in this run (more than %d packs in one, or too many repositories to take pack by pack), so no new pack can be written there (git fetch and git gc inside fail; git gc on the host packs them into one): %s", MaxHistoryPacks, len(whole), WholePackDir, someOf(whole)))
	}
	s.plan.PacksLeft = left
	if len(left) > 0 {
		s.plan.Notes = append(s.plan.Notes, fmt.Sprintf("git: past %d pack directories, the packs of %d are not read-only (the workspace's repository's, then those kept longest outside the sandbox, then the shallowest are); their history can be deleted in this run: %s", 2*MaxHistoryPacks, len(left), someOf(left)))
	}
	return out
}

// someOf names the first few of ps and how many more there are.
func someOf(ps []string) string {
	const n = 3
	if len(ps) <= n {
		return strings.Join(ps, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ps[:n], ", "), len(ps)-n)
}

// WholePackDir: past MaxHistoryPacks, a pack directory holding more packs
// than this is made read-only whole (keepPacks). git's own automatic gc
// packs a repository's packs into one at 50 (gc.autoPackLimit), so an
// honest repository rarely holds more.
const WholePackDir = 50

// knowTree records the directories under modules/ (nested submodule names).
func (s *scanner) knowTree(m string) {
	ents, _ := os.ReadDir(m)
	for _, e := range ents {
		c := filepath.Join(m, e.Name())
		if e.IsDir() {
			s.know(c)
			if !IsGitDir(c) {
				s.knowTree(c)
			}
		}
	}
}

// effects protects what the repository's configuration and hooks point at
// inside the writable trees: core.hooksPath directories, included files,
// programs named by path, files a hook names, and hook managers' configs.
func (s *scanner) effects(d string, sub bool) {
	es := append([]Entry{}, s.user...)
	srcs := append([]string{}, s.userSrc...)
	for _, n := range []string{"config", "config.worktree"} {
		e, src := s.readConfig(filepath.Join(d, n), 0)
		es, srcs = append(es, e...), append(srcs, src...)
	}
	// Where the hooks and commands run: the work trees of this repository.
	var wts []string
	bare := false
	for _, e := range es {
		if e.Section == "core" && !e.HasSub && e.Key == "bare" {
			bare = gitBool(e.Value) || e.NoValue
		}
	}
	for i, e := range es {
		if e.Section == "core" && !e.HasSub && e.Key == "worktree" && !e.NoValue && srcs[i] != "" {
			if w := rel(filepath.Dir(srcs[i]), e.Value); w != "" {
				wts = append(wts, w)
			}
		}
	}
	if filepath.Base(d) == ".git" && !bare {
		wts = append(wts, filepath.Dir(d))
	}
	ents, _ := os.ReadDir(filepath.Join(d, "worktrees"))
	for _, e := range ents {
		if b, err := readSmall(filepath.Join(d, "worktrees", e.Name(), "gitdir")); err == nil {
			if back := strings.TrimRight(string(b), " \t\r\n"); back != "" {
				wts = append(wts, filepath.Dir(filepath.Join(d, "worktrees", e.Name(), back)))
				if filepath.IsAbs(back) {
					wts[len(wts)-1] = filepath.Dir(back)
				}
			}
		}
	}
	if len(wts) == 0 {
		wts = []string{d} // bare: hooks run in the git dir
	}
	resolve := func(v string) []string {
		if p := s.userPath(v); p != "" {
			return []string{asGit(p)}
		} else if strings.HasPrefix(v, "~") {
			return nil // a home not known: git dies on it
		}
		var out []string
		for _, w := range wts {
			out = append(out, asGit(w+"/"+v))
		}
		return out
	}
	hookDirs := []string{filepath.Join(d, "hooks")}
	managers := map[string]bool{}
	// huskyDirs: hooks paths named DIR/_, husky 9's layout (`husky DIR`):
	// its helper DIR/_/h runs DIR/<hook>, the work-tree script beside the
	// hooks path, whatever DIR is called.
	var huskyDirs []string
	for _, e := range es {
		switch {
		case e.Section == "core" && !e.HasSub && e.Key == "hookspath" && !e.NoValue:
			for _, p := range resolve(e.Value) {
				s.protect(p, true, "core.hooksPath: git runs the hooks in it")
				hookDirs = append(hookDirs, p)
				if strings.Contains(e.Value, "husky") {
					managers["husky"] = true
				}
				// Only a DIR strictly inside a work tree: a hooks path "_"
				// at the top would make the whole work tree read-only.
				if dir := filepath.Dir(p); filepath.Base(p) == "_" && slices.ContainsFunc(wts, func(w string) bool {
					return strings.HasPrefix(dir, w+string(filepath.Separator))
				}) {
					huskyDirs = append(huskyDirs, dir)
				}
			}
		case programKey(e):
			toks, first := pathTokens(e.Value)
			for i, t := range toks {
				for _, p := range resolve(t) {
					if i == 0 && first {
						s.protect(p, false, e.Name()+" runs it")
					} else if exists(p) {
						s.protect(p, false, e.Name()+" names it")
					}
				}
			}
		}
	}
	installed := false
	var hookNames []string
	for i, h := range hookDirs {
		var hh string
		var err error
		if i == 0 {
			hh, _, err = resolveBelow(d, "hooks") // d is resolved
		} else {
			hh, err = filepath.EvalSymlinks(h)
		}
		if err != nil {
			continue
		}
		ents, _ := os.ReadDir(hh)
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".sample") {
				continue
			}
			installed = true
			hookNames = append(hookNames, e.Name())
			p := filepath.Join(hh, e.Name())
			fi, err := os.Lstat(p)
			if err != nil {
				continue
			}
			if fi.Mode()&os.ModeSymlink != 0 {
				t, _ := os.Readlink(p)
				if !filepath.IsAbs(t) {
					t = filepath.Join(hh, t)
				}
				if r, err := filepath.EvalSymlinks(t); err == nil {
					t = r
				}
				s.protect(t, false, "a hook ("+e.Name()+") is a link to it")
				continue
			}
			if !fi.Mode().IsRegular() {
				continue
			}
			b, _ := readSmall(p)
			text := string(b)
			// Marks in any case: husky 9's helper may say only $HUSKY.
			lower := strings.ToLower(text)
			for _, hm := range hookManagers {
				for _, m := range hm.marks {
					if strings.Contains(lower, m) {
						managers[hm.name] = true
					}
				}
			}
			// husky 9's layout whatever its text: a helper "h" in a hooks
			// path named DIR/_ (huskyDirs).
			if i > 0 && e.Name() == "h" && filepath.Base(h) == "_" {
				managers["husky"] = true
			}
			// `pre-commit install -c FILE` names its config in the hook
			// (ARGS=(hook-impl --config=FILE ...)): pre-commit runs that
			// file's `repo: local` entries. A name without a slash is no
			// path token below, so it is protected here, present or not
			// (a config created later arms the installed hook).
			for _, c := range preCommitConfigs(text) {
				for _, p := range resolve(c) {
					s.manage(p, false, "pre-commit reads it when the "+e.Name()+" hook runs")
				}
			}
			for _, line := range strings.Split(text, "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), "#") {
					continue
				}
				toks, _ := pathTokens(line)
				for _, t := range toks {
					for _, p := range resolve(t) {
						if exists(p) {
							s.protect(p, false, "the "+e.Name()+" hook runs or reads it")
						}
					}
				}
			}
		}
	}
	if installed {
		if managers["husky"] {
			for _, p := range huskyDirs {
				// Why: husky's h runs DIR/pre-commit etc. from the work tree;
				// an agent's edit there runs in the host's next git commit.
				s.manage(p, true, "husky runs the hook scripts in it when the installed hooks run")
			}
		}
		if managers["lefthook"] {
			// Why: lefthook clones a config's remotes into the git dir's
			// info/lefthook-remotes/ and the installed hooks run their
			// configs and scripts from there, with no fetch at each commit:
			// an agent's edit in a clone runs in the host's next commit.
			s.manage(filepath.Join(d, "info", "lefthook-remotes"), true, "lefthook runs its remotes' configs and scripts from it")
			for _, w := range wts {
				var configs []string
				for _, hm := range hookManagers {
					for _, f := range hm.files {
						if hm.name == "lefthook" && !strings.HasSuffix(f, "/") {
							configs = append(configs, filepath.Join(w, f))
						}
					}
				}
				s.lefthookFiles(w, configs, hookNames)
			}
		}
		if managers["overcommit"] {
			for _, w := range wts {
				s.overcommitFiles(w)
			}
		}
		for _, hm := range hookManagers {
			if !managers[hm.name] {
				continue
			}
			for _, f := range hm.files {
				for _, w := range wts {
					s.manage(filepath.Join(w, strings.TrimSuffix(f, "/")), strings.HasSuffix(f, "/"),
						hm.name+" reads it when the installed hooks run")
				}
			}
		}
	}
}

// hookManagers: marks (lower case; the text is compared folded) recognise a
// hook manager in an installed hook's text;
// files are what it reads from the work tree. (A slice literal, laid out by
// the compiler; package-level maps are built in every jail process's init.)
var hookManagers = []struct {
	name         string
	marks, files []string
}{
	// husky 9 runs .husky/<hook> (another DIR: see huskyDirs); husky 4's
	// hooks run what its cosmiconfig files name (and package.json's
	// "husky" key, which is not protected: see README).
	{"husky", []string{"husky"}, []string{".husky/", ".huskyrc", ".huskyrc.json", ".huskyrc.yaml", ".huskyrc.yml",
		".huskyrc.js", ".huskyrc.cjs", "husky.config.js", "husky.config.cjs"}},
	// Every name lefthook 1.x loads (its docs' "Config file name"): main
	// and -local configs in YAML, TOML, JSON and JSONC, at the top (with or
	// without a dot) and under .config/; its script dirs.
	{"lefthook", []string{"lefthook"}, []string{
		"lefthook.yml", "lefthook.yaml", "lefthook.toml", "lefthook.json", "lefthook.jsonc",
		".lefthook.yml", ".lefthook.yaml", ".lefthook.toml", ".lefthook.json", ".lefthook.jsonc",
		"lefthook-local.yml", "lefthook-local.yaml", "lefthook-local.toml", "lefthook-local.json", "lefthook-local.jsonc",
		".lefthook-local.yml", ".lefthook-local.yaml", ".lefthook-local.toml", ".lefthook-local.json", ".lefthook-local.jsonc",
		".config/lefthook.yml", ".config/lefthook.yaml", ".config/lefthook.toml", ".config/lefthook.json", ".config/lefthook.jsonc",
		".config/lefthook-local.yml", ".config/lefthook-local.yaml", ".config/lefthook-local.toml",
		".config/lefthook-local.json", ".config/lefthook-local.jsonc",
		".lefthook/", ".lefthook-local/"}},
	{"pre-commit", []string{"pre-commit.com", "pre_commit"}, []string{".pre-commit-config.yaml"}},
	// overcommit merges .local-overcommit.yml into .overcommit.yml.
	{"overcommit", []string{"overcommit"}, []string{".overcommit.yml", ".local-overcommit.yml", ".git-hooks/"}},
}

// manage protects a hook manager's file p (as protect) and remembers it for
// the start's note when it exists and became read-only.
func (s *scanner) manage(p string, dir bool, why string) {
	p = filepath.Clean(p)
	_, had := s.ro[p]
	s.protect(p, dir, why)
	if _, ok := s.ro[p]; ok && !had && !slices.Contains(s.managed, p) {
		s.managed = append(s.managed, p)
	}
}

// preCommitConfigs returns the configs an installed pre-commit hook names
// (--config=FILE or --config FILE, in its ARGS line), without duplicates.
// Only a hook pre-commit wrote is read: the caller passes any hook's text,
// and text without pre-commit's mark gives nothing.
func preCommitConfigs(text string) []string {
	if !strings.Contains(text, "pre-commit.com") && !strings.Contains(text, "pre_commit") {
		return nil
	}
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		f := strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(" \t\r()'\"", r) })
		for i, w := range f {
			var c string
			switch {
			case strings.HasPrefix(w, "--config="):
				c = strings.TrimPrefix(w, "--config=")
			case w == "--config" && i+1 < len(f):
				c = f[i+1]
			}
			if c != "" && !strings.ContainsAny(c, "$`*?[") && !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// readUser reads one of the user's own config files (and its includes).
func (s *scanner) readUser(p string, depth int) {
	es, srcs := s.readConfig(p, depth)
	s.user = append(s.user, es...)
	s.userSrc = append(s.userSrc, srcs...)
}

// readEnv adds the environment's config entries to the user's, with the
// files their include.path and includeIf.*.path name (git reads only
// absolute or ~/ ones there: a relative include outside a file is an error).
func (s *scanner) readEnv(es []Entry) {
	for _, e := range es {
		s.user, s.userSrc = append(s.user, e), append(s.userSrc, "")
		if e.Key != "path" || e.NoValue || !(e.Section == "include" && !e.HasSub || e.Section == "includeif" && e.HasSub) {
			continue
		}
		// A relative include from the environment: git dies on it.
		inc := s.userPath(e.Value)
		if inc == "" {
			continue
		}
		s.protectVia(inc, false, "included by the environment's git config (GIT_CONFIG_*): a config file git reads")
		s.readUser(inc, 1)
	}
}

// readConfig reads a config file and the files it includes (include.path,
// every includeIf.*.path: jail does not evaluate conditions), protecting
// included files inside the writable trees. srcs[i] is the file of es[i].
func (s *scanner) readConfig(p string, depth int) (es []Entry, srcs []string) {
	if depth > 10 {
		return nil, nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, nil
	}
	parsed, _ := ParseConfig(b)
	for _, e := range parsed {
		es, srcs = append(es, e), append(srcs, p)
		if e.Key != "path" || e.NoValue || !(e.Section == "include" && !e.HasSub || e.Section == "includeif" && e.HasSub) {
			continue
		}
		inc := s.userPath(e.Value)
		switch {
		case inc == "" && strings.HasPrefix(e.Value, "~"):
			continue // a home not known: git dies on it
		case inc == "":
			inc = filepath.Dir(p) + "/" + e.Value // as named: see userPath
		}
		s.protectVia(inc, false, "included by "+p+": a config file git reads")
		ies, isrcs := s.readConfig(inc, depth+1)
		es, srcs = append(es, ies...), append(srcs, isrcs...)
	}
	return es, srcs
}

// userEffects protects what the user's own config files name by absolute
// (or ~/) path inside the writable trees, whether or not a repository is
// there: a global core.hooksPath runs in every repository of the host, a
// global init.templateDir's hooks are copied into every repository git
// init makes later, a program-valued key runs wherever git does. (effects
// adds the relative ones, per work tree, for each repository.)
func (s *scanner) userEffects() {
	abs := s.userPath
	for _, e := range s.user {
		if e.NoValue {
			continue
		}
		switch {
		case e.Section == "core" && !e.HasSub && e.Key == "hookspath":
			if p := abs(e.Value); p != "" {
				s.protectVia(p, true, "core.hooksPath (your git config): git runs the hooks in it, in every repository")
			}
		case e.Section == "init" && !e.HasSub && e.Key == "templatedir":
			if p := abs(e.Value); p != "" {
				s.protectVia(p, true, "init.templateDir (your git config): git init copies its hooks into every new repository")
			}
		case programKey(e):
			toks, first := pathTokens(e.Value)
			for i, t := range toks {
				if p := abs(t); p != "" && (i == 0 && first || exists(p)) {
					s.protectVia(p, false, e.Name()+" (your git config) runs it")
				}
			}
		}
	}
}
