package memwatch

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/procstat"
)

// Sample is one measurement.
type Sample struct {
	Bytes  uint64 // PSS of the processes plus the tmpfs contents
	Procs  int    // processes counted
	Tmpfs  uint64 // of Bytes, held by the tmpfs file systems
	Sample time.Time
}

// Tree measures the process tree rooted at Root (its descendants
// included) from ProcRoot ("" = /proc), and the tmpfs file systems at
// Tmpfs paths (statfs; missing ones count 0).
type Tree struct {
	ProcRoot string
	Root     int
	Tmpfs    []string
}

func (t Tree) proc() string {
	if t.ProcRoot == "" {
		return "/proc"
	}
	return t.ProcRoot
}

// Measure takes one sample.
func (t Tree) Measure() (Sample, error) {
	s := Sample{Sample: time.Now()}
	pids, err := Descendants(t.proc(), t.Root)
	if err != nil {
		return s, err
	}
	pids = append([]int{t.Root}, pids...)
	for _, p := range pids {
		n, ok := processBytes(filepath.Join(t.proc(), strconv.Itoa(p)))
		if ok {
			s.Bytes += n
			s.Procs++
		}
	}
	for _, m := range t.Tmpfs {
		var st unix.Statfs_t
		// Only a tmpfs counts: memory it holds. Anything else at that path
		// (the host's disk before the sandbox mounted its own) is not.
		if err := unix.Statfs(m, &st); err != nil || st.Type != unix.TMPFS_MAGIC {
			continue
		}
		used := (st.Blocks - st.Bfree) * uint64(st.Bsize)
		s.Tmpfs += used
		s.Bytes += used
	}
	return s, nil
}

// processBytes is a process's PSS (smaps_rollup, Linux 4.14), else its
// resident set (statm). ok is false when the process is gone.
func processBytes(dir string) (uint64, bool) {
	if b, err := os.ReadFile(filepath.Join(dir, "smaps_rollup")); err == nil {
		if v, ok := kbField(b, "Pss:"); ok {
			return v, true
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "statm"))
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * uint64(os.Getpagesize()), true
}

// kbField reads "Name:   1234 kB" from a /proc file, in bytes.
func kbField(b []byte, name string) (uint64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		f := strings.Fields(line[len(name):])
		if len(f) == 0 {
			return 0, false
		}
		v, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, false
		}
		return v * 1024, true
	}
	return 0, false
}

// Descendants lists the pids below root in the process tree, read from
// procRoot/*/stat (each process's parent). Orphans re-parented to root (a
// pid namespace's init, a child subreaper) are found as its children.
func Descendants(procRoot string, root int) ([]int, error) {
	all, err := procstat.All(procRoot)
	if err != nil {
		return nil, fmt.Errorf("memwatch: %w", err)
	}
	return procstat.Descendants(all, root), nil
}

// Watch samples measure until ctx ends or a sample is above limit; then it
// calls over once with that sample and returns. It also keeps the peak,
// which Peak returns after Watch has returned. Samples are at most
// Interval apart, and sooner where an overrun could come sooner (next).
type Watch struct {
	Limit    uint64
	Interval time.Duration
	Measure  func() (Sample, error)
	peak     Sample
}

// Run is the watch loop (call it in a goroutine).
func (w *Watch) Run(ctx context.Context, over func(Sample)) {
	iv := w.Interval
	if iv <= 0 {
		iv = 100 * time.Millisecond
	}
	wait := iv / minDiv // the first samples ramp up from the shortest wait
	var prev Sample
	var prevAt time.Time
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		at := time.Now()
		if s, err := w.Measure(); err == nil {
			if s.Bytes > w.peak.Bytes {
				w.peak = s
			}
			if s.Bytes > w.Limit {
				over(s)
				return
			}
			wait = next(w.Limit, prev, prevAt, s, at, wait, iv)
			prev, prevAt = s, at
		} else {
			wait = iv
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// minDiv: the shortest wait between samples is Interval/minDiv.
const minDiv = 10

// next is the wait before the sample after s (taken at at; prev at prevAt,
// none when prevAt is zero), given the last wait and the longest (Interval).
// An allocation faster than the wait overshoots the limit until the next
// sample (the watch is not the kernel): the wait doubles from longest/minDiv
// up to the longest while the tree does not grow towards the limit, and shrinks,
// down to longest/minDiv, to half the time the last interval's growth rate
// would take to use up what is left below the limit. A runaway allocation
// (a start is where most begin) is then seen after a fraction of the
// interval, not after up to a whole one, and a quiet tree costs one sample
// an interval, as before.
func next(limit uint64, prev Sample, prevAt time.Time, s Sample, at time.Time, last, longest time.Duration) time.Duration {
	shortest := longest / minDiv
	d := 2 * last
	if !prevAt.IsZero() && s.Bytes > prev.Bytes && at.After(prevAt) {
		// The last interval times what is left over what it grew, halved.
		eta := time.Duration(float64(at.Sub(prevAt)) * float64(limit-s.Bytes) / float64(s.Bytes-prev.Bytes) / 2)
		if eta < d {
			d = eta
		}
	}
	return min(max(d, shortest), longest)
}

// Peak is the largest sample seen (read it after Run returned).
func (w *Watch) Peak() Sample { return w.peak }
