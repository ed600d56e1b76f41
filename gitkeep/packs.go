package gitkeep

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// The start's packs, kept (lane gitkeep4). The packs of the start are
// read-only inside, but the host's next git gc deletes them: after a run
// that left a pack whose idx lies (one the end could not read through in
// its budget: only said), that gc keeps the forgery and deletes what the
// true object led to. So each start hard-links the repository's packs
// into the store's objects/pack: whatever the host's gc does, the store
// still holds the start's pack, and git reads the store's own packs
// before its alternates (the workspace), so
//
//	git fetch STORE '+refs/*:refs/jail-kept/*'
//
// (into a fresh repository when the workspace's objects are forged) gets
// the start's history back. A link, not a copy: it costs nothing while
// the workspace has the pack (a pack is the whole history; a copy would
// double it), and the read-only bind keeps the agent from writing it in
// place or giving it another name (a link across mounts is refused).

// MaxKeptPackBytes bounds the bytes of a store's kept packs that the
// workspace no longer has (a link the workspace shares costs nothing).
// Past it, the end's prune removes those gone longest first (said).
const MaxKeptPackBytes = 4 << 30

// uncheckedFile, in a store, names the packs ("pack-X" a line) a run's
// end could not read through (MarkUnchecked): a later start does not
// keep them, for the store's own packs come first when the history is
// fetched back, and one of them may lie.
const uncheckedFile = "packs-unchecked"

// maxUnchecked bounds the unchecked record read (past it: read as
// "every pack unchecked", keeping none new).
const maxUnchecked = 1 << 20

// KeepPacks hard-links each pack of gitDir (its .idx and .pack, at most
// maxPacks pairs: the ones the start binds read-only) into store's
// objects/pack, unless the store holds that name already (never replaced:
// a pack the host's gc deleted may come back under its name, the agent's)
// or an end named it unchecked. A pack with another name in the
// workspace (a link count above one) is not kept: the agent may hold the
// other name in a writable tree and write the pack through it. It returns
// the pairs newly kept; crossFS when the store is on another file system
// (no link can be made: nothing kept).
//
// Only while no other run uses the store (Alone, called before the
// start's Lock: a pack another live run's agent made is not checked yet)
// and only packs whose files' change time is before since (the clock
// before Alone, less a scheduler tick; a second more for a file system
// stamping whole milliseconds: changedAt, as the end's ChangedPacks): a
// pack made since may be a run's that started after the look. Why not a
// second for every file system: the user's pack made in the second
// before the start (`git pull && jail`) was not kept, and after an
// unread lying pack of the agent's and the host's gc the store gave no
// history back (packtiming).
func KeepPacks(store, gitDir string, maxPacks int, since time.Time) (kept int, crossFS bool, err error) {
	dir := filepath.Join(gitDir, "objects", "pack")
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return 0, false, nil // none, or not git's: the scan protects none
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, false, fmt.Errorf("gitkeep: %w", err)
	}
	var names []string
	for _, e := range ents {
		if b, ok := strings.CutSuffix(e.Name(), ".idx"); ok && strings.HasPrefix(b, "pack-") && e.Type().IsRegular() {
			names = append(names, b)
		}
	}
	if len(names) > maxPacks {
		return 0, false, nil // not read-only in this run (gitguard's cap)
	}
	dst := filepath.Join(store, "objects", "pack")
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return 0, false, fmt.Errorf("gitkeep: %w", err)
	}
	unchecked, _, all := readUnchecked(store)
	if all {
		return 0, false, nil
	}
	for _, n := range names {
		if unchecked[n] {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dst, n+".idx")); err == nil {
			continue // kept already (or a name the store keeps: never replaced)
		}
		ok := true
		for _, ext := range []string{".pack", ".idx"} {
			fi, err := os.Lstat(filepath.Join(dir, n+ext))
			if err != nil {
				ok = false
				break
			}
			nl, ct, ok2 := linkInfo(fi)
			if !fi.Mode().IsRegular() || !ok2 || nl != 1 || changedAt(ct, since) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		// A .pack without its .idx (a start stopped between the two) is
		// read by no git: made again from the workspace's.
		os.Remove(filepath.Join(dst, n+".pack"))
		// The .pack first: git takes a pack by its .idx, and one without
		// its .pack is an error to it.
		for _, ext := range []string{".pack", ".idx"} {
			err := os.Link(filepath.Join(dir, n+ext), filepath.Join(dst, n+ext))
			if errors.Is(err, syscall.EXDEV) {
				os.Remove(filepath.Join(dst, n+".pack"))
				return kept, true, nil
			}
			if err != nil && !errors.Is(err, os.ErrExist) {
				os.Remove(filepath.Join(dst, n+".pack"))
				return kept, false, fmt.Errorf("gitkeep: %w", err)
			}
		}
		kept++
	}
	return kept, false, nil
}

// KeptStamps is the start's look, after KeepPacks, at gitDir's pack files
// that are store's kept packs (the same inode under the same name: a
// start's link, this one's or an earlier one's), keyed by file name, for
// the end's ChangedPacks. Why: the link sets the pack's change time, so
// the end took a clone's pack kept at its first run for one the run made
// (review18e): it said it unchecked when it could not read it through (an
// object past the reader's bounds, a pack past the budget), recorded it
// in packs-unchecked (a later end then dropped it from the store) and
// took the user's multi-pack-index out as naming a rewritten pack. A
// store that records unchecked packs gets none: its kept packs are read
// at the end (DropKept: the host's gc of an unread lying pack copies the
// forgery). Only the store's link shares the inode with the workspace's
// file, and a start links only a pack older than its look while no run
// was live, so no agent made it.
func KeptStamps(store, gitDir string) map[string]os.FileInfo {
	if had, _, all := readUnchecked(store); all || len(had) > 0 {
		return nil
	}
	dir, err := filepath.EvalSymlinks(filepath.Join(gitDir, "objects", "pack"))
	if err != nil {
		return nil
	}
	ents, err := os.ReadDir(filepath.Join(store, "objects", "pack"))
	if err != nil {
		return nil
	}
	out := map[string]os.FileInfo{}
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, "pack-") || !(strings.HasSuffix(n, ".idx") || strings.HasSuffix(n, ".pack")) {
			continue
		}
		w, err1 := os.Lstat(filepath.Join(dir, n))
		k, err2 := os.Lstat(filepath.Join(store, "objects", "pack", n))
		if err1 == nil && err2 == nil && w.Mode().IsRegular() && os.SameFile(w, k) {
			out[n] = w
		}
	}
	return out
}

// PacksKept reports whether every pack of gitDir (pack-X.idx and its
// .pack) is store's kept pack of that name (the same file: KeepPacks'
// link, this start's or an earlier one's), but those an end recorded
// unread (never kept: the agent's). Called after KeepPacks. Why: the
// end's note on a pack it could not read through says the start's packs
// are kept, to fetch the history back after the host's gc; a pack the
// start did not keep (another run used the repository then, a pack
// changed just before the start, one of two names) is not, and after
// that gc the fetch has no root commit (packtiming).
func PacksKept(store, gitDir string) bool {
	dir := filepath.Join(gitDir, "objects", "pack")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	unchecked, _, all := readUnchecked(store)
	for _, e := range ents {
		b, ok := strings.CutSuffix(e.Name(), ".idx")
		if !ok || !strings.HasPrefix(b, "pack-") || unchecked[b] {
			continue
		}
		if all {
			return false // past its bound: nothing new kept
		}
		for _, ext := range []string{".idx", ".pack"} {
			w, err1 := os.Lstat(filepath.Join(dir, b+ext))
			k, err2 := os.Lstat(filepath.Join(store, "objects", "pack", b+ext))
			if err1 != nil || err2 != nil || !os.SameFile(w, k) {
				return false
			}
		}
	}
	return true
}

// Alone reports whether no run holds store's lock (none uses the store):
// an exclusive lock taken without waiting and let go. Called before the
// start's own Lock. A store not made yet is alone.
func Alone(store string) bool {
	f, err := os.OpenFile(filepath.Join(store, lockFile), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return true
}

// MarkUnchecked records in store that the packs named (base paths or
// names, pack-X) were made in a run and not read through at its end:
// no later start keeps them (KeepPacks).
func MarkUnchecked(store string, packs []string) error {
	if len(packs) == 0 {
		return nil
	}
	if store == "" {
		// Why: a relative name is the caller's working directory (the
		// supervisor's is the workspace): never a store (review17c).
		return errors.New("gitkeep: no store to record unchecked packs in")
	}
	have, old, all := readUnchecked(store)
	if all {
		// Past its bound the record already says every pack is
		// unchecked (KeepPacks keeps none new): written again with only
		// these names (the old bytes unread past the bound), it would say
		// the earlier ones were checked.
		return nil
	}
	var b bytes.Buffer
	b.Write(old)
	if len(old) > 0 && old[len(old)-1] != '\n' {
		b.WriteByte('\n')
	}
	for _, p := range packs {
		n := filepath.Base(p)
		if !have[n] {
			have[n] = true
			b.WriteString(n + "\n")
		}
	}
	return writeIfChanged(filepath.Join(store, uncheckedFile), b.Bytes())
}

// MarkUncheckedUnkept is MarkUnchecked for git dir gitDir, which has no
// store yet (past the bound of repositories kept at one start): store's
// directory is made with the record and the alternates alone (Sweep
// judges it by its repository, as every store). Why: a start that keeps
// the repository later (the agent's planted repositories gone) hard-linked
// the pack an end could not read as the start's own, and the store's
// newest pack comes first when the history is fetched back from it: after
// the host's gc, the fetch took the forgery (gitkeep5).
func MarkUncheckedUnkept(store, gitDir string, packs []string) error {
	if len(packs) == 0 {
		return nil
	}
	if store == "" {
		return errors.New("gitkeep: no store to record unchecked packs in")
	}
	if err := os.MkdirAll(filepath.Join(store, "objects", "info"), 0o700); err != nil {
		return fmt.Errorf("gitkeep: %w", err)
	}
	alt := filepath.Join(store, "objects", "info", "alternates")
	if _, err := os.Lstat(alt); errors.Is(err, os.ErrNotExist) {
		if err := writeIfChanged(alt, altLine(gitDir)); err != nil {
			return err
		}
	}
	return MarkUnchecked(store, packs)
}

// DropKept removes from store's kept packs those the run's end found
// lying (lies) and, while the store has unchecked packs on record from an
// earlier end, those it could not read through (unread): base paths of
// the workspace's packs, .../pack-X. Only a store link that is the
// workspace's file (the same inode: kept by a start, KeepPacks) goes: a
// store pack of the same name is never the agent's. Why: the store's own
// packs come first when the history is fetched back, the newest first,
// and a pack the host made (its gc) after an unread pack of the agent's
// copies that pack's forgery as it is: kept at the next start, it hid the
// store's true pack and the fetch lost the root commit (review18a).
// Called before MarkUnchecked records this end's unread packs. It returns
// the names dropped.
func DropKept(store string, lies, unread []string) ([]string, error) {
	if store == "" {
		return nil, errors.New("gitkeep: no store to drop kept packs from")
	}
	drop := append([]string(nil), lies...)
	if had, _, all := readUnchecked(store); all || len(had) > 0 {
		drop = append(drop, unread...)
	}
	var out []string
	dir := filepath.Join(store, "objects", "pack")
	for _, base := range drop {
		n := filepath.Base(base)
		same := false
		for _, ext := range []string{".idx", ".pack"} {
			w, err1 := os.Lstat(base + ext)
			k, err2 := os.Lstat(filepath.Join(dir, n+ext))
			if err1 == nil && err2 == nil && os.SameFile(w, k) {
				same = true
			}
		}
		if !same {
			continue
		}
		// The .idx first: git reads a pack by it.
		for _, ext := range []string{".idx", ".pack"} {
			if err := os.Remove(filepath.Join(dir, n+ext)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return out, fmt.Errorf("gitkeep: %w", err)
			}
		}
		out = append(out, n)
	}
	return out, nil
}

// readUnchecked reads the unchecked record: its names and its bytes (one
// read: MarkUnchecked appends to them); all when it is past its bound.
func readUnchecked(store string) (map[string]bool, []byte, bool) {
	m := map[string]bool{}
	p := filepath.Join(store, uncheckedFile)
	fi, err := os.Lstat(p)
	if err != nil {
		return m, nil, false
	}
	if fi.Size() > maxUnchecked {
		return m, nil, true
	}
	b, err := readFile(p, maxUnchecked)
	if err != nil {
		return m, nil, true
	}
	s := bufio.NewScanner(bytes.NewReader(b))
	for s.Scan() {
		if t := strings.TrimSpace(s.Text()); t != "" {
			m[t] = true
		}
	}
	return m, b, false
}

// prunePacks removes the store's kept packs the workspace no longer has
// (the store's link is the only one) for Age, then, past
// limit (MaxKeptPackBytes), those gone longest first. The store's link's ctime
// says since when it is the only one (its link count changed then; it
// cannot be set back). It returns the packs removed by age and by bytes.
func prunePacks(store string, now time.Time, limit int64) (aged, over int, err error) {
	dir := filepath.Join(store, "objects", "pack")
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, 0, nil
		}
		return 0, 0, fmt.Errorf("gitkeep: %w", err)
	}
	type gone struct {
		name  string
		since int64
		size  int64
	}
	var gs []gone
	var total int64
	for _, e := range ents {
		b, ok := strings.CutSuffix(e.Name(), ".idx")
		if !ok {
			continue
		}
		var g gone
		alone := true
		for _, ext := range []string{".idx", ".pack"} {
			fi, err := os.Lstat(filepath.Join(dir, b+ext))
			if err != nil {
				continue
			}
			n, ct, ok := linkInfo(fi)
			if !ok || n != 1 {
				alone = false
				break
			}
			g.since = max(g.since, ct)
			g.size += fi.Size()
		}
		if !alone {
			continue
		}
		g.name = b
		gs = append(gs, g)
		total += g.size
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i].since < gs[j].since })
	for _, g := range gs {
		switch {
		case now.Sub(time.Unix(0, g.since)) > Age:
			aged++
		case total > limit:
			over++
		default:
			continue
		}
		// The .idx first: git reads a pack by it.
		for _, ext := range []string{".idx", ".pack"} {
			if err := os.Remove(filepath.Join(dir, g.name+ext)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return aged, over, fmt.Errorf("gitkeep: %w", err)
			}
		}
		total -= g.size
	}
	return aged, over, nil
}

// maxShared bounds the shared-links record read (past it: read as
// empty; those links stay links, as before it).
const maxShared = 1 << 20

// readShared reads the store's shared-links record (sharedFile).
func readShared(store string) map[string]bool {
	m := map[string]bool{}
	b, err := readFile(filepath.Join(store, sharedFile), maxShared)
	if err != nil {
		return m
	}
	for _, l := range strings.Split(string(b), "\n") {
		if (len(l) == 40 || len(l) == 64) && isHex(l) {
			m[l] = true
		}
	}
	return m
}

// writeShared writes the record (none when empty).
func writeShared(store string, m map[string]bool) error {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	return writeLines(filepath.Join(store, sharedFile), ids)
}

// copyShared turns the store's shared links (sharedFile: links whose
// workspace name is gone, kept by another name) into copies, within the
// start's copy budget; the rest stay for a later start. A link that no
// longer reads as its object (written in place already) goes: it restores
// nothing. One past MaxCopyObject stays a link (as a larger object is
// kept).
func copyShared(store string, budget *Budget, c *counts, res *Result) error {
	m := readShared(store)
	if len(m) == 0 {
		return nil
	}
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if budget.Objects <= 0 || budget.Bytes <= 0 || (budget.copies >= minCopies && time.Now().After(budget.Until)) {
			res.Full = true
			break
		}
		dst := filepath.Join(store, "objects", id[:2], id[2:])
		fi, err := os.Lstat(dst)
		if nl, _, ok := linkInfo(fi); err != nil || !ok || nl == 1 || !fi.Mode().IsRegular() || fi.Size() > MaxCopyObject {
			delete(m, id) // gone, a copy already, or too large to copy
			continue
		}
		b, err := readFile(dst, MaxCopyObject)
		if err != nil {
			continue // read again at a later start
		}
		want, _ := hex.DecodeString(id)
		n, err := checkLoose(b, want)
		if errors.Is(err, errTooLarge) {
			// Its file small, its object past MaxCopyObject (a large
			// file of zeros): a link, as keepOne keeps one. Taken for
			// one written in place, it went, and the store held nothing
			// of the user's object.
			delete(m, id)
			continue
		}
		if err != nil {
			if os.Remove(dst) == nil {
				c.dropLink(id)
			}
			delete(m, id)
			res.Junk++
			continue
		}
		budget.Bytes -= n
		budget.copies++
		budget.Objects--
		if err := writeCopy(dst, b); err != nil {
			return err
		}
		delete(m, id)
		res.Copied++
	}
	return writeShared(store, m)
}
