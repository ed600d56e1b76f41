package sessionlog

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The log keeps at most its limit, always the newest bytes, whatever the
// sizes of the writes.
func TestBounded(t *testing.T) {
	for _, tt := range []struct {
		name   string
		limit  int64
		writes []int
	}{
		{"small writes", 8 << 10, repeat(100, 1000)},
		{"one huge write", 8 << 10, []int{100 << 10}},
		{"mixed", 8 << 10, []int{10, 5000, 3000, 9000, 1, 4095, 4096, 4097}},
		{"under the limit", 8 << 10, []int{100, 200}},
		{"default limit", 0, repeat(64<<10, 100)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.log")
			f, err := Create(path)
			if err != nil {
				t.Fatal(err)
			}
			w := NewWriter(f, path, tt.limit)
			var all bytes.Buffer
			for i, n := range tt.writes {
				p := bytes.Repeat([]byte{byte('a' + i%26)}, n)
				for j := range p {
					p[j] += byte(j % 3) // not all the same byte
				}
				all.Write(p)
				if m, err := w.Write(p); m != n || err != nil {
					t.Fatalf("Write(%d) = %d, %v", n, m, err)
				}
			}
			w.Close()
			var got bytes.Buffer
			if err := Copy(&got, path); err != nil {
				t.Fatal(err)
			}
			limit := tt.limit
			if limit == 0 {
				limit = DefaultLimit
			}
			if int64(got.Len()) > limit {
				t.Fatalf("the log keeps %d bytes, over its limit %d", got.Len(), limit)
			}
			if !bytes.HasSuffix(all.Bytes(), got.Bytes()) {
				t.Fatalf("the log (%d bytes) is not the tail of what was written", got.Len())
			}
			if want := min(int64(all.Len()), limit/2); int64(got.Len()) < want {
				t.Fatalf("the log keeps %d bytes, want at least %d", got.Len(), want)
			}
		})
	}
}

func repeat(n, times int) []int {
	out := make([]int, times)
	for i := range out {
		out[i] = n
	}
	return out
}

// Follow prints every line once, in order, across rotations.
func TestFollowAcrossRotations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.log")
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(f, path, 8<<10)
	var done atomic.Bool
	const lines = 3000
	go func() {
		for i := 0; i < lines; i++ {
			fmt.Fprintf(w, "line %05d\n", i)
			if i%10 == 0 {
				// A rotation every ~370 lines: about one per 180 ms, under
				// Follow's 100 ms poll (two per poll are still caught up).
				time.Sleep(5 * time.Millisecond)
			}
		}
		done.Store(true)
	}()
	var out bytes.Buffer
	if err := Follow(&out, path, func() bool { return !done.Load() }); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(got) != lines {
		t.Fatalf("followed %d lines, want %d (first %q, last %q)", len(got), lines, got[0], got[len(got)-1])
	}
	for i, l := range got {
		if l != fmt.Sprintf("line %05d", i) {
			t.Fatalf("line %d is %q", i, l)
		}
	}
}

// Create never writes through a symlink planted at the log's path.
func TestCreateNoFollow(t *testing.T) {
	d := t.TempDir()
	target := filepath.Join(d, "target")
	os.WriteFile(target, []byte("keep"), 0o600)
	path := filepath.Join(d, "s.log")
	os.Symlink(target, path)
	if _, err := Create(path); err == nil {
		t.Fatal("Create followed a symlink")
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("the symlink's target was changed: %q", b)
	}
}

// A Copy while the log rotates is a contiguous run of lines: never the
// older half of one rotation with the current half of a later one.
func TestCopyDuringRotations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.log")
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(f, path, 8<<10)
	var done atomic.Bool
	writerGone := make(chan struct{})
	go func() {
		defer close(writerGone)
		for i := 0; i < 200000 && !done.Load(); i++ {
			fmt.Fprintf(w, "line %07d\n", i)
		}
		done.Store(true)
	}()
	// The writer must be gone before TempDir's cleanup: a rotation it is in
	// the middle of would create a file in the directory being removed.
	defer func() { done.Store(true); <-writerGone }()
	for c := 0; c < 300 && !done.Load(); c++ {
		var out bytes.Buffer
		if err := Copy(&out, path); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(out.String(), "\n")
		if len(lines) < 3 {
			continue
		}
		prev := -1
		for _, l := range lines[1 : len(lines)-1] { // the first and last may be cut
			var n int
			if _, err := fmt.Sscanf(l, "line %d", &n); err != nil {
				t.Fatalf("copy %d: a cut line inside: %q", c, l)
			}
			if prev >= 0 && n != prev+1 {
				t.Fatalf("copy %d: line %d follows %d", c, n, prev)
			}
			prev = n
		}
	}
}
