package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jail-sandbox/jail/config"
)

func TestProfileHints(t *testing.T) {
	dir := t.TempDir()
	env := config.Env{ConfigDir: dir}
	h := profileHints(env, []string{"/usr/local/bin/claude", "-p", "hi"}, nil)
	if len(h) != 1 || h[0].Profile != "claude" || !slices.Contains(h[0].Domains, "api.anthropic.com") {
		t.Errorf("claude: %+v", h)
	}
	for _, c := range []struct {
		argv    []string
		applied []string
	}{
		{[]string{"claude"}, []string{"claude"}}, // applied
		{[]string{"ls"}, nil},                    // no such profile
		{[]string{"go", "test"}, nil},            // registries only: no names of its own
		{[]string{"review"}, nil},                // no names at all
		{[]string{"Claude"}, nil},                // not a profile name
		{nil, nil},
	} {
		if h := profileHints(env, c.argv, c.applied); h != nil {
			t.Errorf("%q (applied %q): %+v", c.argv, c.applied, h)
		}
	}
	// The user's profile of that name is the one meant (it shadows the
	// built-in one).
	if err := os.MkdirAll(filepath.Join(dir, "profiles"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "profiles", "claude.toml"), []byte("version = 1\nallow-domain = [\"gw.example.test\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if h := profileHints(env, []string{"claude"}, nil); len(h) != 1 || !slices.Equal(h[0].Domains, []string{"gw.example.test"}) {
		t.Errorf("user's claude profile: %+v", h)
	}
}
