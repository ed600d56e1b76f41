package audit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestPreparedStartSameLine: a start event whose policy was prepared
// ahead (Prepare) marshals to the very bytes the plain policy gives, for
// policies of every shape the supervisor hands over (a json.RawMessage,
// as the redactor returns when it has nothing to redact; a decoded tree
// when it has) and for strings that imitate the splice's own keys, and
// the fast path is the one taken.
func TestPreparedStartSameLine(t *testing.T) {
	tricky := []string{`,"policy":0,"kernel":`, `"policy":0`, `<script>&amp;</script>`, "\u2028\u2029", `\"`, "é\x00"}
	policies := map[string]any{
		"raw":                                   json.RawMessage(`{"policy": {"read": ["/a", "<b>&"]}, "plan": {"Env": ["X"], "kernel": 1},` + "\n" + ` "cgroup": null}`),
		"raw with the hole's bytes in a string": json.RawMessage(`{"s":"` + `,\"policy\":0,\"kernel\":` + `"}`),
		"tree":                                  map[string]any{"policy": map[string]any{"x": []any{"<>", 1.5, nil, true}}, "z": "\u2028", "a": tricky},
		"struct":                                struct{ A, B string }{"<", `,"policy":0,"kernel":`},
		"nil":                                   nil,
		"string":                                `,"policy":0,"kernel":`,
	}
	for name, pol := range policies {
		for _, notes := range [][]string{nil, tricky} {
			s := Start{Schema: SchemaVersion, Version: "v", ID: "id", Argv: tricky, Command: tricky, Cwd: tricky[0],
				UID: 1, GID: 2, PID: 3, Policy: pol, Kernel: Kernel{Release: tricky[2], NetworkMode: tricky[0]}, Notes: notes}
			want := marshalFields(s)
			p := Prepare(pol)
			if _, ok := marshalStart(s, p); !ok {
				t.Errorf("%s: the prepared policy was not spliced in", name)
			}
			s.Policy = p
			if got := marshalFields(s); !bytes.Equal(got, want) {
				t.Errorf("%s, notes %v:\n got %s\nwant %s", name, notes != nil, got, want)
			}
		}
	}
}

// TestPrepareMarshalledSameLine: json.Marshal's bytes taken as they are
// (PrepareMarshalled) give the start event the line Prepare of the value,
// and of the bytes as a json.RawMessage, gives: for values whose
// marshalling escapes (HTML, U+2028, invalid UTF-8, control bytes) and
// holds the splice's own keys in strings.
func TestPrepareMarshalledSameLine(t *testing.T) {
	tricky := []string{`,"policy":0,"kernel":`, `"policy":0`, `<script>&amp;</script>`, "\u2028\u2029", `\"`, "é\x00\xff\n\t"}
	values := map[string]any{
		"tree":   map[string]any{"policy": map[string]any{"x": []any{"<>", 1.5, nil, true}}, "z": "\u2028", "a": tricky},
		"struct": struct{ A, B string }{"<", `,"policy":0,"kernel":`},
		"nil":    nil,
		"string": tricky[5],
	}
	for name, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		s := Start{Schema: SchemaVersion, ID: "id", Argv: tricky, Kernel: Kernel{Release: tricky[2]}}
		s.Policy = v
		want := marshalFields(s)
		for how, p := range map[string]Prepared{"the value": Prepare(v), "the bytes, raw": Prepare(json.RawMessage(b)), "marshalled": PrepareMarshalled(b)} {
			s.Policy = p
			if got := marshalFields(s); !bytes.Equal(got, want) {
				t.Errorf("%s, %s:\n got %s\nwant %s", name, how, got, want)
			}
		}
	}
	if got := marshalFields(Start{Policy: PrepareMarshalled(nil)}); !bytes.Equal(got, marshalFields(Start{Policy: json.RawMessage(nil)})) {
		t.Errorf("nil bytes: %s", got)
	}
}

// TestPreparedErrorAsBefore: a policy that does not marshal gives the
// marshal error the plain one gives, and a Prepared value elsewhere than
// the start event's policy marshals as its value.
func TestPreparedErrorAsBefore(t *testing.T) {
	bad := map[string]any{"c": make(chan int)}
	s := Start{Policy: bad}
	want := marshalFields(s)
	if !strings.Contains(string(want), "marshal_error") {
		t.Fatalf("the plain policy marshalled: %s", want)
	}
	s.Policy = Prepare(bad)
	if got := marshalFields(s); !bytes.Equal(got, want) {
		t.Errorf("got %s, want %s", got, want)
	}
	v := map[string]any{"k": "<v>"}
	want = marshalFields(map[string]any{"x": v})
	if got := marshalFields(map[string]any{"x": Prepare(v)}); !bytes.Equal(got, want) {
		t.Errorf("elsewhere: got %s, want %s", got, want)
	}
}

// BenchmarkStartEvent: the start event's marshalling as recordStart does
// it, with the policy plain (as before) and prepared.
func BenchmarkStartEvent(b *testing.B) {
	big := json.RawMessage(`{"policy":{"read":[` + strings.Repeat(`"/usr/share/some/path",`, 1000) + `"/x"]}}`)
	s := Start{Argv: []string{"jail", "--", "true"}, Policy: big}
	b.Run("plain", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			marshalFields(s)
		}
	})
	p := s
	p.Policy = Prepare(big)
	b.Run("prepared", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			marshalFields(p)
		}
	})
}
