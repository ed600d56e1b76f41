package fsrules

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/jail-sandbox/jail/dirnames"
	"github.com/jail-sandbox/jail/internal/asciifold"
)

// This file: protected paths that do not exist at start (Plan.Absent), and a
// home's dotfiles that are symlinks into a visible tree.

// nested is a protected name under a parent directory of its own
// (.docker/config.json): wherever the walk finds the parent in a writable
// root, a missing child is listed as absent.
type nested struct {
	parent *Pattern // "/**/.docker"
	child  string   // "config.json"
	b      Builtin
}

// nestedRules indexes the multi-element built-ins by the last element of
// their parent (".docker", "gh" for .config/gh/hosts.yml).
func nestedRules(allowGit bool) map[string][]nested {
	out := map[string][]nested{}
	for _, b := range Builtins {
		if b.Git && allowGit || strings.HasPrefix(b.Name, "~/") || strings.ContainsAny(b.Name, `*?[\`) {
			continue
		}
		if strings.HasPrefix(b.Name, ".git/") {
			// Names inside a git dir: package gitguard knows which exist in
			// each repository and watches the absent ones (and git init).
			continue
		}
		name := strings.TrimSuffix(b.Name, "/")
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			continue
		}
		parent, child := name[:i], name[i+1:]
		p, err := compileAbs("/**/"+parent, true, true)
		if err != nil {
			panic("fsrules: bad built-in " + b.Name) // a programming error, caught by tests
		}
		key := asciifold.Lower(parent[strings.LastIndexByte(parent, '/')+1:])
		out[key] = append(out[key], nested{parent: p, child: child, b: b})
	}
	return out
}

// nestedAbsent lists the protected children missing under dir (named name),
// a directory of a writable root.
func (w *walker) nestedAbsent(dir, name string) {
	ns := w.parents[asciifold.Lower(name)]
	if len(ns) > 0 && w.ownRoot(dir) {
		return // a directory of jail's own: no host program reads it (Input.Own)
	}
	for _, n := range ns {
		if !n.parent.Match(dir, true) {
			continue
		}
		if _, ok := w.masks[dir]; ok {
			continue // masked itself: nothing can be created inside
		}
		p := join(dir, n.child)
		if !w.missing(p) || w.liftedBuiltin(n.b, p) {
			continue
		}
		w.nested = append(w.nested, Absent{Path: p, Dir: strings.HasSuffix(n.b.Name, "/"), Kind: n.b.Kind, Rule: "default: " + n.b.Name})
	}
}

// linkedFirst reports whether the first component of name in home h is a
// symlink. The home is listed once (getdents gives each entry's type):
// an lstat of every built-in's first component, most of them absent,
// cost ~220 system calls a start where a home has no link at all
// (session 18).
func (w *walker) linkedFirst(h, name string) bool {
	first, _, _ := strings.Cut(name, "/")
	links, ok := w.linkedMemo[h]
	if !ok {
		links = map[string]bool{}
		ents, _ := os.ReadDir(h) // unreadable: the host's tools cannot reach a link in it either
		for _, e := range ents {
			if e.Type()&fs.ModeSymlink != 0 {
				links[e.Name()] = true
			}
		}
		if w.linkedMemo == nil {
			w.linkedMemo = map[string]map[string]bool{}
		}
		w.linkedMemo[h] = links
	}
	return links[first]
}

// ownRoot reports whether p lies in a writable root of jail's own
// (Input.Own) -- the innermost writable root holding it, so that a path in
// ~/.claude beside a cache at ~/.claude/projects is not one.
func (w *walker) ownRoot(p string) bool {
	return len(w.own) > 0 && w.own[enclosingRoot(p, w.writable)]
}

// missing reports whether nothing exists at p (a file in the way of a parent
// counts as missing: the agent can replace it).
func (w *walker) missing(p string) bool {
	_, err := w.lstat(p)
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// statCache: Expand remembers each lstat for the one plan it builds (the
// loops over every built-in name in every writable root and home lstat the
// same prefixes again and again). Off only in the test that compares the
// plans with and without it.
var statCache = true

// lstatResult is one remembered lstat.
type lstatResult struct {
	fi  fs.FileInfo
	err error
}

// lstat is os.Lstat, remembered for this plan only (w.stats lives in memory
// for one Expand call: nothing is kept between runs, nothing on disk). Below
// a parent that is known missing, or known to be neither a directory nor a
// symlink, nothing exists: the kernel's answer (ENOENT, ENOTDIR) is given
// without asking it. A symlink parent is never shortcut (the child is looked
// up where it points).
func (w *walker) lstat(p string) (fs.FileInfo, error) {
	if w.stats == nil {
		return os.Lstat(p)
	}
	if r, ok := w.stats[p]; ok {
		return r.fi, r.err
	}
	if d := path.Dir(p); d != p && path.IsAbs(p) && path.Clean(p) == p {
		if r, ok := w.stats[d]; ok {
			var errno error
			switch {
			case r.err != nil && errors.Is(r.err, fs.ErrNotExist):
				errno = syscall.ENOENT
			case r.err == nil && !r.fi.IsDir() && r.fi.Mode()&fs.ModeSymlink == 0:
				errno = syscall.ENOTDIR
			}
			if errno != nil {
				err := &fs.PathError{Op: "lstat", Path: p, Err: errno}
				w.stats[p] = lstatResult{err: err}
				return nil, err
			}
		}
	}
	fi, err := os.Lstat(p)
	w.stats[p] = lstatResult{fi: fi, err: err}
	return fi, err
}

// homeDirs returns the home directories whose startup files matter for the
// writable roots: the user's own, and any home (/root, /home/NAME) that a
// writable root lies in or contains.
func (w *walker) homeDirs(in Input) []string {
	out := userHomes(in)
	addHome := func(h string) {
		if !contains(out, h) {
			out = append(out, h)
		}
	}
	for _, r := range w.writable {
		switch {
		case under("/root", r):
			addHome("/root")
		case under(r, "/root"):
			addHome("/root")
		}
		if under("/home", r) {
			ents, _ := os.ReadDir("/home")
			for _, e := range ents {
				if e.IsDir() {
					addHome("/home/" + e.Name())
				}
			}
		} else if under(r, "/home") {
			addHome("/home/" + splitPath(r)[1])
		}
	}
	return out
}

// gitGated: .gitmodules matters where base holds a git directory (in a
// directory that is no checkout it is nothing to watch; "git init" later is
// package gitguard's, as are the names inside a git dir).
func (w *walker) gitGated(base string, b Builtin) bool {
	if !b.Git {
		return false
	}
	st, err := w.lstat(base + "/.git")
	return err != nil || !st.IsDir()
}

// ownDir reports whether p is name (".claude/plugins/") in one of the user's
// own homes.
func ownDir(p string, homes []string, name string) bool {
	for _, h := range homes {
		if p == join(h, strings.TrimSuffix(name, "/")) {
			return true
		}
	}
	return false
}

// projectSecret: a secret-named file (a Hide built-in naming a file) outside
// every home. Missing at start, it is not watched: one the agent creates in a
// project (cp .env.example .env) is its own work, exposes no secret and is
// loaded by nothing but the project's own code; in a home (~/.npmrc,
// ~/.netrc) it is configuration the user's tools load, and watched. Not a
// name that the user's shell runs by itself (runOnCd).
func projectSecret(a Absent, homes []string) bool {
	return a.Kind == Hide && !a.Dir && !runOnCd(a.Path) && enclosingRoot(a.Path, homes) == ""
}

// runOnCd reports whether p is a file that the user's shell runs when it
// enters p's directory, not the project's own code: direnv's .envrc. A new
// one in the workspace is blocked until `direnv allow` only where the
// user's direnv.toml does not allow the directory already (its
// [whitelist] prefix and exact lists run every .envrc below them without
// asking), and an allow is one keystroke the user gives to a file they
// did not write: the agent's .envrc would be shell code run outside jail.
func runOnCd(p string) bool {
	return asciifold.Lower(path.Base(p)) == ".envrc"
}

// envrcName is the built-in that watches a new .envrc at each git top.
const envrcName = ".envrc"

// absent lists the protected paths that do not exist at start but could be
// created by the agent: each literal built-in name at the top of every
// writable root and of every home directory inside one, each home-anchored
// name (~/.config/git/) of every home wherever it falls in a writable root
// (also through symlinks: ~/.config -> dotfiles/config), and the children
// missing under parents found deeper in the tree (sub/.docker/ without
// config.json). Nothing can be mounted over them (jail creates nothing on the
// host): the supervisor watches them and moves into the run's quarantine any
// the agent creates. Not listed: the names inside a git dir (package
// gitguard's), a secret-named file outside every home (projectSecret), and
// an agent's own directory in its own home that it makes at its first start
// (agentMade: named in a note).
func (w *walker) absent(in Input) ([]string, []Absent) {
	homes := w.homeDirs(in)
	own := userHomes(in)
	var out []Absent
	var made []string
	seen := map[string]bool{}
	consider := func(p string, b Builtin) {
		q, gone := p, w.surelyMissing(p)
		if !gone {
			q = w.resolvePath(p)
		}
		// gone: surelyMissing saw nothing at p and no symlink on the way,
		// which is what missing would lstat again.
		if q == "" || seen[q] || enclosingRoot(q, w.writable) == "" || w.ownRoot(q) || !(gone || w.missing(q)) || w.maskedAt(q) {
			return
		}
		if w.liftedBuiltin(b, q) {
			return // the user lifted it there (lift.go)
		}
		seen[q] = true
		rule := "default: " + b.Name
		if q != p {
			rule += " (via symlink " + p + ")"
		}
		a := Absent{Path: q, Dir: strings.HasSuffix(b.Name, "/"), Kind: b.Kind, Rule: rule}
		if projectSecret(a, homes) {
			return
		}
		if why, ok := agentMade[b.Name]; ok && ownDir(q, own, b.Name) {
			// The agent's own directory in its own home: it makes it at
			// its first start (see agentMade), so it may appear.
			r := enclosingRoot(q, w.writable)
			rel := strings.TrimPrefix(strings.TrimPrefix(q, r), "/")
			if rel == "" {
				rel = "."
			}
			made = append(made, fmt.Sprintf("%s: %s/ does not exist: %s, so it may appear (read-only from the next run on)", r, rel, why))
			return
		}
		out = append(out, a)
	}
	// The writable roots that are directories (a file given with --write:
	// nothing can be created under it), stat'ed once for all the names.
	var dirRoots []string
	for _, r := range w.writable {
		if w.own[r] {
			continue // jail's own (Input.Own): what appears there reaches no host program
		}
		if st, err := os.Stat(r); err == nil && st.IsDir() {
			dirRoots = append(dirRoots, r)
		}
	}
	for _, b := range Builtins {
		if b.Git && in.AllowGitConfig || strings.ContainsAny(b.Name, `*?[\`) {
			continue
		}
		if strings.HasPrefix(b.Name, ".git/") {
			// Names inside a git dir: package gitguard knows which exist in
			// each repository and watches the absent ones (and git init).
			continue
		}
		name := strings.TrimSuffix(b.Name, "/")
		if rest, ok := strings.CutPrefix(name, "~/"); ok {
			for _, h := range homes {
				consider(h+"/"+rest, b)
			}
			continue
		}
		for _, r := range dirRoots {
			if w.gitGated(r, b) {
				continue
			}
			p := join(r, name)
			if first, rest, ok := strings.Cut(name, "/"); ok && path.Base(r) == first {
				// The root is the name's own directory (-w ~/.claude for
				// .claude/plugins/): the protected path is inside it.
				p = join(r, rest)
			}
			consider(p, b)
		}
		for _, h := range homes {
			if enclosingRoot(h, w.writable) != "" && !w.gitGated(h, b) {
				consider(join(h, name), b)
			} else if w.linkedFirst(h, name) {
				// Why: a home not writable whose entry is a symlink into a
				// writable tree (~/.claude -> dotfiles/claude, the run in
				// dotfiles): the host's tools reach the name through the
				// link, where it has no .claude in its path for the roots'
				// names to match; consider resolves it (review18b: the
				// agent's ~/.claude/commands/ and agents/ stayed).
				consider(join(h, name), b)
			}
		}
	}
	// Why: a .envrc runs in the directory direnv finds it in and every
	// one below, and a repository's top is where people put one (and cd
	// to): the top of each repository found inside a writable root (a
	// nested checkout, a submodule) is watched for a new one as the
	// roots' tops are. Deeper directories are not (see README).
	if i := slices.IndexFunc(Builtins, func(b Builtin) bool { return b.Name == envrcName }); i >= 0 {
		for _, f := range w.found {
			if path.Base(f) == ".git" {
				consider(path.Join(path.Dir(f), envrcName), Builtins[i])
			}
		}
	}
	for _, a := range w.nested {
		if !seen[a.Path] && !projectSecret(a, homes) {
			seen[a.Path] = true
			out = append(out, a)
		}
	}
	// Notes, one or two per writable root.
	notes := made
	for _, r := range w.writable {
		var ro, hide []string
		for _, a := range out {
			if enclosingRoot(a.Path, w.writable) != r {
				continue
			}
			rel := strings.TrimPrefix(strings.TrimPrefix(a.Path, r), "/")
			if a.Dir {
				rel += "/"
			}
			if a.Kind == ReadOnly {
				ro = append(ro, rel)
			} else {
				hide = append(hide, rel)
			}
		}
		sort.Strings(ro)
		sort.Strings(hide)
		if len(ro) > 0 {
			notes = append(notes, fmt.Sprintf("%s: %s do not exist, so nothing is mounted over them: if the agent creates one, the supervisor moves it out of the tree into the quarantine (watched while the sandbox runs, checked again at exit)", r, strings.Join(ro, " ")))
		}
		if len(hide) > 0 {
			notes = append(notes, fmt.Sprintf("%s: %s do not exist, so nothing is masked: if the agent creates one, the supervisor moves it out of the tree into the quarantine (no secret is exposed; watched while the sandbox runs, checked again at exit)", r, strings.Join(hide, " ")))
		}
	}
	return notes, out
}

// globs lists the directories of the home-anchored read-only built-ins
// whose last element is a pattern (~/.codex/*.sqlite*) in every home, where
// they lie in a writable root (through symlinks too). Why: the pattern's
// mounts cover the names there at start; a name the agent makes in the run
// (queue_2.sqlite, a -wal or -journal its database had none of) stayed on
// the host, and the host's next Codex opened it (a queue's rows are sent as
// the user's input, a -wal is replayed into its database: codexglob).
// Patterns elsewhere (*.code-workspace, the secret names) are not: a new
// secret-named file exposes nothing, and a workspace file is the
// project's (and its whole tree would need watching).
func (w *walker) globs(in Input) []Glob {
	var out []Glob
	seen := map[Glob]bool{}
	for _, b := range Builtins {
		rest, ok := strings.CutPrefix(b.Name, "~/")
		i := strings.LastIndexByte(rest, '/')
		if !ok || b.Kind != ReadOnly || i < 0 || strings.ContainsAny(rest[:i], `*?[\`) || !strings.ContainsAny(rest[i+1:], `*?[\`) {
			continue
		}
		for _, h := range w.homeDirs(in) {
			d := w.resolvePath(join(h, rest[:i]))
			if d == "" || enclosingRoot(d, w.writable) == "" || w.ownRoot(d) || w.maskedAt(join(d, "x")) || w.liftedBuiltin(b, join(d, "x")) {
				continue
			}
			g := Glob{Dir: d, Pattern: asciifold.Lower(rest[i+1:]), Rule: "default: " + b.Name}
			if !seen[g] {
				seen[g] = true
				out = append(out, g)
			}
		}
	}
	return out
}

// maskedAt reports whether p lies inside a masked directory (the agent cannot
// create anything there).
func (w *walker) maskedAt(p string) bool {
	for d := path.Dir(p); ; d = path.Dir(d) {
		if m, ok := w.masks[d]; ok && m.Dir {
			return true
		}
		if d == "/" {
			return false
		}
	}
}

// homeLinks protects the targets of a home's dotfiles that are symlinks into a
// visible tree (a dotfiles repository, GNU stow): ~/.bashrc ->
// ~/dotfiles/bashrc makes bashrc read-only when ~/dotfiles is the workspace,
// ~/.config -> ~/dotfiles/config protects config/git/. The names in the
// repository match no rule by themselves.
func (w *walker) homeLinks(in Input) {
	for _, n := range w.homeNames(in) {
		b, p := &Builtins[n.i], n.p
		q := w.resolvePath(p)
		if q == "" || q == p || enclosingRoot(q, w.roots) == "" {
			continue
		}
		fi, err := w.lstat(q)
		if err != nil || (strings.HasSuffix(b.Name, "/") && !fi.IsDir()) {
			continue // missing: absent() lists it
		}
		w.hits["default: "+b.Name]++
		w.protect(q, fi.IsDir(), b.Kind, "default: "+b.Name+" (via symlink "+p+")")
	}
}

// homeName is a built-in (Builtins[i]) at its path p in one of the
// user's homes.
type homeName struct {
	p string
	i int
}

// homeNames returns the built-ins at their paths in each of the user's
// homes (homes in order, then Builtins' order) for the two loops over
// them (homeLinks, homeFileLinks), built once for the plan: those
// surelyMissing rules out are left out. Where the home is the only base
// (w.lists.bases) at or below it, every path in it has the home as its
// base in surelyMissing, whose first look is then the home's own listing:
// a name whose first element is not in it is left out from that listing
// without its path being built (most built-ins, most homes).
func (w *walker) homeNames(in Input) []homeName {
	if w.homeNamesDone {
		return w.homeNamesList
	}
	w.homeNamesDone = true
	var out []homeName
	for _, h := range userHomes(in) {
		var top map[string]bool // the home's listing; nil: no shortcut here
		if !noShortcut && w.onlyBase(h) {
			top = w.listing(h, true, "")
		}
		for i := range Builtins {
			b := &Builtins[i]
			if b.Git && in.AllowGitConfig || strings.ContainsAny(b.Name, `*?[\`) {
				continue
			}
			rel := strings.TrimSuffix(strings.TrimPrefix(b.Name, "~/"), "/")
			if top != nil {
				if first, _, _ := strings.Cut(rel, "/"); !top[first] {
					continue // surelyMissing's answer for h/rel, from the same listing
				}
			}
			p := h + "/" + rel
			if w.surelyMissing(p) {
				continue
			}
			out = append(out, homeName{p: p, i: i})
		}
	}
	w.homeNamesList = out
	return out
}

// onlyBase reports whether h is a base of w.lists and no other base lies
// below it.
func (w *walker) onlyBase(h string) bool {
	found := false
	for _, d := range w.lists.bases {
		switch {
		case d == h:
			found = true
		case under(d, h):
			return false
		}
	}
	return found
}

// homeFileLinks notes the protected files of each home directory that have
// other hard links, even where the home is not visible (the sandbox shows an
// empty tmpfs there): an earlier run that had the home writable and the
// protections lifted could have linked ~/.bashrc to proj/notes.txt, which a
// later run with proj as workspace would write. Files inside protected
// directories (~/.ssh/, ~/.local/bin/, a browser profile) count, all of
// them however many there are: a check that stopped after a budget would
// let a link to the file past it through, silently (it once did, after
// 10,000 entries per home). A directory in there that cannot be listed or
// searched is named in a note: its files' links cannot be found.
//
// Its full cost is a getdents(2) per directory and an fstatat(2) per
// regular file (walkLinks): a file's link count is in its inode only.
// A start skips it when the record of an earlier one shows it would find
// nothing (checkHomeTrees; the argument is in homelinks.go): then its cost
// is an lstat(2) per protected directory and a look at the visible
// directories changed since.
func (w *walker) homeFileLinks(in Input) {
	var trees []homeTree
	for _, n := range w.homeNames(in) {
		b, p := &Builtins[n.i], n.p
		fi, err := w.lstat(p)
		if err != nil {
			continue
		}
		rule := "default: " + b.Name
		if !fi.IsDir() {
			w.noteLinks(p, b.Kind, rule)
			continue
		}
		trees = append(trees, homeTree{root: p, kind: b.Kind, rule: rule})
	}
	w.checkHomeTrees(in, trees)
}

// surelyMissing reports, from cached listings, that nothing exists at p
// and no symlink is on the way: its first element below its top directory
// (a home or a root, resolved) is not there, or, below a directory on the
// way that is a directory itself (lstat: no symlink) and asked about
// for other names before, the next element is not there (~/.config/gh/hosts.yml with no
// gh in ~/.config). The loops over every built-in in every home would
// otherwise lstat each name (some 30 under each ~/.config).
func (w *walker) surelyMissing(p string) bool {
	if noShortcut {
		return false
	}
	base := ""
	for _, d := range w.lists.bases {
		if under(p, d) && p != d && len(d) > len(base) {
			base = d
		}
	}
	if base == "" {
		return false
	}
	dir, rest := base, strings.TrimPrefix(p[len(base):], "/")
	for {
		first, more, deeper := strings.Cut(rest, "/")
		names := w.listing(dir, dir == base, first)
		if names == nil {
			return false
		}
		if !names[first] {
			return true
		}
		if !deeper {
			return false // p is there
		}
		dir, rest = join(dir, first), more
	}
}

// listing returns the names in dir, listed once for the plan, or nil when
// it gives no shortcut: dir is no directory of its own (a symlink, a file,
// missing, unreadable), or, below a top directory, asked about fewer than
// listAfter names (name is this look's): an lstat answers one name, and
// the loops ask about each name up to three times (homeLinks,
// homeFileLinks, absent), answered from the plan's stats after the first.
func (w *walker) listing(dir string, top bool, name string) map[string]bool {
	if names, ok := w.lists.names[dir]; ok {
		return names
	}
	if !top {
		// Below a top directory the lstat is the plan's own (w.lstat: the
		// same answer resolvePath gets); a symlink is never listed through.
		if fi, err := w.lstat(dir); err != nil || !fi.IsDir() {
			w.lists.names[dir] = nil
			return nil
		}
		asked := w.lists.asked[dir]
		if asked == nil {
			asked = map[string]bool{}
			w.lists.asked[dir] = asked
		}
		if asked[name] = true; len(asked) < listAfter {
			return nil
		}
	}
	// O_NOFOLLOW|O_DIRECTORY: a symlink, a file or nothing at dir gives
	// no listing, so no shortcut (what an lstat would have said).
	names, ok := w.names(dir)
	if !ok {
		names = nil
	}
	w.lists.names[dir] = names
	return names
}

// namesView is the directory cache's view of the listings surelyMissing
// takes: every name of each directory, whatever the rules; the view's
// name adds the credentials (creds), as the walk's does: a listing kept
// is one these credentials could read.
const namesView = "fsrules-names-1"

// noFollowReader is a DirReader that reads a directory only when it is
// one of its own, never through a symlink (package dircache).
type noFollowReader interface {
	ReadDirNoFollow(view, dir string, keep func(name string, t fs.FileMode) bool) ([]fs.DirEntry, int, uint64, error)
}

// names lists dir whole (never through a symlink at dir), from the
// directory cache when it holds dir unchanged since an earlier start: a
// name added, removed or renamed changes dir's ctime, which the record's
// key holds (package dircache's argument, the same as the walk's), so an
// unchanged key means the same names, and an lstat(2) replaces the open,
// getdents and close of each home directory surelyMissing lists.
func (w *walker) names(dir string) (map[string]bool, bool) {
	c, ok := w.dirs.(noFollowReader)
	if !ok {
		return dirnames.Names(dir, 0)
	}
	if w.lists.view == "" {
		w.lists.view = namesView + " " + creds()
	}
	ents, _, _, err := c.ReadDirNoFollow(w.lists.view, dir, keepAll)
	if err != nil {
		return nil, false
	}
	out := make(map[string]bool, len(ents))
	for _, e := range ents {
		out[e.Name()] = true
	}
	return out, true
}

// keepAll keeps every entry (a listing's, for namesView).
func keepAll(string, fs.FileMode) bool { return true }

// listAfter is how many names below a directory (not a top one) are
// asked about before it is listed: a listing is four system calls (open,
// getdents twice, close) and a map of its names, an lstat one.
const listAfter = 3

// noShortcut turns surelyMissing off (a test compares the plans).
var noShortcut bool

// listings caches the names in a few directories (see surelyMissing).
type listings struct {
	view  string // the directory cache's view of the listings (namesView), once made
	bases []string
	names map[string]map[string]bool // nil: no shortcut for this directory
	asked map[string]map[string]bool // directories below a base: the names asked about
}

// resolvePath follows the symlinks along p as far as the path exists and
// returns where p is (or would be created): "/h/.config/git" with /h/.config
// -> /ws/config gives /ws/config/git, existing or not. A dangling symlink is
// followed too (creating the path creates its target). "" when the chain is
// too long or unreadable.
func (w *walker) resolvePath(p string) string {
	parts := splitPath(p)
	cur := "/"
	hops := 0
	for i := 0; i < len(parts); i++ {
		switch parts[i] {
		case ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := join(cur, parts[i])
		fi, err := w.lstat(next)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				return ""
			}
			return path.Join(append([]string{next}, parts[i+1:]...)...)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return ""
		}
		l, err := os.Readlink(next)
		if err != nil {
			return ""
		}
		if !path.IsAbs(l) {
			l = path.Join(cur, l)
		}
		parts = append(splitPath(path.Clean(l)), parts[i+1:]...)
		cur, i = "/", -1
	}
	return cur
}
