package policy

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// The table is the one source: every user-settable Policy field has exactly
// one option (so every flag has a config key of the same name), and every
// option is well formed.
func TestOptionsTable(t *testing.T) {
	names, shorts := map[string]bool{}, map[string]bool{}
	var p Policy
	owner := map[uintptr]string{}
	for i := range Options {
		o := &Options[i]
		if o.Name == "" || strings.ToLower(o.Name) != o.Name || strings.ContainsAny(o.Name, " _=") || names[o.Name] {
			t.Errorf("option %d: bad or duplicate name %q", i, o.Name)
		}
		names[o.Name] = true
		if o.Short != "" {
			if len(o.Short) != 1 || shorts[o.Short] {
				t.Errorf("%s: bad or duplicate short %q", o.Name, o.Short)
			}
			shorts[o.Short] = true
		}
		if !slices.Contains(Groups, o.Group) {
			t.Errorf("%s: group %q not in Groups", o.Name, o.Group)
		}
		if o.Help == "" || strings.HasSuffix(o.Help, ".") || strings.Contains(o.Help, "\n") {
			t.Errorf("%s: help %q: want one line without a final period", o.Name, o.Help)
		}
		if (o.Kind == Bool) != (o.Placeholder == "") {
			t.Errorf("%s: a placeholder for every value, none for a bool (got %q)", o.Name, o.Placeholder)
		}
		if o.Kind == Enum && len(o.Values) == 0 || len(o.Values) > 0 && o.Kind != Enum && o.Kind != List {
			t.Errorf("%s: Values are for enums and lists", o.Name)
		}
		if o.Default != "" && o.DefaultText != "" {
			t.Errorf("%s: a Default or a DefaultText, not both", o.Name)
		}
		ptr := reflect.ValueOf(o.field(&p))
		wantType := map[Kind][]reflect.Type{
			Bool: {reflect.TypeFor[*bool]()}, String: {reflect.TypeFor[*string]()}, Enum: {reflect.TypeFor[*string]()},
			List: {reflect.TypeFor[*[]string]()}, Size: {reflect.TypeFor[*int64]()}, Duration: {reflect.TypeFor[*time.Duration]()},
			Int: {reflect.TypeFor[*int64](), reflect.TypeFor[*int]()}, Uint: {reflect.TypeFor[*uint64]()}, Float: {reflect.TypeFor[*float64]()},
		}[o.Kind]
		if !slices.Contains(wantType, ptr.Type()) {
			t.Errorf("%s: kind %d but field %s", o.Name, o.Kind, ptr.Type())
		}
		if prev, dup := owner[ptr.Pointer()]; dup {
			t.Errorf("%s and %s set the same field", prev, o.Name)
		}
		owner[ptr.Pointer()] = o.Name
		if o.Example != "" {
			var q Policy
			if err := o.Set(&q, o.Example); err != nil {
				t.Errorf("%s: example %q does not parse: %v", o.Name, o.Example, err)
			}
			if o.Kind != List && !slices.Equal(o.Format(&q), []string{o.Example}) && o.Kind != Size && o.Kind != Duration {
				t.Errorf("%s: example %q formats as %q", o.Name, o.Example, o.Format(&q))
			}
		}
	}
	// Every field but the command, where it starts (the process's own
	// directory), the readers' notices and profile hints, the profiles'
	// refused names (a profile's [refused], never a flag), the files they
	// read the policy from and a session's name (jail run --name: a verb's
	// flag, never a config key) has an option.
	rv := reflect.ValueOf(&p).Elem()
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Type().Field(i)
		if f.Name == "Command" || f.Name == "Cwd" || f.Name == "WorkspaceFromCwd" || f.Name == "Notices" || f.Name == "ProfileHints" || f.Name == "RegistryHints" || f.Name == "Refused" || f.Name == "Name" || f.Name == "PolicyFiles" || f.Name == "Files" {
			continue
		}
		if _, ok := owner[rv.Field(i).Addr().Pointer()]; !ok {
			t.Errorf("Policy.%s has no option: add it to Options (flag and config key)", f.Name)
		}
	}
}

// Default comes from the table and survives Format -> Set.
func TestDefaultFromTable(t *testing.T) {
	d := Default()
	if d.TmpSize != 1<<30 || d.Pids != 1024 || d.Hostname != "jail" || d.KillGrace != 5*time.Second || d.Net != "" || d.AuditMaxSize != DefaultAuditMaxSize ||
		d.AuditMaxAge != DefaultAuditMaxAge || d.AuditMaxTotal != DefaultAuditMaxTotal {
		t.Fatalf("defaults %+v", d)
	}
	for i := range Options {
		o := &Options[i]
		if !o.IsDefault(&d) {
			t.Errorf("%s: Default() does not hold its default", o.Name)
		}
		var q Policy
		for _, v := range o.Format(&d) {
			if o.Kind == List {
				continue
			}
			if err := o.Set(&q, v); err != nil {
				t.Errorf("%s: default %q does not parse back: %v", o.Name, v, err)
			}
		}
	}
}

// Every kind refuses a bad value with a reason a user can act on, naming the
// option by its key and never by a flag.
func TestOptionSetErrors(t *testing.T) {
	cases := []struct{ key, value, want string }{
		{"timeout", "10", "add a unit, e.g. 10s or 5m"},
		{"timeout", "soon", "not a duration"},
		{"kill-grace", "-5s", "negative"},
		{"cpus", "abc", "not a number, e.g. 0.5"},
		{"cpus", "NaN", "not a number"},
		{"memory", "lots", "e.g. 512M or 2G"},
		{"memory", "99999999T", "too large"},
		{"pids", "many", "not a whole number, e.g. 1024"},
		{"nofile", "-1", "not a whole number"},
		{"net", "bogus", "want none, allow or host"},
		{"read-only", "maybe", "want true or false"},
		{"tmp-size", "", "not a size"},
		{"allow-terminal", "clipboard,bogus", "want clipboard, hyperlinks, notify, colors, cwd or all"},
	}
	for _, c := range cases {
		var p Policy
		err := Lookup(c.key).Set(&p, c.value)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Key != c.key || fe.Value != c.value || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s %q: got %v, want a FieldError", c.key, c.value, err)
			continue
		}
		if !strings.Contains(fe.Reason, c.want) || strings.Contains(err.Error(), "--") || strings.Contains(err.Error(), "strconv") {
			t.Errorf("%s %q: %q, want %q and no flag or parser internals", c.key, c.value, err, c.want)
		}
	}
}

func TestOptionSetValues(t *testing.T) {
	var p Policy
	for _, kv := range [][2]string{
		{"timeout", "1h30m"}, {"timeout", "0"}, {"memory", "1.5G"}, {"cpus", "2"}, {"read-only", "true"},
		{"write", "a"}, {"write", "b"}, {"write", "a"}, {"net", "allow"}, {"nofile", "64"}, {"require-landlock", "3"},
	} {
		if err := Lookup(kv[0]).Set(&p, kv[1]); err != nil {
			t.Fatalf("%s %q: %v", kv[0], kv[1], err)
		}
	}
	if p.Timeout != 0 || p.Memory != 3<<29 || p.CPUs != 2 || !p.ReadOnly || !slices.Equal(p.Write, []string{"a", "b"}) || p.Net != "allow" || p.NoFile != 64 || p.RequireLandlock != 3 {
		t.Fatalf("got %+v", p)
	}
	for d, want := range map[time.Duration]string{0: "0", 90 * time.Minute: "1h30m", time.Hour: "1h", 5 * time.Second: "5s", 2 * time.Minute: "2m", 1500 * time.Millisecond: "1.5s"} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
		if back, err := ParseDuration(want); err != nil || back != d {
			t.Errorf("ParseDuration(%q) = %v, %v", want, back, err)
		}
	}
}

// Any text, any option: an error or a value that formats and parses back
// to itself; never a panic.
func FuzzOptionSet(f *testing.F) {
	for _, s := range []string{"1G", "30m", "0.5", "true", "none", "-1", "1e400", "9999999999T", "1h0m0.5s", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for i := range Options {
			o := &Options[i]
			var p Policy
			if err := o.Set(&p, text); err != nil {
				var fe *FieldError
				if !errors.As(err, &fe) || fe.Key != o.Name {
					t.Fatalf("%s %q: %v is not a FieldError", o.Name, text, err)
				}
				continue
			}
			if o.Kind == List {
				continue
			}
			var q Policy
			if err := o.Set(&q, o.Format(&p)[0]); err != nil || !slices.Equal(o.Format(&q), o.Format(&p)) {
				t.Fatalf("%s %q: formats as %q, which reads back as %q (%v)", o.Name, text, o.Format(&p), o.Format(&q), err)
			}
		}
	})
}

func TestNearest(t *testing.T) {
	names := []string{"memory", "allow-domain", "deny-domain", "cpus"}
	for _, tt := range []struct{ in, want string }{
		{"memroy", "memory"},
		{"allow-domian", "allow-domain"},
		{"deny-domains", "deny-domain"},
		{"cpu", "cpus"},
		{"zzz", ""},
		{"allow", ""},
		{"", ""},
	} {
		if got := Nearest(tt.in, names); got != tt.want {
			t.Errorf("Nearest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
