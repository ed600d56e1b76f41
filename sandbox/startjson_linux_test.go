package sandbox

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/cgroup"
	"github.com/jail-sandbox/jail/internal/jsongen"
	"github.com/jail-sandbox/jail/policy"
)

var generatedFile = jsongen.File{
	Name: "zjson_linux.go", Package: "sandbox", Path: "github.com/jail-sandbox/jail/sandbox", Dir: "./sandbox",
	Without: "these records are",
	Roots: []jsongen.Root{
		{Name: "jsonStartPolicy", Type: reflect.TypeFor[policy.Policy]()},
		{Name: "jsonStartPlan", Type: reflect.TypeFor[Plan]()},
		{Name: "jsonStartCgroupReport", Type: reflect.TypeFor[cgroup.Report]()},
		{Name: "jsonRunRecord", Type: reflect.TypeFor[runRecord]()},
		{Name: "jsonEntry", Type: reflect.TypeFor[Entry]()},
		{Name: "jsonFarRecord", Type: reflect.TypeFor[farRecord]()},
	},
	Init: "\tstartEncoders = &startEncoding{policy: jsonStartPolicy, plan: jsonStartPlan, cgroup: jsonStartCgroupReport}\n" +
		"\trunRecordEncoder = jsonRunRecord\n" +
		"\tentryEncoder = jsonEntry\n" +
		"\tfarEncoder = jsonFarRecord\n",
	SumVar: "generatedJSON",
}

// The generated encoders are those of the types as they are: a field
// added to the policy or the plan without making the file again would be
// missing from every trail's start event. The file records the sha256 of
// the source it was generated as, compared with the source the types
// give now: CI runs this test binary as jailtest without the sources.
func TestJSONGenerated(t *testing.T) {
	if err := generatedFile.Check(generatedJSON); err != nil {
		t.Fatal(err)
	}
}

// marshalStartReference is what the start event's policy was before the
// generated encoders, and what they must equal.
func marshalStartReference(p policy.Policy, plan *Plan, cg any) ([]byte, error) {
	return json.Marshal(map[string]any{"policy": p, "plan": plan, "cgroup": cg})
}

// startValues are a policy, a plan and a cgroup report filled from seed.
func startValues(seed uint64) (policy.Policy, *Plan, cgroup.Report) {
	r := jsongen.Rand(seed)
	var p policy.Policy
	var plan Plan
	var rep cgroup.Report
	jsongen.Fill(r, reflect.ValueOf(&p).Elem())
	jsongen.Fill(r, reflect.ValueOf(&plan).Elem())
	jsongen.Fill(r, reflect.ValueOf(&rep).Elem())
	return p, &plan, rep
}

// checkStartJSON fails t when marshalStart and json.Marshal disagree on
// the values (their bytes, or whether there is an error).
func checkStartJSON(t *testing.T, p policy.Policy, plan *Plan, cg any) {
	t.Helper()
	want, werr := marshalStartReference(p, plan, cg)
	have, herr := marshalStart(p, plan, cg)
	if err := jsongen.Same(have, herr, want, werr); err != nil {
		t.Fatal(err)
	}
}

// The generated encoders write json.Marshal's bytes: for zero values,
// for a start's real policy and plan, and for thousands of random ones
// (every string escape, float form, nil and empty slice and map).
func TestStartJSONSameAsMarshal(t *testing.T) {
	if startEncoders == nil {
		t.Fatal("no generated encoders (zjson_linux.go)")
	}
	checkStartJSON(t, policy.Policy{}, &Plan{}, cgroup.Report{})
	checkStartJSON(t, policy.Policy{}, nil, cgroup.Report{})
	checkStartJSON(t, policy.Policy{}, &Plan{}, nil)              // not a report: json.Marshal
	checkStartJSON(t, policy.Policy{}, &Plan{}, &cgroup.Report{}) // likewise
	fx := newFixture(t)
	pol := fx.policy(nil)
	plan, err := BuildPlan(pol, fx.env)
	if err != nil {
		t.Fatal(err)
	}
	checkStartJSON(t, *pol, plan, cgroup.Report{Mode: "v1", Enforced: []string{"pids=64(cgroup)"}})
	for seed := uint64(0); seed < 2000; seed++ {
		p, pl, rep := startValues(seed)
		checkStartJSON(t, p, pl, rep)
	}
	// A float JSON has no form for: json.Marshal's error, from either.
	p, pl, rep := startValues(1)
	pl.Landlock = plan.Landlock
	setFirstFloat(reflect.ValueOf(&p).Elem(), math.NaN())
	checkStartJSON(t, p, pl, rep)
}

// setFirstFloat sets the first float field of struct v (if any) to x.
func setFirstFloat(v reflect.Value, x float64) bool {
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.CanSet() && f.Kind() == reflect.Float64 {
			f.SetFloat(x)
			return true
		}
	}
	return false
}

func FuzzStartJSON(f *testing.F) {
	for _, s := range []uint64{0, 1, 42, 1 << 40} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		p, pl, rep := startValues(seed)
		checkStartJSON(t, p, pl, rep)
	})
}

// The run record, the registry entry and the far sockets' record by their
// generated encoders are json.Marshal's bytes (and Encode's newline), for
// zero values and random ones.
func TestRecordsJSONSameAsMarshal(t *testing.T) {
	if runRecordEncoder == nil || entryEncoder == nil || farEncoder == nil {
		t.Fatal("no generated encoders (zjson_linux.go)")
	}
	for seed := uint64(0); seed < 1000; seed++ {
		checkRecordsJSON(t, seed)
	}
}

func FuzzRecordsJSON(f *testing.F) {
	for _, s := range []uint64{0, 1, 42} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { checkRecordsJSON(t, seed) })
}

// checkRecordsJSON compares a run record, an entry and a far sockets'
// record filled from seed (zero values for seed 0) with json.Marshal's.
func checkRecordsJSON(t *testing.T, seed uint64) {
	t.Helper()
	var rec runRecord
	var e Entry
	if seed != 0 {
		r := jsongen.Rand(seed)
		jsongen.Fill(r, reflect.ValueOf(&rec).Elem())
		jsongen.Fill(r, reflect.ValueOf(&e).Elem())
		rec.Started = time.Unix(int64(seed), int64(seed%1000)).UTC()
		e.Started = time.Unix(int64(seed), 0)
	}
	want, werr := json.Marshal(rec)
	have, herr := marshalRunRecord(&rec)
	if err := jsongen.Same(have, herr, append(want, '\n'), werr); err != nil {
		t.Fatalf("run record, seed %d: %v", seed, err)
	}
	want, werr = json.Marshal(e)
	if err := jsongen.Same(marshalEntry(&e), nil, want, werr); err != nil {
		t.Fatalf("entry, seed %d: %v", seed, err)
	}
	if err := jsongen.SameAsMarshal(seed, marshalFar); err != nil {
		t.Fatalf("sockets-far record: %v", err)
	}
}
