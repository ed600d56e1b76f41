package ns

import (
	"encoding/json"
	"reflect"
	"sort"
	"testing"
)

// structTypes collects every struct type reachable from t through pointers,
// slices, arrays and maps.
func structTypes(t reflect.Type, seen map[reflect.Type]bool) {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		structTypes(t.Elem(), seen)
	case reflect.Map:
		structTypes(t.Key(), seen)
		structTypes(t.Elem(), seen)
	case reflect.Struct:
		if seen[t] {
			return
		}
		seen[t] = true
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).IsExported() {
				structTypes(t.Field(i).Type, seen)
			}
		}
	}
}

// presentTypes collects the struct types of every value present in v: a nil
// pointer, an empty slice or map contributes nothing.
func presentTypes(v reflect.Value, seen map[reflect.Type]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			presentTypes(v.Elem(), seen)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			presentTypes(v.Index(i), seen)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			presentTypes(k, seen)
			presentTypes(v.MapIndex(k), seen)
		}
	case reflect.Struct:
		seen[v.Type()] = true
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				presentTypes(v.Field(i), seen)
			}
		}
	}
}

func names(m map[reflect.Type]bool) []string {
	var out []string
	for t := range m {
		out = append(out, t.String())
	}
	sort.Strings(out)
	return out
}

// The message init encodes and decodes before its spec arrives must meet
// every struct type of the protocol: a type it lacks has its encoding/json
// tables built on the path from the spec to the agent again (2 to 8 ms for
// the spec's types). A new nested type in Message or Spec fails this test
// until warmMessage carries one.
func TestWarmMessageCoversTheProtocol(t *testing.T) {
	want := map[reflect.Type]bool{}
	structTypes(reflect.TypeOf(Message{}), want)
	got := map[reflect.Type]bool{}
	w := warmMessage()
	presentTypes(reflect.ValueOf(w), got)
	if !reflect.DeepEqual(names(got), names(want)) {
		t.Errorf("warmMessage holds %v, the protocol has %v", names(got), names(want))
	}
	// And it survives the round trip it is made for.
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	var back Message
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, w) {
		t.Errorf("round trip: got %+v, want %+v", back, w)
	}
}
