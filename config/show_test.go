package config

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/policy"
)

// load applies a config file's settings on the defaults, as Resolve does.
func load(t *testing.T, doc []byte) policy.Policy {
	t.Helper()
	f, err := Parse("/show.toml", doc, ExplicitConfig, Source{Kind: FromFile, File: "/show.toml"})
	if err != nil {
		t.Fatalf("show output does not load: %v\n%s", err, doc)
	}
	p := policy.Default()
	for _, s := range f.Settings {
		if err := s.Option.Set(&p, s.Value); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// show -> load gives the same policy, for every option set away from its
// default and for awkward strings.
func TestShowRoundTrip(t *testing.T) {
	full := policy.Default()
	for i := range policy.Options {
		o := &policy.Options[i]
		if o.Name == "workspace" || o.Example == "" && o.Kind != policy.Bool {
			continue
		}
		v := o.Example
		if o.Kind == policy.Bool {
			v = "true"
		}
		if err := o.Set(&full, v); err != nil {
			t.Fatalf("%s: %v", o.Name, err)
		}
	}
	odd := policy.Default()
	odd.SetEnv = []string{`Q="quoted" \ back`, "TAB=\t", "NL=a\nb", "DEL=\x7f", "U=é ☃", "EMPTY="}
	odd.Deny = []string{`**/*.[ch]`, "# not a comment"}
	odd.Timeout = 90*time.Minute + 1500*time.Millisecond
	odd.CPUs = 0.25
	odd.Memory = 1536 << 20
	odd.Net = policy.NetHost
	for name, p := range map[string]policy.Policy{"defaults": policy.Default(), "every option": full, "odd values": odd} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Show(&b, &p, []string{"workspace: /x"}); err != nil {
				t.Fatal(err)
			}
			got := load(t, b.Bytes())
			if !reflect.DeepEqual(got, p) {
				t.Errorf("round trip differs:\n got %+v\nwant %+v\n%s", got, p, b.String())
			}
		})
	}
}

func TestShowLayout(t *testing.T) {
	p := policy.Default()
	p.Memory = 2 << 30
	p.Write = []string{"~/a"}
	var b bytes.Buffer
	if err := Show(&b, &p, nil); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"\nmemory = \"2G\"\n", "\nwrite = [\"~/a\"]\n", "\n# pids = 1024\n", "\n# Limits\n", "# memory limit, no swap beyond it\n", "# net = \"\"  # default: none; allow when an allow rule is given\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "x-landlock-max-abi") {
		t.Error("show lists a hidden testing option at its default")
	}
}
