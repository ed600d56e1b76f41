package inithooks

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/landlock"
)

// hookCodecs are the hooks' configurations with their wire codecs.
var hookCodecs = []struct {
	name   string
	zero   func() any
	encode func(v any) []byte
	decode func(b []byte) (any, error)
}{
	{"network", func() any { return &NetConfig{} },
		func(v any) []byte { return v.(*NetConfig).Wire() },
		func(b []byte) (any, error) { var c NetConfig; err := c.Unwire(b); return &c, err }},
	{"seccomp", func() any { return &SeccompHook{} },
		func(v any) []byte { return v.(*SeccompHook).Wire() },
		func(b []byte) (any, error) { var h SeccompHook; err := h.Unwire(b); return &h, err }},
	{"landlock", func() any { return &landlock.Rules{} },
		func(v any) []byte { return LandlockWire(*v.(*landlock.Rules)) },
		func(b []byte) (any, error) { var r landlock.Rules; err := LandlockUnwire(b, &r); return &r, err }},
}

// fillFields sets every exported field of the struct v points to, to a value
// that is not its zero (slices get two elements).
func fillFields(t *testing.T, v reflect.Value) {
	n := 0
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		n++
		switch v.Kind() {
		case reflect.String:
			v.SetString(fmt.Sprintf("s%d\xff", n))
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Int, reflect.Int64:
			v.SetInt(int64(-n))
		case reflect.Uint8, reflect.Uint16:
			v.SetUint(uint64(n) + 250)
		case reflect.Slice:
			v.Set(reflect.MakeSlice(v.Type(), 2, 2))
			fill(v.Index(0))
			fill(v.Index(1))
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).IsExported() {
					fill(v.Field(i))
				}
			}
		default:
			t.Fatalf("no value for a %s: its wire codec needs a case too", v.Type())
		}
	}
	fill(v.Elem())
}

// A field added to a hook's configuration without its tag fails here.
func TestHookWireCarriesEveryField(t *testing.T) {
	for _, c := range hookCodecs {
		t.Run(c.name, func(t *testing.T) {
			v := c.zero()
			fillFields(t, reflect.ValueOf(v))
			back, err := c.decode(c.encode(v))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, v) {
				t.Errorf("round trip lost something:\n got %+v\nwant %+v", back, v)
			}
			// And the zero value too.
			zero := c.zero()
			back, err = c.decode(c.encode(zero))
			if err != nil || !reflect.DeepEqual(back, zero) {
				t.Errorf("zero value: got %+v, %v", back, err)
			}
		})
	}
}

// Init refuses a configuration it cannot read (fail closed: the hook's
// error ends the start): JSON, the old format, included.
func TestHookWireRefusesGarbage(t *testing.T) {
	for _, c := range hookCodecs {
		for _, b := range []string{"", `{"deny_tcp":true}`, "\x01", "\x01\x7f\x00", "\x01\x01\xff\x00"} {
			if _, err := c.decode([]byte(b)); err == nil || !strings.Contains(err.Error(), c.name+" configuration") {
				t.Errorf("%s: %q decoded (%v)", c.name, b, err)
			}
		}
	}
}

// FuzzHookWireMatchesJSON holds each hook's wire codec to encoding/json,
// which carried the configurations before: what JSON reads from any input
// crosses the wire unchanged; and no input makes a decoder panic.
func FuzzHookWireMatchesJSON(f *testing.F) {
	f.Add(0, []byte(`{"mode":"none","fake":"198.18.0.0/15","no_proxy":["box"]}`))
	f.Add(1, []byte(`{"exec_notify":true,"extra":"AAE=","extra_name":"f.json","no_inet":true}`))
	f.Add(2, []byte(`{"read_exec":["/","/usr"],"read_write":["/ws"],"deny_tcp":true,"connect_tcp":[80,443],"pin_root":true,"scope":true,"require":3,"max_abi":-1}`))
	f.Add(2, []byte("\x01\x01\x02\x01/\x00"))
	f.Fuzz(func(t *testing.T, which int, b []byte) {
		c := hookCodecs[uint(which)%uint(len(hookCodecs))]
		_, _ = c.decode(b) // must not panic
		v := c.zero()
		if json.Unmarshal(b, v) != nil {
			return
		}
		back, err := c.decode(c.encode(v))
		if err != nil {
			t.Fatalf("%+v does not cross the wire: %v", v, err)
		}
		if !reflect.DeepEqual(back, v) {
			t.Fatalf("got %+v, want %+v", back, v)
		}
	})
}
