package subid

import (
	"testing"
)

func names(name string) (uint32, bool) {
	switch name {
	case "alice":
		return 1000, true
	case "bob":
		return 1001, true
	}
	return 0, false
}

func TestParse(t *testing.T) {
	data := "alice:100000:65536\n" +
		"# a comment\n\n" +
		"  bob:165536:65536  \n" +
		"1002:231072:10\n" + // a numeric owner
		"nobodyknows:300000:10\n" + // unknown name: skipped
		"alice:400000:0\n" + // empty range
		"alice:4294967295:2\n" + // wraps past the last uid: skipped
		"alice:4294967290:6\n" + // ends at the last uid: kept
		"alice:x:10\n" + "alice:1:2:3\n" + ":1:2\n" + "alice:-1:5\n" + "alice:500000:99999999999\n"
	rs := Parse([]byte(data), names)
	want := Ranges{{1000, 100000, 65536}, {1001, 165536, 65536}, {1002, 231072, 10}, {1000, 4294967290, 6}}
	if len(rs) != len(want) {
		t.Fatalf("ranges %v, want %v", rs, want)
	}
	for i := range want {
		if rs[i] != want[i] {
			t.Errorf("range %d: %v, want %v", i, rs[i], want[i])
		}
	}
	for _, c := range []struct {
		uid, owner uint32
		ok         bool
	}{
		{99999, 0, false}, {100000, 1000, true}, {165535, 1000, true}, {165536, 1001, true},
		{231071, 1001, true}, {231072, 1002, true}, {231081, 1002, true}, {231082, 0, false},
		{4294967295, 1000, true}, {0, 0, false}, {1000, 0, false},
	} {
		if o, ok := rs.Owner(c.uid); o != c.owner || ok != c.ok {
			t.Errorf("Owner(%d) = %d, %v; want %d, %v", c.uid, o, ok, c.owner, c.ok)
		}
	}
	if o, ok := Ranges(nil).Owner(100000); ok || o != 0 {
		t.Errorf("no ranges: Owner = %d, %v", o, ok)
	}
}

// FuzzParse: any text parses without a panic into ranges that hold no
// uid past the last (a wrap would claim root's) and answer Owner for
// their own uids.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"alice:100000:65536\n", "1:4294967295:1", "a:b:c", "bob:0:4294967295\nalice:5:5\n", "#x\n\n:::\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rs := Parse(data, names)
		for i, r := range rs {
			if r.Count == 0 || uint64(r.Start)+uint64(r.Count)-1 > 1<<32-1 {
				t.Fatalf("range %v wraps or is empty", r)
			}
			if i > 0 && rs[i-1].Start > r.Start {
				t.Fatalf("not sorted: %v", rs)
			}
			if _, ok := rs.Owner(r.Start); !ok {
				t.Fatalf("Owner(%d) not found in %v", r.Start, rs)
			}
		}
	})
}
