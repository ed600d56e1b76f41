package getrandom

import (
	"bytes"
	"testing"
)

// Read fills the whole buffer (more than one call of the kernel's may give
// at once is not asked here: the names are a few bytes), and two reads
// differ: a Read that left the buffer as it was, or filled only part of
// it, fails.
func TestReadFills(t *testing.T) {
	for _, n := range []int{1, 4, 6, 32, 300, 4096} {
		a, b := make([]byte, n), make([]byte, n)
		if err := Read(a); err != nil {
			t.Fatal(err)
		}
		if err := Read(b); err != nil {
			t.Fatal(err)
		}
		if n >= 4 && bytes.Equal(a, b) {
			t.Errorf("%d bytes: two reads gave the same bytes %x", n, a)
		}
		if n >= 32 {
			// The last 16 bytes of a partly filled buffer would stay zero.
			if tail := a[n-16:]; bytes.Equal(tail, make([]byte, 16)) {
				t.Errorf("%d bytes: the end of the buffer was not filled: %x", n, a)
			}
		}
	}
	if err := Read(nil); err != nil {
		t.Errorf("an empty buffer: %v", err)
	}
}
