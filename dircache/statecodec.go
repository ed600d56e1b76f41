package dircache

import "encoding/binary"

// The encoding callers use for their states' bytes: unsigned and signed
// varints, length-prefixed strings and directory keys, appended by the
// Append functions and read back by a StateReader. One reader for every
// caller keeps the bounds checks of these parsers in one place: the bytes
// come from a file the sandbox cannot write, but a state from an older
// jail, or a torn one, must still read as "start afresh", never panic.

// AppendStr appends s, its length first.
func AppendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// AppendKey appends k.
func AppendKey(b []byte, k Key) []byte {
	b = binary.AppendUvarint(b, k.Dev)
	b = binary.AppendUvarint(b, k.Ino)
	return binary.AppendVarint(b, k.Ctime)
}

// StateReader reads what the Append functions wrote. After the first
// malformed value every read returns the zero value and OK reports false.
type StateReader struct {
	b   []byte
	bad bool
}

// NewStateReader reads b.
func NewStateReader(b []byte) *StateReader { return &StateReader{b: b} }

// OK reports whether every read so far was well formed.
func (r *StateReader) OK() bool { return !r.bad }

// Done reports whether every read was well formed and nothing is left.
func (r *StateReader) Done() bool { return !r.bad && len(r.b) == 0 }

// Fail marks the bytes malformed (a caller's own check of a value).
func (r *StateReader) Fail() { r.bad = true }

// Uvarint reads an unsigned varint in its shortest form (one state has
// one encoding: a longer form is malformed, as in the cache files).
func (r *StateReader) Uvarint() uint64 {
	if r.bad {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || (n > 1 && r.b[n-1] == 0) {
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Varint reads a signed (zig-zag) varint in its shortest form.
func (r *StateReader) Varint() int64 {
	u := r.Uvarint()
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

// Str reads a string written by AppendStr.
func (r *StateReader) Str() string {
	n := r.Uvarint()
	if r.bad || n > uint64(len(r.b)) {
		r.bad = true
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// Key reads a key written by AppendKey.
func (r *StateReader) Key() Key {
	return Key{Dev: r.Uvarint(), Ino: r.Uvarint(), Ctime: r.Varint()}
}

// Fixed reads the next n bytes as they are (nil and malformed when fewer
// are left).
func (r *StateReader) Fixed(n int) []byte {
	if r.bad || n > len(r.b) {
		r.bad = true
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}
