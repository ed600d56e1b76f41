package sandbox

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/policy"
)

// TestStartPolicyRawEqualsTree: without values to redact, the start
// event's policy is the encoded bytes as they are; decoded, they are the
// same JSON value the decode-redact-encode path gives (a real plan of
// this host, with --setenv values too short to search for, whose names
// stay and values go).
func TestStartPolicyRawEqualsTree(t *testing.T) {
	f := newFixture(t)
	p := f.policy(func(p *policy.Policy) { p.SetEnv = []string{"ON=1"} })
	plan, err := BuildPlan(p, f.env)
	if err != nil {
		t.Fatal(err)
	}
	x := newRedactor(p, plan.Env)
	if len(x.vals) != 0 {
		t.Fatalf("the test needs a policy with nothing to redact: %v", x.vals)
	}
	raw, ok := x.startPolicy(p, plan, map[string]any{"mode": "v1", "limits": []int{1, 2}}).(json.RawMessage)
	if !ok {
		t.Fatal("start policy without secrets is not the encoded bytes")
	}
	var got any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := x.tree(raw) // the path with values to redact, on the same bytes
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("raw and tree differ:\n%v\n%v", got, want)
	}
	if b, _ := json.Marshal(raw); string(b) == "" || !json.Valid(b) {
		t.Fatalf("the raw policy does not encode: %s", b)
	}
	for _, s := range []string{`"ON"`, `"PATH"`} {
		if !json.Valid(raw) || !strings.Contains(string(raw), s) {
			t.Errorf("start policy lost the name %s", s)
		}
	}
	if strings.Contains(string(raw), "ON=1") {
		t.Errorf("start policy carries the value of ON: %s", raw)
	}
}
