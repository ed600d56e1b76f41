package memwatch

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// A fake /proc: a tree 10 -> 11 -> 12, 10 -> 13, and 20 (not ours) whose
// comm holds ") 10 (" to try to pass as a child of 10.
func fakeProc(t *testing.T) string {
	root := t.TempDir()
	proc := func(pid, ppid int, comm string, pssKB int, statmPages string) {
		d := filepath.Join(root, strconv.Itoa(pid))
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "stat"), []byte(strconv.Itoa(pid)+" ("+comm+") S "+strconv.Itoa(ppid)+" 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 4242\n"), 0o644)
		if pssKB >= 0 {
			os.WriteFile(filepath.Join(d, "smaps_rollup"), []byte("00400000-7fff [rollup]\nRss:    9999 kB\nPss:  "+strconv.Itoa(pssKB)+" kB\nPss_Anon: 1 kB\n"), 0o644)
		}
		if statmPages != "" {
			os.WriteFile(filepath.Join(d, "statm"), []byte(statmPages), 0o644)
		}
	}
	proc(1, 0, "init", 5000, "")
	proc(10, 1, "jail:init", 1000, "")
	proc(11, 10, "sh", 2000, "")
	proc(12, 11, "node x", 300000, "")
	proc(13, 10, "orphan", -1, "100 50 0 0 0 0 0\n") // no smaps_rollup: statm resident pages
	proc(20, 1, "evil) S 10 (x", 777777, "")
	os.MkdirAll(filepath.Join(root, "self"), 0o755)
	return root
}

func TestMeasure(t *testing.T) {
	proc := fakeProc(t)
	kids, err := Descendants(proc, 10)
	if err != nil || len(kids) != 3 {
		t.Fatalf("descendants of 10: %v %v (want 11 12 13, not 20)", kids, err)
	}
	s, err := Tree{ProcRoot: proc, Root: 10}.Measure()
	if err != nil {
		t.Fatal(err)
	}
	want := uint64(1000+2000+300000)*1024 + 50*uint64(os.Getpagesize())
	if s.Bytes != want || s.Procs != 4 {
		t.Errorf("measured %d bytes in %d processes, want %d in 4", s.Bytes, s.Procs, want)
	}
	// A tmpfs counts what it holds.
	tm := t.TempDir()
	s2, _ := Tree{ProcRoot: proc, Root: 10, Tmpfs: []string{tm, "/nonexistent"}}.Measure()
	if s2.Bytes < s.Bytes {
		t.Errorf("tmpfs sample below the processes' alone")
	}
}

func TestWatch(t *testing.T) {
	n := uint64(0)
	w := &Watch{Limit: 500, Interval: time.Millisecond, Measure: func() (Sample, error) {
		n += 100
		return Sample{Bytes: n}, nil
	}}
	var got Sample
	w.Run(context.Background(), func(s Sample) { got = s })
	if got.Bytes != 600 || w.Peak().Bytes != 600 {
		t.Errorf("over at %d (peak %d), want the first sample above 500: 600", got.Bytes, w.Peak().Bytes)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w2 := &Watch{Limit: 1 << 40, Interval: time.Millisecond, Measure: func() (Sample, error) { return Sample{Bytes: 1}, nil }}
	w2.Run(ctx, func(Sample) { t.Error("over under the limit") })
}

// The real /proc: this test process's own tree has a plausible size.
func TestMeasureSelf(t *testing.T) {
	s, err := Tree{Root: os.Getpid()}.Measure()
	if err != nil || s.Procs < 1 || s.Bytes < 1<<20 || s.Bytes > 4<<30 {
		t.Errorf("self: %+v %v", s, err)
	}
}

// next: the waits ramp up from a tenth of the interval to the interval
// while the tree is quiet, and shrink, to no less than a tenth, to half
// the time the last growth rate takes to reach the limit.
func TestNextWait(t *testing.T) {
	const iv = 100 * time.Millisecond
	t0 := time.Unix(1000, 0)
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	for _, c := range []struct {
		name     string
		prev, s  uint64
		noPrev   bool
		el, last time.Duration
		limit    uint64
		want     time.Duration
	}{
		{name: "first sample: twice the shortest", noPrev: true, s: 10, last: iv / 10, limit: 1000, want: ms(20)},
		{name: "quiet: doubles", prev: 10, s: 10, el: ms(20), last: ms(20), limit: 1000, want: ms(40)},
		{name: "quiet: at most the interval", prev: 10, s: 10, el: ms(80), last: ms(80), limit: 1000, want: iv},
		{name: "shrinking: at most the interval", prev: 20, s: 10, el: iv, last: iv, limit: 1000, want: iv},
		{name: "slow growth far below: the interval", prev: 100, s: 101, el: iv, last: iv, limit: 1000, want: iv},
		// 400 in 40 ms: 10 per ms; 500 left: 50 ms to the limit, half is 25.
		{name: "fast growth: half the time to the limit", prev: 100, s: 500, el: ms(40), last: ms(40), limit: 1000, want: ms(25)},
		{name: "faster: no less than a tenth", prev: 100, s: 900, el: ms(20), last: ms(20), limit: 1000, want: iv / 10},
		{name: "at the limit: the shortest", prev: 900, s: 1000, el: ms(10), last: ms(10), limit: 1000, want: iv / 10},
	} {
		prevAt := t0
		if c.noPrev {
			prevAt = time.Time{}
		}
		got := next(c.limit, Sample{Bytes: c.prev}, prevAt, Sample{Bytes: c.s}, t0.Add(c.el), c.last, iv)
		if got != c.want {
			t.Errorf("%s: next = %v, want %v", c.name, got, c.want)
		}
	}
}

// A tree that grows at a steady rate (the limit in 60 ms, as a memory bomb
// on a fast machine) is seen over the limit well before a whole interval
// of growth past it. With a sample every interval alone, the first one
// over it came at 100 ms: 1,666 against a limit of 1,000.
func TestWatchRunawayGrowth(t *testing.T) {
	const limit = 1000
	start := time.Now()
	w := &Watch{Limit: limit, Interval: 100 * time.Millisecond, Measure: func() (Sample, error) {
		return Sample{Bytes: uint64(time.Since(start) / (60 * time.Microsecond))}, nil // the limit in 60 ms
	}}
	var got Sample
	w.Run(context.Background(), func(s Sample) { got = s })
	// The shortest wait is 10 ms (167 over the limit), plus the timer's
	// lateness on a loaded machine.
	if got.Bytes > limit+500 {
		t.Errorf("over at %d, want within 500 of the limit %d (the limit is reached in 60 ms)", got.Bytes, limit)
	}
}
