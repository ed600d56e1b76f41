package ns

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// fill sets every exported field reachable from v to a value that is not
// its zero, different from field to field, with bytes that are not UTF-8;
// every slice and map gets two elements.
func fill(t *testing.T, v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d\xff\x00", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n) * -3)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n) * 5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fill(t, v.Index(0), n)
		fill(t, v.Index(1), n)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(t, k, n)
			fill(t, e, n)
			v.SetMapIndex(k, e)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(t, v.Field(i), n)
			}
		}
	default:
		t.Fatalf("fill: no value for a %s: the wire format needs a case for it too", v.Type())
	}
}

// Every field of every protocol type must survive the wire: a field added
// to Message, Spec, Mount, ... without its tag in wire.go fails here.
func TestWireCarriesEveryField(t *testing.T) {
	var m Message
	n := 0
	fill(t, reflect.ValueOf(&m).Elem(), &n)
	back, err := decodeMessage(encodeMessage(m))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, m) {
		t.Errorf("round trip lost something:\n got %+v\nwant %+v\n got spec %+v\nwant spec %+v", back, m, back.Spec, m.Spec)
	}
}

func TestWireRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		msg  Message
	}{
		{"empty", Message{}},
		{"type only", Message{Type: MsgGo}},
		{"negative and large ints", Message{Type: MsgExit, Code: -1, Signal: 1 << 40, Pid: -(1 << 62)}},
		{"empty lists and maps are not nil", Message{Names: []string{}, Info: map[string]string{}, Spec: &Spec{
			Mounts: []Mount{}, Argv: Strings{}, Env: Strings{""}, PtyFDs: []int{}, Rlimits: []Rlimit{},
			UserNSLimits: []UserNSLimit{}, AgentRlimits: []Rlimit{}, Hooks: map[string][]byte{}}}},
		{"nil and empty bytes", Message{Spec: &Spec{Mounts: []Mount{{Data: []byte{}}, {Data: nil}},
			Hooks: map[string][]byte{"a": nil, "b": {}, "": {0}}}}},
		{"zero-valued elements", Message{Spec: &Spec{Mounts: []Mount{{}, {}}, PtyFDs: []int{0, 0, 2},
			Rlimits: []Rlimit{{}}, UserNSLimits: []UserNSLimit{{}}}, Names: []string{"", ""}, Info: map[string]string{"": ""}}},
		{"not utf-8 anywhere", Message{Type: "t\xff", Error: "e\xfe", Text: "\xc0\xaf", Level: "\xed\xa0\x80",
			Names: []string{"\xff"}, Info: map[string]string{"k\xff": "v\xfe"}, Exec: &ExecSpec{Cwd: "/\xff", Argv: Strings{"\x80"}}}},
		{"mount mode at uint32's top", Message{Spec: &Spec{Mounts: []Mount{{Mode: 1<<32 - 1, Size: -1, FD: -1}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := encodeMessage(tt.msg)
			back, err := decodeMessage(b)
			if err != nil {
				t.Fatalf("decode %q: %v", b, err)
			}
			if !reflect.DeepEqual(back, tt.msg) {
				t.Errorf("got %#v, want %#v", back, tt.msg)
			}
		})
	}
}

// The decoder reads init's messages in the supervisor: init runs beside
// the agent, so every payload is refused cleanly, and no count allocates
// more than the bytes left could fill.
func TestWireMalformed(t *testing.T) {
	tests := []struct {
		name, payload, want string
	}{
		{"empty", "", "version byte"},
		{"json", `{"type":"go"}`, "version byte"},
		{"no end", "\x01", "no end"},
		{"trailing bytes", "\x01\x00\x00", "after the message"},
		{"unknown field", "\x01\x7f\x00", "unknown field"},
		{"fields out of order", "\x01\x04\x02\x01\x02go\x00", "field 1 after 4"},
		{"repeated field", "\x01\x01\x02go\x01\x02go\x00", "field 1 after 1"},
		{"string beyond the payload", "\x01\x01\x7fgo\x00", "beyond"},
		{"huge string length", "\x01\x01\xff\xff\xff\xff\xff\xff\xff\xff\x7f", "beyond"},
		{"huge list count", "\x01\x03\xff\xff\xff\xff\x0f\x00", "count"},
		{"huge mount count", "\x01\x02\x01\xff\xff\xff\xff\xff\xff\xff\xff\x7f", "count"},
		{"bad varint", "\x01\x04\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x00", "varint"},
		{"zero int written", "\x01\x04\x00\x00", "zero value"},
		{"empty string written", "\x01\x01\x00\x00", "empty string"},
		{"mode beyond uint32", "\x01\x02\x01\x02\x06\x80\x80\x80\x80\x10\x00\x00\x00", "out of range"},
		{"map keys not ascending", "\x01\x0a\x03\x01b\x00\x01a\x00\x00", "not ascending"},
		{"map key repeated", "\x01\x0a\x03\x01a\x00\x01a\x00\x00", "not ascending"},
		{"exec without end", "\x01\x0d\x01\x02", "no end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := decodeMessage([]byte(tt.payload))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("decode = %+v, %v; want an error containing %q", m, err, tt.want)
			}
			if !reflect.DeepEqual(m, Message{}) {
				t.Errorf("a refused payload gave %+v", m)
			}
		})
	}
}

func wireSeeds() []Message {
	return []Message{
		{Type: MsgGo},
		{Type: MsgExit, Code: 137, Signal: 9},
		{Type: MsgFiles, Names: []string{"pty", "seccomp"}, Info: map[string]string{"landlock.abi": "7", "net.setup_us": "2081"}},
		{Type: MsgExec, ID: 3, Exec: &ExecSpec{ID: 3, Argv: Strings{"sh", "-c", "x"}, Env: Strings{"A=b"}, Cwd: "/ws", Tty: true, Deadline: 123456789012, ReportChild: true}},
		{Type: MsgSpec, Spec: &Spec{
			Mounts:   []Mount{{Kind: KindTmpfs, Path: "/tmp", Dir: true, Size: 1 << 30, Mode: 0o1777, FD: -1}, {Kind: KindFile, Path: "/etc/resolv.conf", Data: []byte("nameserver 10.0.0.1\n"), FD: -1}},
			Hostname: "jail", Cwd: "/ws", LoopbackUp: true, Argv: Strings{"prog"}, Env: Strings{"PATH=/bin"},
			Rlimits: []Rlimit{{Resource: 7, Cur: 1024, Max: 1024}}, UserNSLimits: []UserNSLimit{{Name: "max_user_namespaces", Value: 0}},
			Hooks: map[string][]byte{HookLandlock: []byte(`{"x":1}`)}, PtyFDs: []int{1, 2}, TraceOrigin: 12345,
		}},
	}
}

// FuzzWire: any payload is refused or read; what is read survives its own
// round trip unchanged.
func FuzzWire(f *testing.F) {
	for _, m := range wireSeeds() {
		f.Add(encodeMessage(m))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeMessage(b)
		if err != nil {
			return
		}
		back, err := decodeMessage(encodeMessage(m))
		if err != nil {
			t.Fatalf("re-encoded %+v does not decode: %v", m, err)
		}
		if !reflect.DeepEqual(back, m) {
			t.Fatalf("round trip: got %#v, want %#v", back, m)
		}
	})
}

// FuzzWireMatchesJSON holds the wire format to encoding/json, the format it
// replaced: every Message json reads (from any input) crosses the wire
// unchanged, and means to json what it meant before.
func FuzzWireMatchesJSON(f *testing.F) {
	for _, m := range wireSeeds() {
		b, _ := json.Marshal(m)
		f.Add(b)
	}
	f.Add([]byte(`{"type":"spec","spec":{"mounts":[],"hooks":{"a":null,"b":""},"pty_fds":[0,-1],"argv":null}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Message
		if json.Unmarshal(b, &m) != nil {
			return
		}
		back, err := decodeMessage(encodeMessage(m))
		if err != nil {
			t.Fatalf("%+v does not cross the wire: %v", m, err)
		}
		if !reflect.DeepEqual(back, m) {
			t.Fatalf("wire: got %#v, want %#v", back, m)
		}
		j1, err1 := json.Marshal(m)
		j2, err2 := json.Marshal(back)
		if err1 != nil || err2 != nil || string(j1) != string(j2) {
			t.Fatalf("json of the original and of the wire's copy differ:\n%s (%v)\n%s (%v)", j1, err1, j2, err2)
		}
	})
}

// TestWireStringsShareOneAllocation: the decoded strings of a message are
// substrings of one copy of the payload, not one allocation each (in a
// fresh process each new size class of small objects is a fresh span: a
// page fault at 18-30 µs on a paravirtualized VM, on init's path from the
// spec to the agent). Old decoder: one allocation per string.
func TestWireStringsShareOneAllocation(t *testing.T) {
	var m Message
	m.Type = MsgSpec
	m.Spec = &Spec{}
	for i := range 200 {
		m.Spec.Env = append(m.Spec.Env, fmt.Sprintf("V%d=%s", i, strings.Repeat("x", i)))
	}
	b := encodeMessage(m)
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := decodeMessage(b); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 20 {
		t.Errorf("decoding 200 strings: %.0f allocations, want the strings to share one", allocs)
	}
	back, err := decodeMessage(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, m) {
		t.Errorf("round trip: got %+v", back.Spec.Env[:3])
	}
	// The strings must not alias the caller's buffer (a Recv buffer is
	// reused or freed): changing it changes nothing decoded.
	for i := range b {
		b[i] = 'Z'
	}
	if !reflect.DeepEqual(back, m) {
		t.Error("decoded strings alias the payload buffer")
	}
}
