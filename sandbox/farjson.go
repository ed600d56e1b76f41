package sandbox

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// decodeFar reads b into a farRecord when b is in the form the record's
// encoder writes (json.Marshal's bytes: no spaces, the fields in their
// order, strings without escapes, numbers as plain digits), without
// encoding/json's reflection: every start reads the record (farWriting)
// before its go, where json.Unmarshal would first build its decoder
// (0.2 ms of the supervisor's CPU). Anything else, ok false: the caller
// reads it with json.Unmarshal, as before. What it accepts, it reads as
// json.Unmarshal does (FuzzDecodeFar).
func decodeFar(b []byte) (farRecord, bool) {
	d := farDec{b: b}
	r := farRecord{Gen: map[string]uint64{}}
	ok := d.lit(`{"gen":{`) && d.each("}", true, func() bool {
		k, ok1 := d.str()
		if !ok1 || !d.lit(":") {
			return false
		}
		n, ok2 := d.uint(64)
		r.Gen[k] = n // a name twice: the last, as json.Unmarshal
		return ok2
	})
	// Writers and Left are omitted when empty: an empty list is not
	// written, and json.Unmarshal would read it as an empty slice, not nil.
	if ok && d.lit(`,"writers":[`) {
		ok = d.each("]", false, func() bool {
			var w farWriter
			var pid uint64
			ok1 := d.lit(`{"dev":`) && d.num(&w.Dev, 64) && d.lit(`,"pid":`) &&
				d.num(&pid, 63) && // an int: a larger one is json.Unmarshal's error
				d.lit(`,"tick":`) && d.num(&w.Tick, 64) && d.lit("}")
			w.Pid = int(pid)
			r.Writers = append(r.Writers, w)
			return ok1
		})
	}
	if ok && d.lit(`,"left":[`) {
		ok = d.each("]", false, func() bool {
			l := farLeft{Inos: []uint32{}}
			if !d.lit(`{"name":`) {
				return false
			}
			var ok1 bool
			if l.Name, ok1 = d.str(); !ok1 {
				return false
			}
			ok1 = d.lit(`,"inos":[`) && d.each("]", true, func() bool {
				n, ok2 := d.uint(32)
				l.Inos = append(l.Inos, uint32(n))
				return ok2
			}) && d.lit(`,"dev":`) && d.num(&l.Dev, 64) && d.lit(`,"gen":`) && d.num(&l.Gen, 64) && d.lit("}")
			r.Left = append(r.Left, l)
			return ok1
		})
	}
	if !ok || !d.lit("}") || d.i != len(d.b) {
		return farRecord{}, false
	}
	return r, true
}

// farDec is decodeFar's place in its bytes.
type farDec struct {
	b []byte
	i int
}

// lit takes s if the bytes go on with it.
func (d *farDec) lit(s string) bool {
	if !bytes.HasPrefix(d.b[d.i:], []byte(s)) {
		return false
	}
	d.i += len(s)
	return true
}

// str takes a quoted string with no escape, control byte or invalid
// UTF-8 (json.Unmarshal would change those: they go to it).
func (d *farDec) str() (string, bool) {
	if !d.lit(`"`) {
		return "", false
	}
	j := bytes.IndexByte(d.b[d.i:], '"')
	if j < 0 {
		return "", false
	}
	s := d.b[d.i : d.i+j]
	for _, c := range s {
		if c < 0x20 || c == '\\' {
			return "", false
		}
	}
	if !utf8.Valid(s) {
		return "", false
	}
	d.i += j + 1
	return string(s), true
}

// each takes the items of a list or object whose opening is taken, up
// to end: item takes one, the commas are taken between them. empty: the
// list may have none.
func (d *farDec) each(end string, empty bool, item func() bool) bool {
	if empty && d.lit(end) {
		return true
	}
	for {
		if !item() {
			return false
		}
		if d.lit(end) {
			return true
		}
		if !d.lit(",") {
			return false
		}
	}
}

// num is uint into *n.
func (d *farDec) num(n *uint64, bits int) bool {
	v, ok := d.uint(bits)
	*n = v
	return ok
}

// uint takes a number of plain digits (no sign, fraction, exponent or
// leading zero) that fits in bits.
func (d *farDec) uint(bits int) (uint64, bool) {
	j := d.i
	for j < len(d.b) && d.b[j] >= '0' && d.b[j] <= '9' {
		j++
	}
	s := d.b[d.i:j]
	if len(s) == 0 || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	if j < len(d.b) && (d.b[j] == '.' || d.b[j] == 'e' || d.b[j] == 'E') {
		return 0, false
	}
	n, err := strconv.ParseUint(string(s), 10, bits)
	if err != nil {
		return 0, false
	}
	d.i = j
	return n, true
}
