package profile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/config"
)

// Every built-in profile loads, says what it is for, and gives a reason for
// each path and domain it opens.
func TestBuiltinProfiles(t *testing.T) {
	entries, err := fs.ReadDir(builtin, "profiles")
	if err != nil || len(entries) == 0 {
		t.Fatalf("no built-in profiles: %v", err)
	}
	var src Source
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".toml")
		f, err := src.Load(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if f.Description == "" {
			t.Errorf("%s: no description", name)
		}
		for _, s := range f.Settings {
			switch s.Option.Name {
			case "write", "read", "allow-domain", "allow-ip", "allow-host-port", "publish", "env":
				if f.Why[s.Value] == "" {
					t.Errorf("%s: %s %s has no [why] line", name, s.Option.Name, s.Value)
				}
			case "cache":
				// A profile's cache is its own: named after the profile.
				if f.Why[s.Source.Raw] == "" {
					t.Errorf("%s: cache %s has no [why] line", name, s.Source.Raw)
				}
				if !strings.HasPrefix(s.Value, name+":") {
					t.Errorf("%s: cache %q is not named after the profile", name, s.Value)
				}
			case "runnable":
				// Keyed by the option too: a program's name is often a
				// registry tool's (cargo).
				if f.Why["runnable "+s.Value] == "" {
					t.Errorf("%s: runnable %s has no [why] line (\"runnable %s\")", name, s.Value, s.Value)
				}
			case "host-caches", "no-default-deny", "net", "allow-git-config", "no-guard-rails", "no-exec-audit":
				// A built-in profile never weakens a default beyond its grants.
				t.Errorf("%s: sets %s", name, s.Option.Name)
			case "setenv":
				if f.Why[s.Value] == "" {
					t.Errorf("%s: setenv %s has no [why] line", name, s.Value)
				}
				if strings.Contains(strings.ToUpper(s.Value), "KEY=") || strings.Contains(strings.ToUpper(s.Value), "TOKEN=") {
					t.Errorf("%s: sets a secret-looking variable %q: name it with env instead", name, s.Value)
				}
			}
		}
		if _, err := config.ProfileChain(src, []string{name}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestUserProfiles(t *testing.T) {
	dir := t.TempDir()
	src := Source{Dir: dir}
	write := func(name, doc string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("review.toml", "description = \"mine\"\nread-only = false\n")
	write("mine.toml", "description = \"my own\"\nextends = [\"review\"]\n")
	write("broken.toml", "nope = 1\n")
	write("README.md", "not a profile")
	f, err := src.Load("review")
	if err != nil || f.Description != "mine" || f.Path != filepath.Join(dir, "review.toml") {
		t.Fatalf("user profile does not shadow the built-in one: %+v %v", f, err)
	}
	list, err := src.List()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Info{}
	for _, in := range list {
		got[in.Name] = in
	}
	if in := got["review"]; !in.Shadows || in.Description != "mine" {
		t.Errorf("review: %+v", in)
	}
	if in := got["broken"]; in.Err == nil || !strings.Contains(in.Err.Error(), "broken.toml:1: nope: unknown key") {
		t.Errorf("broken: %+v", in)
	}
	if _, ok := got["README"]; ok {
		t.Error("listed a non-profile file")
	}
	for _, bad := range []string{"../etc/passwd", "Upper", "", "a/b"} {
		if _, err := src.Load(bad); err == nil {
			t.Errorf("Load(%q) succeeded", bad)
		}
	}
	if _, err := src.Load("ghost"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "jail profiles lists them") {
		t.Errorf("missing: %v", err)
	}
	chain, err := config.ProfileChain(src, []string{"mine"})
	if err != nil || len(chain) != 2 || chain[0].Description != "mine" || chain[1].Description != "my own" {
		t.Errorf("chain: %v", err)
	}
}
