package audit

import (
	"bytes"
	"encoding/json"
)

// Prepared is a field's value marshalled ahead of its event, by Prepare.
// The start event's policy is most of that event (about 24 KB of JSON):
// marshalling it where the event is recorded cost the supervisor about
// 0.5 ms (encoding/json checks and compacts every byte of an embedded
// json.RawMessage) on its path to the agent's go, where Prepare can do the
// same work earlier, off that path. The line written is byte for byte the
// one the plain value gives.
type Prepared struct {
	b []byte
	v any // the value itself when it did not marshal
}

// Prepare marshals v as it would be marshalled inside an event. A value
// that does not marshal is kept as it is: the event's marshalling then
// meets (and reports) its error as before.
func Prepare(v any) Prepared {
	b, err := json.Marshal(v)
	if err != nil {
		return Prepared{v: v}
	}
	return Prepared{b: b}
}

// PrepareMarshalled is Prepare of a value that b is json.Marshal's own
// output for (compact, valid, HTML-escaped): b is taken as it is. Prepare
// of b as a json.RawMessage would check and compact every byte again for
// the same bytes: 0.4-0.9 ms of the supervisor's CPU for a start event's
// policy of 63 KB (an agent's profile). Anything else, such as JSON read
// from a file, goes through Prepare.
func PrepareMarshalled(b []byte) Prepared {
	if b == nil {
		return Prepare(nil) // as Prepare of a nil RawMessage: null
	}
	return Prepared{b: b}
}

// MarshalJSON implements json.Marshaler: anywhere but the start event's
// policy, a Prepared value is marshalled (and checked) as any value.
func (p Prepared) MarshalJSON() ([]byte, error) {
	if p.b == nil {
		return json.Marshal(p.v)
	}
	return p.b, nil
}

// The start event is marshalled with this in place of its policy, then
// the prepared policy is put in its place. Both keys are the event's
// own, at the top level: inside a JSON string every quote is escaped
// (\"), so these bytes, with their bare quotes, occur nowhere else.
var (
	policyHole = []byte(`,"policy":0,"kernel":`)
	policyKey  = []byte(`,"policy":`)
	kernelKey  = []byte(`,"kernel":`)
)

// marshalStart is json.Marshal of s, whose Policy is p, without the
// second pass over p's bytes. ok is false where it cannot be used (p
// did not marshal, or the hole is not found once): the caller then
// marshals s as it is, with the same result as before.
func marshalStart(s Start, p Prepared) (b []byte, ok bool) {
	if p.b == nil {
		return nil, false
	}
	s.Policy = json.RawMessage("0")
	head, err := marshalEvent(s)
	if err != nil {
		return nil, false
	}
	i := bytes.Index(head, policyHole)
	if i < 0 || bytes.Index(head[i+1:], policyHole) >= 0 {
		return nil, false
	}
	out := make([]byte, 0, len(head)+len(p.b))
	out = append(out, head[:i]...)
	out = append(out, policyKey...)
	out = append(out, p.b...)
	out = append(out, kernelKey...)
	out = append(out, head[i+len(policyHole):]...)
	return out, true
}
