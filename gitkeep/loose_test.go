package gitkeep

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"testing"
)

// TestCheckLooseUpTo: the one inflate that checks a loose object tells a
// true object (its inflated size), one whose header declares more than
// the bound (errTooLarge: a small file of 16 MiB of zeros is linked, not
// copied, at a start; said, not taken, at the end), and anything else
// (errLoose); and the pooled readers give the same answers in any order,
// from any goroutine, after a stream that failed half-way.
func TestCheckLooseUpTo(t *testing.T) {
	id, good := looseBlob("hello\n")
	want, _ := hex.DecodeString(id)
	bigID, big := looseBlob(strings.Repeat("\x00", 1<<20))
	bigWant, _ := hex.DecodeString(bigID)
	_, other := looseBlob("other\n")
	truncated := good[:len(good)-3]                     // the stream's checksum cut
	trailing := append(append([]byte(nil), good...), 0) // a byte past the stream
	cases := []struct {
		name string
		b    []byte
		want []byte
		max  int64
		n    int64
		err  error
	}{
		{"a true object", good, want, 100, int64(len("blob 6\x00hello\n")), nil},
		{"at the bound", good, want, 6, int64(len("blob 6\x00hello\n")), nil},
		{"past the bound", good, want, 5, 0, errTooLarge},
		{"1 MiB of zeros past the bound", big, bigWant, 1 << 19, 0, errTooLarge},
		{"another object's bytes", other, want, 100, 0, errLoose},
		{"cut short", truncated, want, 100, 0, errLoose},
		{"bytes after the stream", trailing, want, 100, 0, errLoose},
		{"not zlib", []byte("blob 6\x00hello\n"), want, 100, 0, errLoose},
		{"empty", nil, want, 100, 0, errLoose},
		{"an id of no hash's size", good, want[:10], 100, 0, errLoose},
	}
	check := func(t *testing.T) {
		for _, c := range cases {
			n, err := checkLooseUpTo(c.b, c.want, c.max)
			if n != c.n || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
				t.Errorf("%s: %d, %v; want %d, %v", c.name, n, err, c.n, c.err)
			}
		}
	}
	check(t)
	// Again in reverse (each reader last used by a failure), then from
	// eight goroutines at once.
	for i, j := 0, len(cases)-1; i < j; i, j = i+1, j-1 {
		cases[i], cases[j] = cases[j], cases[i]
	}
	check(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				check(t)
			}
		}()
	}
	wg.Wait()
	if !bytes.Equal(good, func() []byte { _, b := looseBlob("hello\n"); return b }()) {
		t.Error("the checks changed their input")
	}
}
