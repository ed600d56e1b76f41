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
func decodeFar(b []byte) (r farRecord, ok bool) {
	d := farDec{b: b}
	if !d.lit(`{"gen":{`) {
		return farRecord{}, false
	}
	r.Gen = map[string]uint64{}
	if !d.lit("}") {
		for {
			k, ok1 := d.str()
			if !ok1 || !d.lit(":") {
				return farRecord{}, false
			}
			n, ok2 := d.uint(64)
			if !ok2 {
				return farRecord{}, false
			}
			r.Gen[k] = n // a name twice: the last, as json.Unmarshal
			if d.lit("}") {
				break
			}
			if !d.lit(",") {
				return farRecord{}, false
			}
		}
	}
	if d.lit(`,"writers":[`) {
		for {
			var w farWriter
			var pid uint64
			var ok1, ok2, ok3 bool
			if !d.lit(`{"dev":`) {
				return farRecord{}, false
			}
			w.Dev, ok1 = d.uint(64)
			if !ok1 || !d.lit(`,"pid":`) {
				return farRecord{}, false
			}
			pid, ok2 = d.uint(63) // an int: a larger one is Unmarshal's error
			if !ok2 || !d.lit(`,"tick":`) {
				return farRecord{}, false
			}
			w.Pid = int(pid)
			w.Tick, ok3 = d.uint(64)
			if !ok3 || !d.lit("}") {
				return farRecord{}, false
			}
			r.Writers = append(r.Writers, w)
			if d.lit("]") {
				break
			}
			if !d.lit(",") {
				return farRecord{}, false
			}
		}
	}
	if d.lit(`,"left":[`) {
		for {
			var l farLeft
			var ok1 bool
			if !d.lit(`{"name":`) {
				return farRecord{}, false
			}
			if l.Name, ok1 = d.str(); !ok1 || !d.lit(`,"inos":[`) {
				return farRecord{}, false
			}
			l.Inos = []uint32{}
			if !d.lit("]") {
				for {
					n, ok2 := d.uint(32)
					if !ok2 {
						return farRecord{}, false
					}
					l.Inos = append(l.Inos, uint32(n))
					if d.lit("]") {
						break
					}
					if !d.lit(",") {
						return farRecord{}, false
					}
				}
			}
			var ok3, ok4 bool
			if !d.lit(`,"dev":`) {
				return farRecord{}, false
			}
			if l.Dev, ok3 = d.uint(64); !ok3 || !d.lit(`,"gen":`) {
				return farRecord{}, false
			}
			if l.Gen, ok4 = d.uint(64); !ok4 || !d.lit("}") {
				return farRecord{}, false
			}
			r.Left = append(r.Left, l)
			if d.lit("]") {
				break
			}
			if !d.lit(",") {
				return farRecord{}, false
			}
		}
	}
	if !d.lit("}") || d.i != len(d.b) {
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
