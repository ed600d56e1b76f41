package jsonenc

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var samples = []string{"", "plain", `"quoted" \back\`, "<a href='x'>&amp;</a>", "\x00\x01\x07\x1f\x7f", "\b\f\n\r\t", "\xff", "a\xe2\x80", "\xe2\x80\xa8\xe2\x80\xa9", "caf\u00e9 \U0001F600 \uFFFD", "\u2028x\u2029"}

func TestStringIsMarshals(t *testing.T) {
	for _, s := range samples {
		if have, want := String([]byte("x"), s), append([]byte("x"), marshal(t, s)...); !bytes.Equal(have, want) {
			t.Errorf("String(%q) = %s, json.Marshal %s", s, have, want)
		}
	}
}

func FuzzString(f *testing.F) {
	for _, s := range samples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if have, want := String(nil, s), marshal(t, s); !bytes.Equal(have, want) {
			t.Fatalf("String(%q) = %s, json.Marshal %s", s, have, want)
		}
	})
}

func TestFloat64IsMarshals(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -2.5, 0.1, 1e-6, 9.99e-7, 1e-7, -1e-9, 1e20, 1e21, 123456789e13, 1e300, math.MaxFloat64, math.SmallestNonzeroFloat64, 5e-324, 1.0 / 3} {
		have, err := Float64(nil, f)
		if want := marshal(t, f); err != nil || !bytes.Equal(have, want) {
			t.Errorf("Float64(%v) = %s, %v; json.Marshal %s", f, have, err, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := Float64(nil, f); err == nil {
			t.Errorf("Float64(%v): no error; json.Marshal has one", f)
		} else if _, jerr := json.Marshal(f); jerr == nil {
			t.Errorf("json.Marshal(%v) has no error", f)
		}
	}
}

func FuzzFloat64(f *testing.F) {
	f.Add(1e-7)
	f.Add(1e21)
	f.Fuzz(func(t *testing.T, x float64) {
		have, err := Float64(nil, x)
		want, jerr := json.Marshal(x)
		if (err == nil) != (jerr == nil) || err == nil && !bytes.Equal(have, want) {
			t.Fatalf("Float64(%v) = %s, %v; json.Marshal %s, %v", x, have, err, want, jerr)
		}
	})
}

func TestBytesAndBoolAreMarshals(t *testing.T) {
	for _, p := range [][]byte{nil, {}, {0}, []byte("any carnal pleas"), {0xff, 0xfe, 0xfd, 0x3e}} {
		if have, want := Bytes(nil, p), marshal(t, p); !bytes.Equal(have, want) {
			t.Errorf("Bytes(%v) = %s, json.Marshal %s", p, have, want)
		}
	}
	for _, l := range [][]string{nil, {}, {"a"}, samples} {
		if have, want := Strings(nil, l), marshal(t, l); !bytes.Equal(have, want) {
			t.Errorf("Strings(%q) = %s, json.Marshal %s", l, have, want)
		}
	}
	for _, v := range []bool{false, true} {
		if have, want := Bool(nil, v), marshal(t, v); !bytes.Equal(have, want) {
			t.Errorf("Bool(%v) = %s, json.Marshal %s", v, have, want)
		}
	}
}

func TestEnd(t *testing.T) {
	for _, c := range []struct{ in, obj, arr string }{
		{"{", "{}", "{]"},
		{`{"a":1,`, `{"a":1}`, `{"a":1]`},
		{"[", "[}", "[]"},
		{"[1,2,", "[1,2}", "[1,2]"},
	} {
		if have := string(EndObject([]byte(c.in))); c.in[0] == '{' && have != c.obj {
			t.Errorf("EndObject(%s) = %s, want %s", c.in, have, c.obj)
		}
		if have := string(EndArray([]byte(c.in))); c.in[0] == '[' && have != c.arr {
			t.Errorf("EndArray(%s) = %s, want %s", c.in, have, c.arr)
		}
	}
}
