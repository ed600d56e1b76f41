package sockdiag

import (
	"encoding/binary"
	"testing"
)

func msg(typ uint16, body []byte) []byte {
	m := make([]byte, HdrLen+len(body))
	binary.NativeEndian.PutUint32(m, uint32(len(m)))
	binary.NativeEndian.PutUint16(m[4:], typ)
	copy(m[HdrLen:], body)
	for len(m)%4 != 0 {
		m = append(m, 0)
	}
	return m
}

// Walk hands each message's payload over and stops at NLMSG_DONE; an
// error reply and a datagram that does not add up are errors.
func TestWalk(t *testing.T) {
	errMsg := make([]byte, 4)
	binary.NativeEndian.PutUint32(errMsg, uint32(0xffffffff)) // -EPERM
	for _, tt := range []struct {
		name     string
		b        []byte
		payloads int
		done     bool
		err      bool
	}{
		{"two and done", append(append(msg(20, []byte("abc")), msg(20, []byte("de"))...), msg(MsgDone, make([]byte, 4))...), 2, true, false},
		{"not done yet", msg(20, []byte("abcd")), 1, false, false},
		{"an error reply", msg(MsgError, errMsg), 0, false, true},
		{"cut short", msg(20, []byte("abcd"))[:HdrLen+2], 0, false, true},
		{"a stray tail", append(msg(20, nil), 1, 2), 1, false, true},
		{"empty", nil, 0, false, false},
	} {
		n := 0
		done, err := Walk(tt.b, func([]byte) { n++ })
		if n != tt.payloads || done != tt.done || (err != nil) != tt.err {
			t.Errorf("%s: %d payloads, done %v, err %v; want %d, %v, error %v", tt.name, n, done, err, tt.payloads, tt.done, tt.err)
		}
	}
}

// FuzzWalk: any datagram is read without a panic, and each payload lies
// within it.
func FuzzWalk(f *testing.F) {
	f.Add(msg(MsgDone, make([]byte, 4)))
	f.Add(msg(20, []byte("abcd")))
	f.Fuzz(func(t *testing.T, b []byte) {
		Walk(b, func(p []byte) {
			if len(p) > len(b) {
				t.Fatalf("a payload of %d bytes from %d", len(p), len(b))
			}
		})
	})
}
