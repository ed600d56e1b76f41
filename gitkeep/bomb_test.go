//go:build linux

package gitkeep

import (
	"bytes"
	"compress/zlib"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPruneBombWithinBudget (review16a): the agent deletes its loose
// objects and plants a pack whose idx names each at an entry that
// inflates to 64 MiB of zeros (64 KiB in the pack): the end's prune must
// stay near its deadline, not inflate a GiB; nor a chain of 300 deltas
// each copying its 64 MiB base whole (a few KiB to inflate a level).
func TestPruneBombWithinBudget(t *testing.T) {
	t.Run("inflate", func(t *testing.T) { pruneBomb(t, false) })
	t.Run("delta chain", func(t *testing.T) { pruneBomb(t, true) })
}

func pruneBomb(t *testing.T, chain bool) {
	ws, _ := gitRepo(t)
	g, st, n, ids, loose := keptLoose(t, ws)
	for _, p := range loose {
		os.Remove(p)
	}
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	zw.Write(make([]byte, maxObject))
	zw.Close()
	// PACK v2, 1 object; a blob of maxObject bytes at offset 12.
	var pk bytes.Buffer
	off := uint64(12)
	pk.Write([]byte{'P', 'A', 'C', 'K', 0, 0, 0, 2, 0, 0, 0, 1})
	size := uint64(maxObject)
	c := byte(3<<4) | byte(size&15)
	size >>= 4
	for size > 0 {
		pk.WriteByte(c | 0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	pk.WriteByte(c)
	pk.Write(z.Bytes())
	if chain {
		// Deltas on it, each one the whole of its base copied in 64 KiB
		// pieces: a few KiB to inflate, 64 MiB to make, at every level.
		var d bytes.Buffer
		for _, v := range []uint64{maxObject, maxObject} {
			for v >= 0x80 {
				d.WriteByte(byte(v) | 0x80)
				v >>= 7
			}
			d.WriteByte(byte(v))
		}
		for o := 0; o < maxObject; o += 0x10000 {
			d.Write([]byte{0x80 | 0x01 | 0x02 | 0x04 | 0x08, byte(o), byte(o >> 8), byte(o >> 16), byte(o >> 24)})
		}
		var dz bytes.Buffer
		zw, _ := zlib.NewWriterLevel(&dz, zlib.BestCompression)
		zw.Write(d.Bytes())
		zw.Close()
		prev := uint64(12)
		for i := 0; i < maxDepth; i++ {
			off = uint64(pk.Len())
			sz := uint64(d.Len())
			c := byte(6<<4) | byte(sz&15)
			sz >>= 4
			for sz > 0 {
				pk.WriteByte(c | 0x80)
				c = byte(sz & 0x7f)
				sz >>= 7
			}
			pk.WriteByte(c)
			// OFS_DELTA's negative offset, git's encoding.
			rel := off - prev
			var enc []byte
			enc = append(enc, byte(rel&0x7f))
			for rel >>= 7; rel > 0; rel >>= 7 {
				rel--
				enc = append([]byte{0x80 | byte(rel&0x7f)}, enc...)
			}
			pk.Write(enc)
			pk.Write(dz.Bytes())
			prev = off
		}
	}
	pk.Write(make([]byte, 20))
	pd := filepath.Join(g, "objects", "pack")
	os.MkdirAll(pd, 0o755)
	os.WriteFile(filepath.Join(pd, "pack-bomb.pack"), pk.Bytes(), 0o444)
	os.WriteFile(filepath.Join(pd, "pack-bomb.idx"), fakeIdx(ids, uint32(off)), 0o444)
	lock, res := start(t, st, g)
	t0 := time.Now()
	p, err := Prune(lock, st, g, &res.Mtimes, 256, time.Now(), time.Now().Add(150*time.Millisecond))
	lock.Close()
	took := time.Since(t0)
	t.Logf("prune of %d copies against a bomb: %v, %+v", n, took, p)
	if err != nil || p.Packed != 0 {
		t.Fatalf("%+v %v", p, err)
	}
	// One entry past the deadline is a 64 MiB inflate or copy: 0.2-0.8 s
	// at load 15; the chain took 51.7 s on main.
	if took > 5*time.Second {
		t.Errorf("the prune took %v past its 150 ms deadline", took)
	}
}
