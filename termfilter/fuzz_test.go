package termfilter

import (
	"bytes"
	"testing"
)

// FuzzFilter checks, for any input: (1) writing it in two pieces cut
// anywhere gives the same output as one write; (2) the output contains
// nothing the filter would drop or change (filtering it again is the
// identity and drops nothing), so no dangerous sequence, C1 control or
// invalid UTF-8 ever reaches the terminal; (3) the buffers stay bounded.
func FuzzFilter(f *testing.F) {
	for _, set := range [][]tcase{passCases, dropCases} {
		for _, c := range set {
			f.Add([]byte(c.in), uint16(len(c.in)/2), false)
		}
	}
	f.Add([]byte("\x9b21t\x9d52;c;?\x9c"), uint16(1), true)
	f.Fuzz(func(t *testing.T, in []byte, cut uint16, eight bool) {
		o := Options{EightBit: eight}
		var whole bytes.Buffer
		fw, _ := New(&whole, o)
		fw.Write(in)

		var split bytes.Buffer
		fs, _ := New(&split, o)
		k := int(cut) % (len(in) + 1)
		fs.Write(in[:k])
		fs.Write(in[k:])
		if !bytes.Equal(whole.Bytes(), split.Bytes()) {
			t.Fatalf("split at %d: %q, whole: %q", k, split.Bytes(), whole.Bytes())
		}
		if len(fw.sbuf) > maxClipboard || len(fw.seq) > maxSeq+2 || len(fw.pend) > 3 {
			t.Fatalf("buffers: sbuf %d seq %d pend %d", len(fw.sbuf), len(fw.seq), len(fw.pend))
		}

		var again bytes.Buffer
		fa, _ := New(&again, o)
		fa.Write(whole.Bytes())
		if !bytes.Equal(again.Bytes(), whole.Bytes()) {
			t.Fatalf("output changes when filtered again:\n in  %q\n out %q\n 2nd %q", in, whole.Bytes(), again.Bytes())
		}
		if d := fa.Dropped(); len(d) > 0 {
			t.Fatalf("output holds sequences the filter drops: %v\n in  %q\n out %q", d, in, whole.Bytes())
		}
		if bytes.IndexByte(whole.Bytes(), 0x05) >= 0 {
			t.Fatalf("ENQ passed: %q", whole.Bytes())
		}
	})
}
