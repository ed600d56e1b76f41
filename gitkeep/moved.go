package gitkeep

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A ref the run moved (not deleted) off its start commit -- git reset
// --hard HEAD~3, a rebase, a forced update -- leaves the start's commits
// reachable from no ref of the workspace: the host's next git gc drops
// them. The store has them (copied at the start, or in the read-only
// packs), and keeps the start value under refs/jail/moved/ so the
// recovery fetch names it. A ref moved forward (a commit, a merge, a
// fast-forward) is not said: its start commit is an ancestor of where it
// is now.

// maxWalk bounds the commits read to learn whether one moved ref's start
// commit is an ancestor of its new one; past it the ref counts as moved
// off (said: the safe side).
const maxWalk = 2000

// walkSlack is how much older than the start commit a commit's committer
// time may be and still be walked through (clock skew between machines):
// an older commit cannot descend from the start's.
const walkSlack = 24 * time.Hour

// maxCommit bounds a commit object read in the walk.
const maxCommit = 1 << 20

// Change is what the run's end finds changed in a repository's refs.
type Change struct {
	Gone     []string // refs of the start that are gone (sorted)
	Moved    []string // refs of the start now at a commit not descending from the start's (sorted)
	HeadGone bool     // the git dir's HEAD is gone (the git dir deleted)
}

// Look compares the refs a start read (Result.Start) with gitDir's now.
// Each moved ref's start value is recorded in store's packed-refs as
// refs/jail/moved/NAME (a later move of the same ref replaces it): the
// next start records the ref's new value, and the start's would be
// named by no ref of the store. Everything stops at deadline (the
// refs not walked by then count as moved).
func Look(start map[string]string, gitDir, store string, deadline time.Time) Change {
	var c Change
	now, _ := Refs(gitDir)
	w := &walker{gitDir: gitDir, store: store, deadline: deadline}
	defer func() { closePacks(w.packs) }()
	moved := map[string]string{}
	for r, id := range start {
		n, ok := now[r]
		switch {
		case !ok:
			c.Gone = append(c.Gone, r)
		case n != id && !w.descends(n, id):
			c.Moved = append(c.Moved, r)
			moved["refs/jail/moved/"+strings.TrimPrefix(r, "refs/")] = id
		}
	}
	sort.Strings(c.Gone)
	sort.Strings(c.Moved)
	if len(moved) > 0 {
		recordRefs(store, moved)
	}
	_, err := os.Lstat(filepath.Join(gitDir, "HEAD"))
	c.HeadGone = err != nil
	return c
}

// recordRefs adds refs to store's packed-refs (addPacked). An error
// leaves the file as it was: the end says the move anyway.
func recordRefs(store string, add map[string]string) {
	addPacked(store, add)
}

// walker reads the commits of a repository: its loose objects, the
// store's copies, then its packs (opened at the first object neither
// holds). Every object read is checked against its name: a commit the
// agent forged naming the start commit as its parent is not one.
type walker struct {
	gitDir, store string
	deadline      time.Time
	opened        bool
	packs         []*pack
	budget        int64
}

// descends reports whether commit start is an ancestor of (or is) commit
// tip: a walk of tip's parents, at most maxWalk commits, none older than
// start's committer time less walkSlack.
func (w *walker) descends(tip, start string) bool {
	if len(tip) != len(start) {
		return false
	}
	_, t0, ok := w.commit(start)
	if !ok {
		return false
	}
	floor := t0 - int64(walkSlack/time.Second)
	seen := map[string]bool{tip: true}
	queue := []string{tip}
	for n := 0; len(queue) > 0 && n < maxWalk; n++ {
		if time.Now().After(w.deadline) {
			return false
		}
		id := queue[0]
		queue = queue[1:]
		if id == start {
			return true
		}
		parents, t, ok := w.commit(id)
		if !ok || t < floor {
			continue
		}
		for _, p := range parents {
			if p == start {
				return true
			}
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return false
}

// commit reads commit id: its parents and committer time.
func (w *walker) commit(id string) (parents []string, t int64, ok bool) {
	typ, data, ok := w.object(id)
	if !ok || typ != "commit" {
		return nil, 0, false
	}
	for _, l := range strings.Split(string(data), "\n") {
		if l == "" {
			break // the message
		}
		if p, ok := strings.CutPrefix(l, "parent "); ok && isID(p) {
			parents = append(parents, p)
		} else if c, ok := strings.CutPrefix(l, "committer "); ok {
			f := strings.Fields(c[strings.LastIndexByte(c, '>')+1:])
			if len(f) > 0 {
				t, _ = strconv.ParseInt(f[0], 10, 64)
			}
		}
	}
	return parents, t, true
}

// object reads object id (hex) from the repository's loose objects, the
// store's, or its packs, checked against its name.
func (w *walker) object(hexID string) (string, []byte, bool) {
	id, err := hex.DecodeString(hexID)
	if err != nil || !isID(hexID) {
		return "", nil, false
	}
	for _, dir := range []string{w.gitDir, w.store} {
		b, err := readFile(filepath.Join(dir, "objects", hexID[:2], hexID[2:]), maxCommit)
		if err != nil {
			continue
		}
		if typ, data, err := inflateLoose(b, id); err == nil {
			return typ, data, true
		}
	}
	if !w.opened {
		w.opened = true
		w.budget = 64 << 20
		w.packs, _ = openPacks(w.gitDir, w.store, len(id), 256, &w.budget)
	}
	for _, p := range w.packs {
		if p.x.width != len(id) {
			continue
		}
		off, ok := p.x.find(id)
		if !ok {
			continue
		}
		typ, data, err := p.object(off, 0)
		if err == nil && sumOf(typ, data, len(id)) == string(id) {
			return typ, data, true
		}
	}
	return "", nil, false
}

// inflateLoose reads a loose object file whose id is want: its type and
// bytes, the hash checked.
func inflateLoose(b, want []byte) (string, []byte, error) {
	z, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		return "", nil, errLoose
	}
	defer z.Close()
	br := bufio.NewReader(io.LimitReader(z, maxCommit+maxHeader))
	typ, size, err := parseHeader(br)
	if err != nil || size > maxCommit {
		return "", nil, errLoose
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(br, data); err != nil {
		return "", nil, errLoose
	}
	if sumOf(typ, data, len(want)) != string(want) {
		return "", nil, errLoose
	}
	return typ, data, nil
}

func sumOf(typ string, data []byte, width int) string {
	var h hash.Hash = sha1.New()
	if width == sha256.Size {
		h = sha256.New()
	}
	h.Write([]byte(typ + " " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	return string(h.Sum(nil))
}
