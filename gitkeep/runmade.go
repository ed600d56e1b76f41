package gitkeep

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// MaxRunBytes bounds the bytes a store keeps of the objects made inside
// jail's runs (a change time in a run's window: RunWindows), apart from
// MaxStoreBytes, which bounds those made outside every run (the user's):
// a run's agent can fill the first, never the second. Past it, a start
// keeps no new object made in a run (said); the user's still are. A store
// takes at most MaxStoreBytes + MaxRunBytes of disk.
const MaxRunBytes = 512 << 20

// maxRunObjects bounds the run-made objects one store records (runFile:
// under 8 MiB); past it none more is kept, as past MaxRunBytes.
const maxRunObjects = 100000

// runFile, in a store, lists the objects it keeps that were made in a run:
// "id size" a line. Their bytes are this record's, not bytesFile's.
const runFile = "kept-by-runs"

// countsLock, in a store, is locked (exclusive) while a save merges its
// changes into bytesFile and runFile (counts.save).
const countsLock = "kept-counts.lock"

// counts is what a store's objects take: the user's (bytesFile) and the
// runs' (runFile), loaded once a Keep or a Prune.
type counts struct {
	used    int64            // bytes of the objects made outside every run
	run     map[string]int64 // objects made in a run: id, bytes
	runUsed int64
	dirty   bool
	recount bool // the user's bytes to be counted again (dropLink)
	// The records as loaded: a save writes its changes since then, not
	// its view (save).
	used0 int64
	run0  map[string]int64
}

func loadCounts(store string) *counts {
	c := &counts{used: readBytes(store), run: map[string]int64{}}
	b, _ := os.ReadFile(filepath.Join(store, runFile))
	for _, l := range strings.Split(string(b), "\n") {
		id, n, ok := strings.Cut(l, " ")
		v, err := strconv.ParseInt(n, 10, 64)
		if !ok || err != nil || v < 0 || (len(id) != 40 && len(id) != 64) || !isHex(id) {
			continue
		}
		c.run[id] = v
		c.runUsed += v
	}
	c.used0, c.run0 = c.used, maps.Clone(c.run)
	return c
}

// add charges delta bytes of object id to its class (run: made in a run).
func (c *counts) add(id string, run bool, delta int64) {
	if delta == 0 {
		return
	}
	if !run {
		c.used += delta
		c.dirty = true
		return
	}
	n := c.run[id] + delta
	c.runUsed += delta
	if n <= 0 {
		c.runUsed -= n
		delete(c.run, id)
	} else {
		c.run[id] = n
	}
	c.dirty = true
}

// forget takes object id, removed from the store (size bytes), from its
// class.
func (c *counts) forget(id string, size int64) {
	if n, ok := c.run[id]; ok {
		c.add(id, true, -n)
		return
	}
	c.add(id, false, -size)
}

// dropLink takes a link the store removed (its object written in place
// in the workspace: junk now) from the counts. A run's goes by its
// recorded bytes. The user's bytes are not taken by its size now, which
// is the workspace's inode, the agent's to grow or shrink: the store is
// counted again whole at this run's end instead (bytesFile held it until
// the daily count: lane keepbudget).
func (c *counts) dropLink(id string) {
	if n, ok := c.run[id]; ok {
		c.add(id, true, -n)
		return
	}
	c.recount, c.dirty = true, true
}

// runFull says whether no object made in a run can be kept.
func (c *counts) runFull() bool {
	return c.runUsed >= MaxRunBytes || len(c.run) >= maxRunObjects
}

// save writes both records when they changed: its changes since its load
// merged, under countsLock, into the records as they are now. Why: two
// starts keep one store at once (the store's lock is shared then); a save
// of its own view whole lost the other's (review20b): its run-made objects
// went from runFile, and a whole prune's recount then charged them to the
// user's bytes (an agent's garbage spending what keeps the user's).
func (c *counts) save(store string) error {
	if !c.dirty {
		return nil
	}
	lk, err := os.OpenFile(filepath.Join(store, countsLock), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("gitkeep: %w", err)
	}
	defer lk.Close()
	if err := unix.Flock(int(lk.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("gitkeep: lock %s: %w", lk.Name(), err)
	}
	now := loadCounts(store)
	now.used += c.used - c.used0
	for id, n := range c.run0 {
		if _, ok := c.run[id]; !ok {
			now.add(id, true, -n)
		}
	}
	for id, n := range c.run {
		if d := n - c.run0[id]; d != 0 {
			if _, ok := now.run[id]; !ok && d < 0 {
				continue // gone already (the other's forget)
			}
			now.add(id, true, d)
		}
	}
	c.used, c.run, c.runUsed = now.used, now.run, now.runUsed
	c.used0, c.run0 = c.used, maps.Clone(c.run)
	if err := writeBytes(store, c.used); err != nil {
		return err
	}
	if c.recount {
		// The next prune looks at the whole store (fullFile gone).
		if err := os.Remove(filepath.Join(store, fullFile)); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("gitkeep: %w", err)
		}
	}
	ids := make([]string, 0, len(c.run))
	for id := range c.run {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out bytes.Buffer
	for _, id := range ids {
		fmt.Fprintf(&out, "%s %d\n", id, c.run[id])
	}
	if out.Len() == 0 {
		return writeLines(filepath.Join(store, runFile), nil)
	}
	return writeIfChanged(filepath.Join(store, runFile), out.Bytes())
}
