package sandbox

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jail-sandbox/jail/gitguard"
	"github.com/jail-sandbox/jail/gitkeep"
	"github.com/jail-sandbox/jail/statedir"
)

// keepGitHistory brings the store of every repository the plan found in
// its writable trees (repos: gitguard.Plan.Repos) up to date (package gitkeep: loose objects
// hard-linked, refs recorded) before anything of the sandbox runs, so that
// what this run's agent deletes from them is in the store, which no
// sandbox reaches. Linked worktrees' git dirs hold no objects: their
// repository's own git dir is kept. Nothing with --allow-git-config (the
// user trusts the command with git: the plan has no git guard; the caller
// does not call) or without a state directory (stateDir ""). It returns the notices to say (a store on another file
// system: no object kept; a start that had more objects to link than one
// start links) and the repositories kept, for lostGitHistory at the end.
// A degraded run (no mounts: no pack read-only) marks each store: its
// copies go by age only from then on (gitkeep.Unprotected); so does a run
// that leaves a repository's packs writable past the budget of pack
// mounts (packsLeft: gitguard.Plan.PacksLeft, resolved pack directories).
// checked is every repository's git dir (kept or not: past the bound, a
// store that failed), each with the start's time, for madePacks.
func keepGitHistory(stateDir string, roots, repos []string, degraded bool, packsLeft []string) (notes []string, kept, checked []keptRepo, run *gitkeep.Run) {
	if stateDir == "" {
		return nil, nil, nil, nil
	}
	base := filepath.Join(stateDir, statedir.GitKept)
	budget := gitkeep.NewBudget()
	// Before the sandbox: a pack file changed from now on is the run's
	// (madePacks).
	started := time.Now()
	// This run's window, then every run's: what a run's agent made is
	// kept against the runs' bytes, never the user's (lane keepbudget).
	// Unread, every new object is taken for a run's: fail closed.
	run, err := gitkeep.BeginRun(base, started)
	if err == nil {
		budget.Runs, err = gitkeep.RunWindows(base, started)
	}
	if err != nil {
		notes = append(notes, fmt.Sprintf("git: the windows of jail's runs are not recorded (%v): every new loose object is kept as one made in a run (at most %d MiB a repository)", err, gitkeep.MaxRunBytes>>20))
		budget.Runs = gitkeep.Windows{{From: 0, To: math.MaxInt64}}
	}
	left := make(map[string]bool, len(packsLeft))
	for _, p := range packsLeft {
		left[p] = true
	}
	repos = keptOrder(roots, repos)
	// The end's pack check reads every repository's new packs, not only
	// the kept ones (review17a): repositories an earlier run left, sorting
	// first, pushed a deeper repository of the user's (a nested checkout,
	// a submodule's git dir) out of the kept set, and its lying pack was
	// never read: the host's next git gc lost its root commit. A store is
	// not needed to read a pack.
	isKept := make(map[string]bool, min(len(repos), maxKeptRepos))
	all := repos
	if len(repos) > maxKeptRepos {
		// The agent can leave thousands of repositories in a writable
		// tree (git init in a loop): 2,000 made each later start 1.3 s
		// slower and its end 0.5 s, with a store each. The shallowest
		// are kept: the workspace's own and the -w roots' first.
		notes = append(notes, fmt.Sprintf("git: only %d repositories' loose objects and refs are kept outside the sandbox at one start (the shallowest); %d others are not: %s", maxKeptRepos, len(repos)-maxKeptRepos, shortList(repos[maxKeptRepos:], 2)))
		repos = repos[:maxKeptRepos]
	}
	for _, d := range repos {
		if _, err := os.Lstat(filepath.Join(d, "commondir")); err == nil {
			continue
		}
		st := gitkeep.Store(base, d)
		// Before the lock: a pack another live run's agent made is not
		// checked yet (gitkeep.KeepPacks keeps none then). The clock
		// before the look, less a scheduler tick (gitkeep.KeepPacks adds
		// a coarse file system's second): a run that starts after the
		// look writes no pack stamped earlier. Why not a second
		// everywhere: the user's pack made in the second before the start
		// (`git pull && jail`, `git gc && jail`) was not kept, and after
		// the agent's unread lying pack and the host's gc the store gave
		// no history back (packtiming).
		lookedAt := time.Now().Add(-stampTick)
		alone := gitkeep.Alone(st)
		// Held shared to the run's end: no other run's end prunes the
		// store while this run's agent is alive (gitkeep.Prune).
		lock, err := gitkeep.Lock(st)
		var res gitkeep.Result
		var linked map[string]os.FileInfo
		packsKept := false
		if err == nil {
			res, err = gitkeep.Keep(st, d, &budget)
		}
		if err == nil && (degraded || packsCut(d, left)) {
			// No pack is read-only in this run: the end's prune (this
			// run's and every later one's) must not count on one. Cut
			// from the budget too (review16b): planted repositories
			// that push a repository's packs past it let this run's
			// agent delete the pack the prune freed the copies for.
			err = gitkeep.Unprotected(st)
		} else if err == nil && alone {
			// The start's packs, read-only in this run, hard-linked into
			// the store: a host gc after a lying pack the end could not
			// read through deletes them from the workspace only.
			var crossFS bool
			if _, crossFS, err = gitkeep.KeepPacks(st, d, gitguard.MaxHistoryPacks, lookedAt); crossFS {
				notes = append(notes, fmt.Sprintf("git: the packs of %s are not kept outside the sandbox: %s is on another file system (a host git gc after a pack of this run's that lies loses history)", d, base))
			}
			// Why: the link set the kept packs' change time; the end
			// must not take them for the run's (review18e).
			linked = gitkeep.KeptStamps(st, d)
			packsKept = gitkeep.PacksKept(st, d)
		}
		if err == nil {
			k := keptRepo{dir: d, store: st, refs: res.Start, mtimes: res.Mtimes, start: &res, lock: lock, started: started, packDir: gitkeep.PackDir(d), linked: linked, packsKept: packsKept, listing: &storeListing{}}
			kept = append(kept, k)
			checked = append(checked, k)
			isKept[d] = true
		} else if lock != nil {
			lock.Close()
		}
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("git: the loose objects and refs of %s are not kept outside the sandbox: %v", d, err))
		case res.PackedUnread:
			notes = append(notes, fmt.Sprintf("git: the packed refs of %s are not recorded outside the sandbox: its packed-refs is larger than %d MiB (its loose objects and loose refs are kept)", d, gitkeep.MaxPacked>>20))
		case res.Full:
			notes = append(notes, fmt.Sprintf("git: only %d loose objects are kept outside the sandbox at one start; the others of %s can be deleted in this run (git gc on the host packs them)", gitkeep.MaxLinks, d))
		}
		if err != nil {
			continue
		}
		if res.CrossFS {
			notes = append(notes, fmt.Sprintf("git: the loose objects of %s too large to copy are not kept outside the sandbox: %s is on another file system (the others are copied)", d, base))
		}
		if res.Linked > 0 {
			// A link is the workspace's inode: the agent can chmod it and
			// write it in place (copied at a later start).
			notes = append(notes, fmt.Sprintf("git: %d loose objects of %s are kept outside the sandbox as hard links, not copies (a start copies for at most %d ms or %d MiB, the rest at the next starts; an object over %d MiB stays a link): one the agent writes in place in this run is lost", res.Linked, d, gitkeep.MaxCopyTime.Milliseconds(), gitkeep.MaxCopyBytes>>20, gitkeep.MaxCopyObject>>20))
		}
		if res.RunFull {
			notes = append(notes, fmt.Sprintf("git: the store of %s holds %d MiB of objects made inside jail's runs: the new loose objects made in a run are not kept outside the sandbox (those made on the host are; git gc on the host packs them; the store then frees what a pack holds)", d, gitkeep.MaxRunBytes>>20))
		}
		if res.StoreFull {
			notes = append(notes, fmt.Sprintf("git: the store of %s holds %d MiB of kept objects made on the host: its new loose objects made there are not kept outside the sandbox (git gc on the host packs them; the store then frees what a pack holds)", d, gitkeep.MaxStoreBytes>>20))
		}
		if res.Junk > 0 {
			notes = append(notes, fmt.Sprintf("git: %d files of %s named like loose objects are not the objects of their names (corrupt, or not git's): not kept outside the sandbox", res.Junk, filepath.Join(d, "objects")))
		}
	}
	for _, d := range all {
		if isKept[d] {
			continue
		}
		// One stat here, off the start's path (beside the setup): the
		// pack directory the end's check trusts for its old files. A
		// linked worktree's git dir has no objects/pack (its
		// repository's is in the list), which the end finds at no cost.
		// unkept: its store's place, where the end records a pack it
		// could not read (a later start that keeps it must not take
		// that pack as the start's own: gitkeep.MarkUncheckedUnkept).
		checked = append(checked, keptRepo{dir: d, started: started, packDir: gitkeep.PackDir(d), unkept: gitkeep.Store(base, d)})
	}
	return notes, kept, checked, run
}

// packsCut says whether git dir d's pack directory is one the start left
// writable past the budget of pack mounts (left: resolved, as gitguard
// found them).
func packsCut(d string, left map[string]bool) bool {
	if len(left) == 0 {
		return false
	}
	p, err := filepath.EvalSymlinks(filepath.Join(d, "objects", "pack"))
	return err == nil && left[p]
}

// maxKeptRepos bounds the repositories whose store one start brings up to
// date (each costs a few file reads and writes at the start and a refs read
// at the end).
const maxKeptRepos = 64

// keptOrder sorts git dirs shallowest first in their writable root (then
// by name): the workspace's own repository and the -w roots' come before
// those deeper in the trees, where an agent's git init loop would put them.
func keptOrder(roots, repos []string) []string {
	out := append([]string(nil), repos...)
	depth := func(p string) int { return strings.Count(strings.TrimPrefix(p, enclosing(p, roots)), "/") }
	sort.SliceStable(out, func(i, j int) bool {
		di, dj := depth(out[i]), depth(out[j])
		if di != dj {
			return di < dj
		}
		return out[i] < out[j]
	})
	return out
}

// keptRepo is a repository whose store a start brought up to date.
type keptRepo struct {
	dir, store string
	refs       map[string]string // its refs at start
	mtimes     [256]int64        // its objects/xx mtimes at start
	lock       *os.File          // the store's lock, shared (gitkeep.Lock)
	started    time.Time         // before the sandbox started (madePacks)
	packDir    os.FileInfo       // its pack directory then (gitkeep.PackDir)
	unkept     string            // store "": where its store would be
	// start is what the start's Keep saw (gitkeep.ForgedLoose: its
	// fan-out directories' inodes, those kept in part); nil without a
	// store.
	start *gitkeep.Result
	// linked are its pack files that are the store's kept packs, as
	// the start left them (gitkeep.KeptStamps).
	linked map[string]os.FileInfo
	// packsKept: every pack of its start is in the store
	// (gitkeep.PacksKept), as the end's note on an unread pack says.
	packsKept bool
	// listing is its store's loose objects for the end's look at them
	// (madePacks), listed while the agent runs (preloadExitCheck); nil
	// without a store.
	listing *storeListing
}

// storeListing is a store's gitkeep.ListStore, taken once: while the
// agent runs (preloadExitCheck), or by the end's madePacks when the run
// ended first (it waits for one under way). Taken after the start's Keep,
// which holds the store's lock until the end: what ListStore says of
// such a listing.
type storeListing struct {
	once sync.Once
	l    *gitkeep.Listing
}

// get lists store once; nil for a nil listing (no store).
func (s *storeListing) get(store string) *gitkeep.Listing {
	if s == nil {
		return nil
	}
	s.once.Do(func() { s.l = gitkeep.ListStore(store) })
	return s.l
}

// settleStamps has each kept repository's stamps (the workspace
// files whose links the start's Keep changed: gitkeep.Stamps) read
// against its store's clock, just before the go: the later, the more
// likely a tick has passed since the last link, and a stamp counts at the
// end (no read of the file) only when its file system's clock has moved
// past it before the agent can write (Stamps.Settle). One change of the
// store's lock file's times and its stat, where a start changed links.
func settleStamps(kept []keptRepo) {
	for _, k := range kept {
		if k.start != nil && k.start.Stamps.Len() > 0 {
			k.start.Stamps.Settle(k.lock)
		}
	}
}

// lostGitHistory is the end's look at the kept repositories: a ref the
// start read that is gone, one moved off its start commit (a reset, a
// rebase, a forced update: the start commit is no ancestor of where it is
// now), or a git dir gone whole, is said in one line each (a notice, so in
// the trail too) with the command that fetches the start's refs and
// commits back from the store (a moved ref's start value under
// refs/jail-kept/jail/moved/). A ref moved forward (a commit inside) is
// not said. The walk that tells the two apart is bounded (moveBudget over
// every repository; a ref not walked by then is said).
func lostGitHistory(kept []keptRepo) []string {
	var out []string
	deadline := time.Now().Add(moveBudget)
	for _, k := range kept {
		c := gitkeep.Look(k.refs, k.dir, k.store, deadline)
		if len(c.Gone) == 0 && len(c.Moved) == 0 && !c.HeadGone {
			continue
		}
		var what []string
		switch {
		case c.HeadGone:
			what = append(what, "deleted the git dir")
		case len(c.Gone) == 1:
			what = append(what, "deleted the ref "+c.Gone[0])
		case len(c.Gone) > 1:
			what = append(what, fmt.Sprintf("deleted %d refs (%s)", len(c.Gone), shortList(c.Gone, 4)))
		}
		switch {
		case c.HeadGone:
		case len(c.Moved) == 1:
			what = append(what, "moved the ref "+c.Moved[0]+" off its start commit (not a fast-forward)")
		case len(c.Moved) > 1:
			what = append(what, fmt.Sprintf("moved %d refs off their start commits (not fast-forwards: %s)", len(c.Moved), shortList(c.Moved, 4)))
		}
		git := "git --git-dir=" + k.dir
		first := git + " init --bare && "
		if filepath.Base(k.dir) == ".git" {
			git = "git -C " + filepath.Dir(k.dir)
			first = git + " init && "
		}
		if !c.HeadGone {
			first = ""
		}
		out = append(out, fmt.Sprintf("git: this run %s of %s; the start's refs and commits are kept, to fetch back: %s%s fetch %s '+refs/*:refs/jail-kept/*'", strings.Join(what, " and "), k.dir, first, git, k.store))
	}
	return out
}

// moveBudget bounds the end's walks of commits telling a moved ref from a
// forced one (gitkeep.Look): a commit inside moves its branch one commit
// (one object read); a reset to an old commit walks at most a few
// thousand.
const moveBudget = 100 * time.Millisecond

func shortList(s []string, n int) string {
	if len(s) <= n {
		return strings.Join(s, ", ")
	}
	return strings.Join(s[:n], ", ") + fmt.Sprintf(", and %d more", len(s)-n)
}

// pruneBudget bounds the end's pruning of the stores (gitkeep.Prune,
// gitkeep.Sweep): after a host gc packed thousands of loose objects, each
// copy is verified in its pack before it goes; what the budget leaves is
// pruned at a later end.
const pruneBudget = 150 * time.Millisecond

// pruneGitKept is the end's pruning of the stores the start kept (the
// agent has ended: nothing of this run can make a pack after the look),
// then of the stores of repositories gone for gitkeep.Age; each store's
// lock released. Errors are said, never fatal: a store left as it was
// loses nothing.
func pruneGitKept(kept []keptRepo) []string {
	if len(kept) == 0 {
		return nil
	}
	now := time.Now()
	deadline := now.Add(pruneBudget)
	var notes []string
	skip := map[string]bool{}
	for _, k := range kept {
		skip[k.store] = true
		res, err := gitkeep.Prune(k.lock, k.store, k.dir, &k.mtimes, gitguard.MaxHistoryPacks, now, deadline)
		k.lock.Close()
		if err != nil {
			notes = append(notes, fmt.Sprintf("git: the store of %s was not pruned: %v", k.dir, err))
		}
		if res.PacksOver > 0 {
			notes = append(notes, fmt.Sprintf("git: %d kept packs of %s that the repository no longer has were removed from its store: its kept packs passed %d GiB", res.PacksOver, k.dir, gitkeep.MaxKeptPackBytes>>30))
		}
	}
	if _, err := gitkeep.Sweep(filepath.Dir(kept[0].store), skip, now, deadline); err != nil {
		notes = append(notes, fmt.Sprintf("git: the stores of removed repositories were not pruned: %v", err))
	}
	return notes
}

// keptSince is gitguard.Input.KeptSince for the stores of stateDir (nil
// without one: no store, nothing kept).
func keptSince(stateDir string) func(gitDir string) (int64, bool) {
	if stateDir == "" {
		return nil
	}
	base := filepath.Join(stateDir, statedir.GitKept)
	return func(gitDir string) (int64, bool) {
		return gitkeep.KeptSince(gitkeep.Store(base, gitDir), gitDir)
	}
}
