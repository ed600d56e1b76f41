package hostgit

import (
	"encoding/json"
	"testing"
)

// TestParseEntryAsJSON: what json.Marshal writes of a plain identity is
// read back by parseEntry; what it escapes (<, &, a quote, non-ASCII) is
// left to json.Unmarshal.
func TestParseEntryAsJSON(t *testing.T) {
	for _, c := range []struct {
		e    cacheEntry
		fast bool
	}{
		{cacheEntry{"0123abcd", "Ada Lovelace", "ada@example.org"}, true},
		{cacheEntry{"k", "", ""}, true},
		{cacheEntry{"k", "A <b>", "a&b@x"}, false},
		{cacheEntry{"k", `Say "hi"`, `back\slash`}, false},
		{cacheEntry{"k", "Zoë", "z@x"}, false},
	} {
		b, err := json.Marshal(c.e)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := parseEntry(b)
		if ok != c.fast || ok && got != c.e {
			t.Errorf("parseEntry(%s) = %+v, %v; want %+v, %v", b, got, ok, c.e, c.fast)
		}
	}
}

// FuzzParseEntry: whatever parseEntry accepts, json.Unmarshal reads the
// same.
func FuzzParseEntry(f *testing.F) {
	f.Add([]byte(`{"key":"k","name":"n","email":"e"}`))
	f.Add([]byte(`{"key":"k","name":"n\u003c","email":"e"}`))
	f.Add([]byte(`{"key":"k","name":"n","email":"e"} `))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, ok := parseEntry(b)
		if !ok {
			return
		}
		var j cacheEntry
		if err := json.Unmarshal(b, &j); err != nil || j != e {
			t.Fatalf("parseEntry(%q) = %+v; json.Unmarshal: %+v, %v", b, e, j, err)
		}
	})
}
