package gitguard

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// v4Entry appends one index version 4 entry: mode, a name length of 0xfff
// (up to the NUL), strip bytes dropped from the previous name, then rest.
func v4Entry(b []byte, mode uint32, strip byte, rest string) []byte {
	e := make([]byte, 40+20+2)
	binary.BigEndian.PutUint32(e[24:28], mode)
	binary.BigEndian.PutUint16(e[60:62], 0xfff)
	b = append(b, e...)
	b = append(b, strip)
	b = append(b, rest...)
	return append(b, 0)
}

// A version 4 index names each entry by the previous one's name: an entry
// that keeps all of a long name and adds nothing is one byte of the file
// and the whole name again. review13c's parse copied the kept prefix for
// every entry: a 1 MB name then n empty entries of 64 bytes made the
// supervisor's sentinel (outside the sandbox's cgroup) copy n MB at each
// write of .git/index, and keep up to 4,096 such names for gitlinks: a
// 128 MB index is about two million entries, terabytes of copying (the
// guard stalls: the gitlinks it should observe are not), or an OOM of the
// supervisor (its last checks and restores never run). Seen failing on
// main: 3,001 MB allocated (1.4 s) for an index of 1,149 KB.
func TestParseGitlinksV4Bounded(t *testing.T) {
	const n = 1000
	b := []byte("DIRC\x00\x00\x00\x04")
	b = binary.BigEndian.AppendUint32(b, 2*n+2)
	b = v4Entry(b, 0o100644, 0, strings.Repeat("a", 1<<20))
	for i := 0; i < n; i++ {
		b = v4Entry(b, 0o100644, 0, "")
		b = v4Entry(b, 0o160000, 0, "")
	}
	// A short name after them: still read (prefix 1 MB dropped, "x/y"),
	// and a gitlink git can reach.
	b = v4Entry(b, 0o160000, 0x7f, "")
	b = b[:len(b)-2] // rewrite the last entry's name field below
	b = append(b, v4Strip(1<<20)...)
	b = append(b, "x/y\x00"...)
	b = append(b, bytes.Repeat([]byte{0}, 20)...)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	links, err := ParseGitlinks(b, 20)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("parse of a %d KB index allocated %d MB (limit 64 MB)", len(b)>>10, got>>20)
	}
	if err != nil || len(links) != 1 || links[0] != "x/y" {
		t.Errorf("gitlinks %d (last %q), %v; want only x/y (names longer than PATH_MAX cannot be checkouts)", len(links), last(links), err)
	}
}

func last(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

// v4Strip encodes strip as read-cache.c's decode_varint reads it.
func v4Strip(v int) []byte {
	var buf [16]byte
	pos := len(buf) - 1
	buf[pos] = byte(v & 127)
	for v >>= 7; v != 0; v >>= 7 {
		v--
		pos--
		buf[pos] = 128 | byte(v&127)
	}
	return buf[pos:]
}

// The replace bitmap of a split index is the agent's too: 8 M zero literal
// words (64 MB, half of maxIndex) took the supervisor 1.1 s at each write
// of .git/index on main (64 steps a word; 2.3 s at maxIndex), seen failing
// here; now a step a word.
func TestEwahBitsBounded(t *testing.T) {
	words := 8 << 20
	b := make([]byte, 12+8*words)
	binary.BigEndian.PutUint32(b[4:8], uint32(words))
	binary.BigEndian.PutUint64(b[8:], uint64(words-1)<<33) // no run, words-1 literals
	binary.BigEndian.PutUint64(b[len(b)-12:], 1<<5)        // bit 5 of the last literal
	// The fastest of three: a bit-by-bit walk takes seconds every time,
	// a word-by-word one ~10 ms; one try alone flaked at load 12-17.
	var (
		bits    []int
		n       int
		ok      bool
		fastest time.Duration
	)
	for i := 0; i < 3; i++ {
		st := time.Now()
		bits, n, ok = ewahBits(b, 1)
		if d := time.Since(st); i == 0 || d < fastest {
			fastest = d
		}
	}
	if fastest > 400*time.Millisecond {
		t.Errorf("ewahBits over %d zero words: %v at best of 3 (limit 400 ms)", words, fastest)
	}
	if want := 64*(words-2) + 5; !ok || n != len(b) || len(bits) != 1 || bits[0] != want {
		t.Errorf("ewahBits: %v %d %v, want [%d] %d true", bits, n, ok, want, len(b))
	}
}

// The split index's extension and bitmaps are the agent's bytes: no panic,
// at most max bits, each past the one before, and no more bytes than given
// (review13e's parse had no fuzz of its own for them).
func FuzzEwahBits(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x40\x00\x00\x00\x02\x00\x00\x00\x02\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00"), 4)
	f.Add([]byte("\x00\x00\x00\x40\x00\x00\x00\x01\xff\xff\xff\xff\xff\xff\xff\xff\x00\x00\x00\x00"), 100)
	f.Fuzz(func(t *testing.T, b []byte, max int) {
		max = max & 0xffff
		bits, n, ok := ewahBits(b, max)
		if !ok {
			return
		}
		if n > len(b) || len(bits) > max {
			t.Fatalf("ewahBits: n %d of %d bytes, %d bits (max %d)", n, len(b), len(bits), max)
		}
		for i := 1; i < len(bits); i++ {
			if bits[i] <= bits[i-1] {
				t.Fatalf("ewahBits: bits out of order %v", bits)
			}
		}
	})
}

// parseIndex with every name kept (a shared index) on the agent's bytes:
// no panic, no name longer than maxName.
func FuzzParseIndexAll(f *testing.F) {
	f.Add([]byte("DIRC\x00\x00\x00\x04\x00\x00\x00\x02"+strings.Repeat("\x00", 24)+"\x00\x00\xe0\x00"+strings.Repeat("\x00", 34)+"\x00\x03a/b\x00\x05c/d\x00"), 20)
	f.Fuzz(func(t *testing.T, b []byte, hs int) {
		if hs != 20 && hs != 32 {
			hs = 20
		}
		ix, _ := parseIndex(b, hs, func(int) bool { return true })
		for pos, s := range ix.named {
			if len(s) > maxName || pos >= ix.count {
				t.Fatalf("a name of %d bytes at %d of %d", len(s), pos, ix.count)
			}
		}
		for _, s := range ix.links {
			if len(s) > maxName {
				t.Fatalf("a gitlink of %d bytes", len(s))
			}
		}
	})
}

// A split index whose replace bitmap cannot be read makes every name of
// the shared index count (observing more is safe), and the shared index is
// the agent's too: a version 4 one of a 4,096-byte name, then 100,000
// entries of 64 bytes that keep it, made the supervisor allocate 826 MB
// for names (about 8 GB for one of 128 MB), though at most maxGitlinks of
// them are used. Seen failing with every name kept (826 MB: review13f's
// first bound limited each name, not their sum) and with a fresh buffer
// per name (442 MB allocated, 4 KB copied per 64 bytes of file).
func TestSharedGitlinksBounded(t *testing.T) {
	d := t.TempDir()
	hash := bytes.Repeat([]byte{0xab}, 20)
	sh := []byte("DIRC\x00\x00\x00\x04")
	const n = 100000
	sh = binary.BigEndian.AppendUint32(sh, n+1)
	sh = v4Entry(sh, 0o100644, 0, "d/"+strings.Repeat("a", maxName-2))
	for i := 0; i < n; i++ {
		sh = v4Entry(sh, 0o100644, 0, "")
	}
	sh = append(sh, hash...)
	if err := os.WriteFile(filepath.Join(d, "sharedindex."+strings.Repeat("ab", 20)), sh, 0o644); err != nil {
		t.Fatal(err)
	}
	// The split index: one replacement that is a gitlink (no name), and a
	// link extension with no bitmaps (unreadable: every name counts).
	ix := []byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x01")
	e := make([]byte, 64)
	binary.BigEndian.PutUint32(e[24:28], 0o160000)
	ix = append(ix, e...)
	ix = append(ix, "link\x00\x00\x00\x14"...)
	ix = append(ix, hash...)
	ix = append(ix, bytes.Repeat([]byte{0}, 20)...)
	if err := os.WriteFile(filepath.Join(d, "index"), ix, 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	links, over := indexGitlinks(d, "/w")
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("a shared index of %d KB: %d MB allocated (limit 64 MB)", len(sh)>>10, got>>20)
	}
	if len(links) != maxGitlinks || over == "" {
		t.Errorf("%d gitlinks observed, over %q; want %d and the cap said", len(links), over, maxGitlinks)
	}
}
