package seccomp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadPolicyFile(t *testing.T) {
	for _, f := range []string{"testdata/extend-tighten.json", "testdata/deny-keyctl.json", "testdata/full.json"} {
		if _, err := LoadPolicyFile(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	dir := t.TempDir()
	cases := []struct {
		name, body, mention string
	}{
		{"yaml", "default_action: allow\n", "only JSON"},
		{"empty", "", "not a JSON object"},
		{"unknown field", `{"default_action":"allow","syscalls":[{"names":["read"],"action":"errno"}],"x":1}`, "unknown field"},
		{"bad default", `{"default_action":"maybe","syscalls":[{"names":["read"],"action":"errno"}]}`, "default_action"},
		{"no groups", `{"default_action":"allow","syscalls":[]}`, "syscalls"},
		{"bad action", `{"default_action":"allow","syscalls":[{"names":["read"],"action":"nope"}]}`, "syscalls[0].action"},
		{"trace", `{"default_action":"allow","syscalls":[{"names":["read"],"action":"trace"}]}`, "trace"},
		{"unknown syscall", `{"default_action":"allow","syscalls":[{"names":["read"],"action":"errno"},{"names":["write","mount2"],"action":"errno"}]}`, `syscalls[1].names[1] "mount2"`},
		{"duplicate", `{"default_action":"allow","syscalls":[{"names":["read","read"],"action":"errno"}]}`, "listed twice"},
		{"empty group", `{"default_action":"allow","syscalls":[{"action":"errno"}]}`, "neither names"},
		{"bad position", `{"default_action":"allow","syscalls":[{"names_with_args":[{"name":"socket","arguments":[{"position":6,"operation":"Equal","value":1}]}],"action":"errno"}]}`, "position must be 0..5"},
		{"missing position", `{"default_action":"allow","syscalls":[{"names_with_args":[{"name":"socket","arguments":[{"operation":"Equal","value":1}]}],"action":"errno"}]}`, "position"},
		{"bad op", `{"default_action":"allow","syscalls":[{"names_with_args":[{"name":"socket","arguments":[{"position":0,"operation":"Like","value":1}]}],"action":"errno"}]}`, "arguments[0]"},
		{"no args", `{"default_action":"allow","syscalls":[{"names_with_args":[{"name":"socket","arguments":[]}],"action":"errno"}]}`, "arguments must not be empty"},
		{"both", `{"default_action":"allow","syscalls":[{"names":["socket"],"names_with_args":[{"name":"socket","arguments":[{"position":0,"operation":"Equal","value":1}]}],"action":"errno"}]}`, "socket"},
		{"trailing", `{"default_action":"allow","syscalls":[{"names":["read"],"action":"errno"}]} {}`, "trailing"},
	}
	for _, c := range cases {
		p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".json")
		if err := os.WriteFile(p, []byte(c.body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadPolicyFile(p)
		if !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("%s: err %v, want ErrInvalidPolicy", c.name, err)
			continue
		}
		if !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: error %q should name the file and %q", c.name, err, c.mention)
		}
	}
	_, err := LoadPolicyFile(filepath.Join(dir, "missing.json"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// FuzzParsePolicy: no input panics; anything accepted assembles.
func FuzzParsePolicy(f *testing.F) {
	for _, name := range []string{"testdata/extend-tighten.json", "testdata/deny-keyctl.json", "testdata/full.json"} {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"default_action":"errno","syscalls":[{"names":["read"],"action":"allow"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parsePolicy("fuzz.json", data)
		if err != nil {
			if !errors.Is(err, ErrInvalidPolicy) && !errors.Is(err, ErrUnsupportedArch) {
				t.Fatalf("error not wrapping ErrInvalidPolicy: %v", err)
			}
			return
		}
		if _, err := p.Assemble(); err != nil {
			t.Fatalf("accepted policy does not assemble: %v", err)
		}
	})
}
