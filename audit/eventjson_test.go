package audit

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/jail-sandbox/jail/internal/jsongen"
)

var generatedFile = jsongen.File{
	Name: "zjson.go", Package: "audit", Path: "github.com/jail-sandbox/jail/audit", Dir: "./audit",
	Without: "these events are",
	Roots: []jsongen.Root{
		{Name: "jsonStart", Type: reflect.TypeFor[Start]()},
		{Name: "jsonExec", Type: reflect.TypeFor[Exec]()},
		{Name: "jsonExit", Type: reflect.TypeFor[Exit]()},
	},
	Init: "\teventEncoders = &eventEncoding{start: jsonStart, exec: jsonExec, exit: jsonExit}\n", SumVar: "generatedJSON",
}

// Every trail's start, exec and exit events are these encoders' bytes: a
// field added without making the file again would be missing from them.
func TestJSONGenerated(t *testing.T) {
	if err := generatedFile.Check(generatedJSON); err != nil {
		t.Fatal(err)
	}
}

// checkEventsJSON compares the events filled from seed (zero values for
// 0) by the generated encoders with json.Marshal's bytes.
func checkEventsJSON(t *testing.T, seed uint64) {
	t.Helper()
	var s Start
	var e Exec
	var x Exit
	if seed != 0 {
		r := jsongen.Rand(seed)
		for _, v := range []any{&s, &e, &x} {
			jsongen.Fill(r, reflect.ValueOf(v).Elem())
		}
		if seed%3 == 0 {
			s.Policy = json.RawMessage("0") // as marshalStart's head has it
		}
	}
	for _, ev := range []any{s, e, x} {
		want, werr := json.Marshal(ev)
		have, herr := marshalEvent(ev)
		if err := jsongen.Same(have, herr, want, werr); err != nil {
			t.Fatalf("%T, seed %d: %v", ev, seed, err)
		}
	}
}

func TestEventsJSONSameAsMarshal(t *testing.T) {
	if eventEncoders == nil {
		t.Fatal("no generated encoders (zjson.go)")
	}
	for seed := uint64(0); seed < 2000; seed++ {
		checkEventsJSON(t, seed)
	}
}

func FuzzEventsJSON(f *testing.F) {
	for _, s := range []uint64{0, 1, 42} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { checkEventsJSON(t, seed) })
}
