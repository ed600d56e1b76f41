package gitkeep

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The windows of jail's runs (session 20, lane keepbudget). A store's byte
// budget (MaxStoreBytes) was one for every object: one run's agent left 62
// loose blobs of 17 MiB, the next start linked them and counted 1 GiB, and
// every later start kept nothing new, so the user's later commit, deleted
// by a later run's agent, could not be given back: one run spent the
// budget of all the runs after it. So each run records its window (from
// before its sandbox to after its agent ended) under the stores' base, and
// a start takes a loose object whose change time falls in a run's window
// for that run's (the agent's, or the user's made while a run was alive):
// kept against its own budget (MaxRunBytes), never against the one of the
// objects made outside every run, the user's (MaxStoreBytes). A change
// time is the kernel's: no agent sets it (utimensat sets the others), and
// every write, link or rename of the file moves it to the time of that
// change.

// runsDir, under the stores' base, holds one file a run: "S.PID.open"
// while the run is alive (locked by it), "S-E" once it ended (unix ns).
const runsDir = "runs"

// maxRuns bounds the ended windows kept one by one: past it the oldest are
// merged into one window from the first's start to the last's end (more
// of the user's objects taken for a run's: never fewer of a run's).
const maxRuns = 256

// runSlack is taken from a run's start: a file system's change time comes
// from a coarse clock, a few ms behind the one the start read.
const runSlack = 20 * time.Millisecond

// Run is a run's window, open until End.
type Run struct {
	f      *os.File
	dir    string
	name   string
	start  int64
	closed bool
}

// BeginRun records, under base (the stores' directory), that a run starts
// now (start: before its sandbox). The file stays locked until End: a
// later start that can lock it knows the run died without its End, and
// ends its window then.
func BeginRun(base string, start time.Time) (*Run, error) {
	dir := filepath.Join(base, runsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("gitkeep: runs: %w", err)
	}
	s := start.Add(-runSlack).UnixNano()
	for i := 0; ; i++ {
		// Locked under a name no start reads, then renamed to its own: a
		// start never finds the window unlocked and ends it.
		tmp := filepath.Join(dir, fmt.Sprintf("tmp-%d-%d", os.Getpid(), i))
		name := fmt.Sprintf("%d.%d-%d.open", s, os.Getpid(), i)
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) && i < 100 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("gitkeep: runs: %w", err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			f.Close()
			os.Remove(tmp)
			return nil, fmt.Errorf("gitkeep: runs: lock %s: %w", tmp, err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			f.Close()
			os.Remove(tmp)
			return nil, fmt.Errorf("gitkeep: runs: %w", err)
		}
		return &Run{f: f, dir: dir, name: name, start: s}, nil
	}
}

// End records the run's end (now: after its agent ended).
func (r *Run) End(end time.Time) error {
	if r == nil || r.closed {
		return nil
	}
	r.closed = true
	defer r.f.Close()
	p := filepath.Join(r.dir, r.name)
	stampAfter(r.f, p, end.UnixNano())
	to := fmt.Sprintf("%d-%d", r.start, max(end.UnixNano(), r.start))
	if err := os.Rename(p, filepath.Join(r.dir, to)); err != nil {
		return fmt.Errorf("gitkeep: runs: %w", err)
	}
	return nil
}

// endStampWait bounds End's wait for a change time after the run's end:
// a tick of the coarse clock or two (4 ms at 250 Hz, 10 at 100 Hz).
const endStampWait = 25 * time.Millisecond

// stampAfter changes f's times (p is its path) until the file system
// stamps the change after e (unix ns), or endStampWait has passed.
//
// Why: a change time comes from the file system's coarse clock, up to a
// tick behind the fine one e was read from (more where ticks come late: a
// VM, an idle CPU), so a file the user makes as jail returns (a git add
// right after the run) was stamped before e and taken for the run's: with
// the runs' budget full, not kept (seen in CI, 2.2 and 3.7 ms before e).
// Once a change of f is stamped after e, every later change on the machine
// is stamped no earlier: the coarse clock never goes back, and with
// multigrain timestamps (Linux 6.13: ext4, xfs, btrfs, tmpfs) a
// fine-grained stamp raises the floor of every later coarse one. The
// kernel takes a fine-grained stamp for a change of a file whose change
// time was queried (the fstat) and is not behind the coarse clock, so on
// those kernels the second change is after e unless a tick came between
// the two (then the third); elsewhere End waits for the coarse clock to
// pass e, at most endStampWait (not at all on a file system of whole
// milliseconds or coarser), and past it a change in the tick after e may
// still count as the run's (never one of the run's as the user's).
func stampAfter(f *os.File, p string, e int64) {
	deadline := time.Now().Add(endStampWait)
	for i := 0; ; i++ {
		now := time.Now()
		if err := os.Chtimes(p, now, now); err != nil {
			return
		}
		fi, err := f.Stat()
		if err != nil {
			return
		}
		_, c, ok := linkInfo(fi)
		if !ok || c > e || time.Now().After(deadline) {
			return
		}
		if coarseFS(c) {
			return // its next stamp may be a second away
		}
		if i >= 2 {
			// Not a multigrain file system: the coarse clock's next tick.
			time.Sleep(time.Millisecond)
		}
	}
}

// Window is one run's, unix ns, both ends in.
type Window struct{ From, To int64 }

// Windows are the runs' windows a start reads (RunWindows).
type Windows []Window

// Has says whether t (unix ns) is in a run's window.
func (w Windows) Has(t int64) bool {
	for _, x := range w {
		if t >= x.From && t <= x.To {
			return true
		}
	}
	return false
}

// RunWindows reads the runs' windows under base at now. A live run's (its
// file locked) is open-ended; a dead run's that never said its end (a
// crash, a kill) ends now. Unreadable: none, and the error.
func RunWindows(base string, now time.Time) (Windows, error) {
	dir := filepath.Join(base, runsDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gitkeep: runs: %w", err)
	}
	var w, ended Windows
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, "tmp-") {
			// A BeginRun that died before its rename: its window never
			// opened (a live one renames within the minute).
			if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > time.Minute {
				os.Remove(filepath.Join(dir, n))
			}
			continue
		}
		if s, ok := strings.CutSuffix(n, ".open"); ok {
			from, _, _ := strings.Cut(s, ".")
			t, err := strconv.ParseInt(from, 10, 64)
			if err != nil {
				continue
			}
			if live(filepath.Join(dir, n)) {
				w = append(w, Window{t, math.MaxInt64})
				continue
			}
			to := max(now.UnixNano(), t)
			if os.Rename(filepath.Join(dir, n), filepath.Join(dir, fmt.Sprintf("%d-%d", t, to))) != nil {
				w = append(w, Window{t, math.MaxInt64}) // taken by another start
				continue
			}
			ended = append(ended, Window{t, to})
			continue
		}
		a, b, ok := strings.Cut(n, "-")
		from, err1 := strconv.ParseInt(a, 10, 64)
		to, err2 := strconv.ParseInt(b, 10, 64)
		if ok && err1 == nil && err2 == nil {
			ended = append(ended, Window{from, to})
		}
	}
	if len(ended) > maxRuns {
		ended = mergeRuns(dir, ended)
	}
	return append(w, ended...), nil
}

// live says whether the run of the open window file p is alive: its lock
// is held.
func live(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return true // renamed by its End meanwhile: read as alive, once
	}
	defer f.Close()
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		return false
	}
	return true
}

// mergeRuns merges the oldest ended windows into one, keeping maxRuns/2
// one by one, and returns them.
func mergeRuns(dir string, ended Windows) Windows {
	sort.Slice(ended, func(i, j int) bool { return ended[i].From < ended[j].From })
	old, keep := ended[:len(ended)-maxRuns/2], ended[len(ended)-maxRuns/2:]
	m := old[0]
	for _, x := range old {
		m.To = max(m.To, x.To)
	}
	// The merged one first, then the old ones go: a start reading between
	// sees both.
	if f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("%d-%d", m.From, m.To)), os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		f.Close()
		for _, x := range old {
			if x != m {
				os.Remove(filepath.Join(dir, fmt.Sprintf("%d-%d", x.From, x.To)))
			}
		}
	}
	return append(Windows{m}, keep...)
}
