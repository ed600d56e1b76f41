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
		os.WriteFile(filepath.Join(d, "stat"), []byte(strconv.Itoa(pid)+" ("+comm+") S "+strconv.Itoa(ppid)+" 1 1 0 -1\n"), 0o644)
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
