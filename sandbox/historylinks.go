package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"

	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/gitguard"
	"github.com/jail-sandbox/jail/gitkeep"
)

// historyLinks returns the other names, in the writable trees, of the
// pack files gitguard makes read-only (history: each pack and idx, and
// every file of a pack directory read-only whole), read-only the same
// way. A read-only bind covers a name, not the file: a pack new during a
// run (the host's gc ran meanwhile: the one pack holding the history
// since the gc deleted the old ones; or the agent's own gc) that the
// agent hard-linked elsewhere was rewritten through the other name in any
// later run, its packed commits lost (review16a). The cost: an
// lstat per pack file at each start; the walk of the writable trees only
// when one has more than one link (a `git clone --local` hard-links its
// source's packs), and then, from the second start on, a read only of the
// directories changed since (fsrules.OtherNamesKept).
// Past maxHistoryLinks other names (each is a mount: an agent's loop of
// links would slow every later start), the rest are said, not protected.
// keptBase is the state directory's git-kept dir ("" for none): a pack's
// second link that is its store's kept pack (gitkeep.KeepPacks) is no
// name the sandbox reaches (the state directory is hidden), so it alone
// walks no tree.
// mounts is the host's mount table the plan read, parsed from mountinfo
// (nil: unknown): with them the walk stats only the
// files whose directory entries name a pack's inode, and, with dirs the
// directory cache, reads only the directories changed since the last
// start's walk (fsrules.OtherNamesKept).
func historyLinks(history []gitguard.Protect, writable []string, keptBase string, mountinfo []byte, mounts []fsrules.Mount, dirs fsrules.DirReader) ([]gitguard.Protect, []string) {
	files := map[[2]uint64]string{}
	var st syscall.Stat_t // one, no FileInfo a file: up to 512 at a start
	note := func(p string) {
		if syscall.Lstat(p, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Nlink < 2 {
			return
		}
		if st.Nlink == 2 && keptBase != "" {
			var ks syscall.Stat_t
			gitDir := filepath.Dir(filepath.Dir(filepath.Dir(p)))
			k := filepath.Join(gitkeep.Store(keptBase, gitDir), "objects", "pack", filepath.Base(p))
			if syscall.Lstat(k, &ks) == nil && ks.Dev == st.Dev && ks.Ino == st.Ino {
				return
			}
		}
		files[[2]uint64{uint64(st.Dev), uint64(st.Ino)}] = p //nolint:unconvert // Dev is int32 on darwin
	}
	for _, h := range history {
		if !h.Dir {
			note(h.Path)
			continue
		}
		ents, _ := os.ReadDir(h.Path)
		for _, e := range ents {
			if e.Type().IsRegular() {
				note(filepath.Join(h.Path, e.Name()))
			}
		}
	}
	if len(files) == 0 {
		return nil, nil
	}
	var names []string
	for p := range fsrules.OtherNamesKept(writable, files, mountinfo, mounts, dirs) {
		names = append(names, p)
	}
	sort.Strings(names)
	var notes []string
	if len(names) > maxHistoryLinks {
		notes = append(notes, fmt.Sprintf("git: %d other names (hard links) of git packs are in the writable trees; only %d are read-only, the packs can be rewritten through the others: %s", len(names), maxHistoryLinks, shortList(names[maxHistoryLinks:], 2)))
		names = names[:maxHistoryLinks]
	}
	out := make([]gitguard.Protect, 0, len(names))
	for _, p := range names {
		// The pack's own reason: watched and counted as a pack is.
		out = append(out, gitguard.Protect{Path: p, Why: gitguard.HistoryWhy})
	}
	return out, notes
}

// maxHistoryLinks bounds the packs' other names made read-only a start.
const maxHistoryLinks = 64
