// Package jsonenc appends JSON values byte for byte as encoding/json's
// Marshal writes them, without reflection: strings (HTML-escaped, invalid
// UTF-8 replaced, U+2028 and U+2029 escaped), floats (ES6 number form) and
// byte slices (base64). The encoders package jsongen generates are made of
// these and of strconv's integers. Marshal's equality is the whole
// contract: the tests compare every function with it.
package jsonenc

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// htmlSafe[c] reports whether Marshal writes ASCII byte c as it is:
// printable, and neither a quote, a backslash nor one of HTML's <, > and &.
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// String appends s as a JSON string.
func String(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if htmlSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Float64 appends f as Marshal writes a float64: the shortest decimal
// that reads back as f, in exponent form below 1e-6 and from 1e21 on.
// NaN and the infinities have no JSON form: an error, as Marshal's.
func Float64(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	form := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		form = 'e'
	}
	b = strconv.AppendFloat(b, f, form, -1, 64)
	if form == 'e' {
		// e-07 as e-7.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// Bytes appends p as Marshal writes a []byte: base64 in a string, null
// for a nil slice.
func Bytes(b []byte, p []byte) []byte {
	if p == nil {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, p)
	return append(b, '"')
}

// Strings appends l as Marshal writes a []string: null when nil.
func Strings(b []byte, l []string) []byte {
	if l == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for _, s := range l {
		b = String(b, s)
		b = append(b, ',')
	}
	return EndArray(b)
}

// Bool appends v as true or false.
func Bool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// EndObject closes an object whose members each ended with a comma: the
// last comma becomes the brace ("{" alone gets one).
func EndObject(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == ',' {
		b[n-1] = '}'
		return b
	}
	return append(b, '}')
}

// EndArray is EndObject for an array.
func EndArray(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == ',' {
		b[n-1] = ']'
		return b
	}
	return append(b, ']')
}

// Marshal is json.Marshal(v) by enc, a generated encoder (package
// jsongen), into a buffer of size bytes: nil enc (its generated file
// gone) or an error of enc's (a value JSON has no form for) is
// json.Marshal's, whose error is then the one returned.
func Marshal[T any](enc func([]byte, *T) ([]byte, error), size int, v *T) ([]byte, error) {
	if enc != nil {
		if b, err := enc(make([]byte, 0, size), v); err == nil {
			return b, nil
		}
	}
	return json.Marshal(v)
}
