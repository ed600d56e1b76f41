package dircache

import "testing"

// A state written by the Append functions reads back exactly, and every
// shorter prefix of it reads as malformed (a torn file starts afresh).
func TestStateCodecRoundTripAndTorn(t *testing.T) {
	k := Key{Dev: 1 << 40, Ino: 7, Ctime: -3}
	var b []byte
	b = append(b, "0123"...)
	b = AppendStr(b, "/home/u/.ssh")
	b = AppendKey(b, k)
	b = AppendStr(b, "")
	read := func(b []byte) (*StateReader, string, Key, string, []byte) {
		r := NewStateReader(b)
		fixed := r.Fixed(4)
		s := r.Str()
		key := r.Key()
		empty := r.Str()
		return r, s, key, empty, fixed
	}
	r, s, key, empty, fixed := read(b)
	if !r.Done() || s != "/home/u/.ssh" || key != k || empty != "" || string(fixed) != "0123" {
		t.Fatalf("round trip: done %v, %q %+v %q %q", r.Done(), s, key, empty, fixed)
	}
	for n := range len(b) {
		if r, _, _, _, _ := read(b[:n]); r.Done() {
			t.Errorf("a state cut to %d of %d bytes read as whole", n, len(b))
		}
	}
	if r, _, _, _, _ := read(append(b, 0)); r.Done() {
		t.Error("a state with a byte left over read as whole")
	}
	// A length beyond the bytes left is malformed, and stays so.
	r = NewStateReader([]byte{0xff, 0x01, 'a'})
	if s := r.Str(); s != "" || r.OK() {
		t.Fatalf("an oversized length read as %q, ok %v", s, r.OK())
	}
	if v := r.Uvarint(); v != 0 || r.OK() {
		t.Fatal("a read after a malformed one gave a value")
	}
	// A varint longer than its shortest form is malformed.
	if r := NewStateReader([]byte{0x80, 0x00}); r.Uvarint() != 0 || r.OK() {
		t.Fatal("a zero in two bytes read as well formed")
	}
}

func FuzzStateReader(f *testing.F) {
	f.Add(AppendKey(AppendStr(nil, "/x"), Key{Dev: 1, Ino: 2, Ctime: 3}))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewStateReader(b)
		s, k := r.Str(), r.Key()
		// One encoding per state: what reads whole is written back as
		// the very bytes it came from.
		if w := AppendKey(AppendStr(nil, s), k); r.Done() && string(w) != string(b) {
			t.Fatalf("%x read as %q %+v, written back as %x", b, s, k, w)
		}
	})
}
