package sandbox

import (
	"errors"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/jail-sandbox/jail/policy"
)

// Check refuses every bad value before anything starts, with an error a
// reader can attribute: the option's key and the value, never a flag.
func TestCheck(t *testing.T) {
	f := newFixture(t)
	flagSpelling := regexp.MustCompile(`(^|[\s(])--[a-z]`)
	cases := []struct {
		name       string
		mod        func(p *policy.Policy)
		key, value string // "" key: must pass
	}{
		{"defaults", func(p *policy.Policy) {}, "", ""},
		{"missing write path", func(p *policy.Policy) { p.Write = []string{"nope"} }, "write", "nope"},
		{"read-only and the workspace writable", func(p *policy.Policy) { p.ReadOnly = true; p.Write = []string{"."} }, "read-only", ""},
		{"deny glob", func(p *policy.Policy) { p.Deny = []string{"a["} }, "deny", "a["},
		{"write under deny", func(p *policy.Policy) { p.Write = []string{f.ws}; p.Deny = []string{f.ws} }, "workspace", f.ws},
		{"URL as a domain", func(p *policy.Policy) { p.AllowDomain = []string{"https://example.com/"} }, "allow-domain", "https://example.com/"},
		{"second rule bad", func(p *policy.Policy) { p.AllowDomain = []string{"ok.example", "*"} }, "allow-domain", "*"},
		{"bad ip", func(p *policy.Policy) { p.AllowIP = []string{"10.0.0.1/8"} }, "allow-ip", "10.0.0.1/8"},
		{"bad publish", func(p *policy.Policy) { p.Publish = []string{"x:y"} }, "publish", "x:y"},
		{"bad block-command", func(p *policy.Policy) { p.BlockCommand = []string{"("} }, "block-command", "("},
		{"missing seccomp file", func(p *policy.Policy) { p.SeccompFile = filepath.Join(f.ws, "none.json") }, "seccomp", filepath.Join(f.ws, "none.json")},
		{"seccomp-replace alone", func(p *policy.Policy) { p.SeccompReplace = true }, "seccomp-replace", ""},
		{"net none with a rule", func(p *policy.Policy) { p.Net = policy.NetNone; p.AllowIP = []string{"192.0.2.1"} }, "net", "none"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Check(f.policy(c.mod), f.env)
			if c.key == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, policy.ErrInvalid) {
				t.Fatalf("Check = %v, want an ErrInvalid", err)
			}
			key, value := optionOf(err)
			if key != c.key || value != c.value {
				t.Errorf("Check = %v: names %q %q, want %q %q", err, key, value, c.key, c.value)
			}
			if flagSpelling.MatchString(err.Error()) {
				t.Errorf("%q spells a flag", err)
			}
		})
	}
}

// optionOf finds what a reader would: the first option and value named.
func optionOf(err error) (string, string) {
	var ov interface {
		OptionValue() (string, string, string)
	}
	var cf interface {
		Conflict() (string, string, string, string, string)
	}
	if errors.As(err, &cf) {
		k, v, _, _, _ := cf.Conflict()
		return k, v
	}
	if errors.As(err, &ov) {
		k, v, _ := ov.OptionValue()
		return k, v
	}
	return "", ""
}
