package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/jail-sandbox/jail/gitkeep"
	"github.com/jail-sandbox/jail/sentinel"
)

// packBudget bounds the end's reading of the packs a run made (madePacks):
// most runs make none (nothing read); a fetch makes a small one; a gc
// inside makes one of the whole history, read as far as the budget goes.
const packBudget = 2 * time.Second

// packTick is how far before the start's clock a change time still counts
// as the run's: the file system stamps with its coarse clock (a tick of a
// few ms), behind the start's fine one.
const packTick = time.Second

// stampTick is how far the coarse clock a file system stamps with lags
// the start's fine one: a scheduler tick (10 ms at HZ=100), with room.
// gitkeep.ChangedPacks adds packTick's second itself where the file
// system's stamps are coarse (whole milliseconds or more): with a second
// everywhere, a host repack made in the second before the start was the
// run's (lefthook19).
const stampTick = 50 * time.Millisecond

// madePacks is the end's look at the pack directories of the writable
// trees' repositories (kept or not: keepGitHistory's checked; the agent
// has ended): each pack whose files changed during
// the run is read whole (gitkeep.VerifyPack), smallest first, until the
// budget. A pack whose idx files an object under an id its bytes do not
// hash to, or that git reads another way than it writes (an entry that
// does not inflate, a link), leaves the tree: git looks in the newest pack
// first and believes its idx, so the host's next gc would keep the forgery
// under the true id and delete what the true object led to (packlie).
// Git's own packs always read true: nothing it writes is taken. A changed
// multi-pack-index leaves too: git reads objects through it first and it
// is not read here (git works without it). So does a changed file git
// reads beside a pack or that index (a bitmap, a reverse index that is not
// the one its idx makes, a cruft pack's .mtimes: gitkeep.Sides). What the
// budget leaves unread is said with the fsck that checks it.
func madePacks(kept []keptRepo, now time.Time) (items []sentinel.Item, notes []string) {
	deadline := now.Add(packBudget)
	var unlooked []string // git dirs whose loose objects the budget left
	for _, k := range kept {
		// The store's config when kept (jail's own); else the git dir's,
		// which gitguard keeps read-only inside (read bounded, plain
		// files only). Never "" (a repository past the kept bound has no
		// store): a relative name is the supervisor's working directory,
		// the workspace (review17c).
		width := 0 // read when a changed pack or .rev needs it
		widthOf := func() int {
			if width == 0 {
				src := k.store
				if src == "" {
					src = k.dir
				}
				width = gitkeep.Width(src)
			}
			return width
		}
		c, err := gitkeep.ChangedPacks(k.dir, k.started.Add(-stampTick), k.packDir, k.linked)
		if err != nil {
			notes = append(notes, fmt.Sprintf("git: the packs this run made in %s were not checked (%v): run git --git-dir=%s fsck before a git gc on the host", k.dir, err, k.dir))
			continue
		}
		if c.Index != "" {
			items = append(items, sentinel.Item{Path: c.Index, Rule: "git: pack",
				Reason: "a multi-pack-index changed in this run, or naming a pack rewritten in it: git reads objects through it before the packs' own idx, and jail does not check one (git works without it; git multi-pack-index write makes it again)"})
		}
		// Why: git believes these as they are and checks none against
		// the pack (gitkeep.Sides): a lying bitmap outlives the host's
		// repacks and breaks its pushes, a lying .rev its gcs. Each is a
		// cache git works without and makes again; a .rev is kept when it
		// is the one git makes from its idx (git 2.41 and later write one
		// beside every pack).
		for _, p := range c.Side {
			if strings.HasSuffix(p, ".rev") && strings.HasPrefix(filepath.Base(p), "pack-") && gitkeep.RevTrue(p, strings.TrimSuffix(p, ".rev"), widthOf()) {
				continue
			}
			items = append(items, sentinel.Item{Path: p, Rule: "git: pack",
				Reason: "a file git reads beside a pack (a bitmap, a reverse index, a cruft pack's ages) changed in this run: git believes it unchecked (a lying bitmap breaks the host's pushes and outlives its repacks, a lying reverse index its gcs), and jail does not check one; git works without it and makes it again"})
		}
		var unread, unreadBases, lies []string
		for _, base := range c.Packs {
			v := gitkeep.VerifyPack(base, widthOf(), deadline)
			switch {
			case v.Lie != "":
				// Why: the idx is what git believes; without it the pack
				// is not read at all. The .pack goes with it.
				why := fmt.Sprintf("a pack made in this run lies: %s; the host's next git gc would keep the forgery under that id and delete the history behind the true object", v.Lie)
				for _, ext := range []string{".idx", ".pack"} {
					items = append(items, sentinel.Item{Path: base + ext, Rule: "git: pack", Reason: why})
				}
				lies = append(lies, base)
			case v.Unverified != "":
				unread = append(unread, fmt.Sprintf("%s (%s)", filepath.Base(base), v.Unverified))
				unreadBases = append(unreadBases, base)
			}
		}
		// Why: a later start must not keep an unread pack in the store
		// (gitkeep.KeepPacks): the store's own packs come first when the
		// history is fetched back from it, and this one may lie. A
		// repository past the kept bound has no store (k.store ""):
		// nothing to record (MarkUnchecked refuses ""; it wrote
		// "packs-unchecked" in the workspace, through the agent's link,
		// review17c).
		// Why: git reads every pack before a loose object: the host's
		// gc of the agent's forgery in a loose commit's file hid the
		// store's true copy (review18a). And git never writes an object
		// it has: a forgery planted under the id of a blob the user
		// writes later became the user's commit (review18e). The forgery
		// leaves the tree; a kept copy is the fetch's. Every repository,
		// a store or not (k.store "": none read).
		// packTick's second, not ChangedPacks' stampTick: here a wider
		// window only reads more (a true object is never named: its
		// bytes hash to its id), where ChangedPacks' took a host repack
		// for the run's and called it unchecked (lefthook19). KeepPacks
		// (sandbox/gitkept.go) takes ChangedPacks' 50 ms too: a wider
		// window left the user's pack of the last second unkept, and
		// the host's gc after the run then lost it (packtiming).
		forged, left, err := gitkeep.ForgedLoose(k.store, k.dir, k.started.Add(-packTick), deadline, k.start, k.listing.get(k.store))
		for _, p := range forged {
			// Why per object: one past the start's budget, or new in the
			// run, has no copy in the store; saying one is kept sent the
			// user to a fetch that does not give it back (review19a).
			copyAt := " (jail kept no copy of it: the start did not have it, had more objects than it keeps, or kept a large one as a link, which a write in place changes too)"
			if gitkeep.HasCopy(k.store, p) {
				copyAt = fmt.Sprintf(" (a true copy the start had is kept: git fetch %s '+refs/*:refs/jail-kept/*')", k.store)
			}
			items = append(items, sentinel.Item{Path: p, Rule: "git: loose object",
				Reason: "a loose object written in this run is not the object of its name" + copyAt + "; git reads the forgery as that object, never writes one it has (a later git add of that content commits the forgery), and the host's next git gc packs it, where git finds it before any copy"})
		}
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("git: the loose objects of %s written in this run were not all checked (%v): run git --git-dir=%s fsck before a git gc on the host", k.dir, err, k.dir))
		case left > 0:
			// One line for them all: past the budget every later
			// repository has some (thousands planted: not a line each).
			unlooked = append(unlooked, k.dir)
		}
		if k.store != "" {
			// Why: a pack this start kept in the store (made on the host
			// before the run: its link set its change time, so it is
			// read here) may be the host's gc of an earlier run's unread
			// lying pack, its forgery copied as it is; the store's newest
			// pack comes first when the history is fetched back
			// (review18a). Before MarkUnchecked: the record of earlier
			// ends decides for an unread one.
			if dropped, err := gitkeep.DropKept(k.store, lies, unreadBases); err != nil {
				notes = append(notes, fmt.Sprintf("git: the packs of %s that lie or were not checked were not all removed from its store: %v", k.dir, err))
			} else if len(dropped) > 0 {
				notes = append(notes, fmt.Sprintf("git: kept packs of %s that lie, or that were not checked while its store records an earlier unchecked pack, were removed from its store (%s): a fetch from it gets the packs kept before", k.dir, shortList(dropped, 2)))
			}
			if err := gitkeep.MarkUnchecked(k.store, unreadBases); err != nil {
				notes = append(notes, fmt.Sprintf("git: the unchecked packs of %s were not recorded in its store: %v", k.dir, err))
			}
		}
		if k.store == "" && k.unkept != "" {
			// Why: a later start that keeps this repository (past the
			// bound now: 64 planted ones in front of it) must not link
			// a pack this end could not read into its store as the
			// start's own (gitkeep5).
			if err := gitkeep.MarkUncheckedUnkept(k.unkept, k.dir, unreadBases); err != nil {
				notes = append(notes, fmt.Sprintf("git: the unchecked packs of %s were not recorded outside the sandbox: %v", k.dir, err))
			}
		}
		if len(unread) > 0 {
			what := fmt.Sprintf("%d packs this run made in %s were", len(unread), c.Dir)
			if len(unread) == 1 {
				what = "a pack this run made in " + c.Dir + " was"
			}
			// A repository past the kept bound has no store: no fetch
			// to name (it named "git fetch  '+refs/*...'", gitkeep5).
			kept := "its start's packs are not kept: this run kept no store of it"
			switch {
			case k.store != "" && k.packsKept:
				kept = fmt.Sprintf("the start's packs are kept: after such a gc, git init a new repository and git fetch %s '+refs/*:refs/jail-kept/*' there", k.store)
			case k.store != "":
				// Why: a pack the start did not keep (another run used
				// the repository, one changed just before the start, one
				// of two names) is not in the store: the fetch after
				// such a gc lost the root commit (packtiming).
				kept = fmt.Sprintf("not all of the start's packs are kept outside the sandbox (another run used the repository at the start, a pack changed just before it, or one has another name): after such a gc, history may be lost for good; what is kept comes back with git fetch %s '+refs/*:refs/jail-kept/*' into a new repository", k.store)
			}
			notes = append(notes, fmt.Sprintf("git: %s not checked: %s; before a git gc on the host, run git --git-dir=%s fsck (a pack whose idx lies makes gc delete history; %s)",
				what, strings.Join(unread, ", "), k.dir, kept))
		}
	}
	if len(unlooked) > 0 {
		notes = append(notes, fmt.Sprintf("git: the loose objects written in this run in %d repositories were not all checked in the end's budget (%s): run git --git-dir=DIR fsck in each before a git gc on the host", len(unlooked), shortList(unlooked, 3)))
	}
	return items, notes
}
