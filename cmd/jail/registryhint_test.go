package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/config"
	"github.com/jail-sandbox/jail/policy"
)

// The end's question is answered from the profiles the run does not apply
// whose registries name one of the tools that ran, with the hosts the
// host's configuration of each tool names; a net the user set to none or
// host has nothing to say.
func TestRegistryHints(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	// npm is asked on the host (npm config get registry globalconfig): a
	// stand-in on the PATH names the registry.
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	npm := "#!/bin/sh\nprintf 'registry=https://reg.npm.test/\\nglobalconfig=/nonexistent/npmrc\\n'\n"
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte(npm), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	environ := []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state")}
	env := config.Env{ConfigDir: filepath.Join(dir, "config"), Home: home, Cwd: home}
	hints := func(given string, applied []string, tools ...string) []policy.ProfileHint {
		res := &config.Result{}
		res.Policy.Net = given
		p := res.Policy
		p.Profile = applied
		f := registryHints(p, res, env, environ)
		if f == nil {
			return nil
		}
		return f(tools)
	}
	names := func(hs []policy.ProfileHint) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.Profile+":"+h.Tool)
		}
		return out
	}
	h := hints("", nil, "npm")
	if !slices.Equal(names(h), []string{"node:npm", "opencode:npm"}) {
		t.Fatalf("npm: %+v", h)
	}
	for _, x := range h {
		if !slices.Equal(x.Domains, []string{"reg.npm.test:443"}) {
			t.Errorf("%s: domains %q", x.Profile, x.Domains)
		}
	}
	if !h[0].Caches {
		t.Errorf("node keeps caches of its own: %+v", h[0])
	}
	if h := hints("", []string{"node"}, "npm"); !slices.Equal(names(h), []string{"opencode:npm"}) {
		t.Errorf("node applied: %+v", h)
	}
	if h := hints("allow", nil, "git"); h != nil {
		t.Errorf("no tool of a profile's: %+v", h)
	}
	for _, given := range []string{policy.NetNone, policy.NetHost} {
		if h := hints(given, nil, "npm"); h != nil {
			t.Errorf("net %s: %+v", given, h)
		}
	}
}

// A tool that does not answer is given up well before a start's 10 s: the
// run's end waits hintTimeout for it, and names no profile.
func TestRegistryHintsTimeout(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "npm"), []byte("#!/bin/sh\nsleep 20\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":/usr/bin:/bin")
	environ := []string{"PATH=" + dir + ":/usr/bin:/bin", "HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state")}
	res := &config.Result{}
	f := registryHints(res.Policy, res, config.Env{ConfigDir: filepath.Join(dir, "config"), Home: home, Cwd: home}, environ)
	start := time.Now()
	h := f([]string{"npm"})
	if took := time.Since(start); took < hintTimeout || took > hintTimeout+2*time.Second {
		t.Errorf("took %v, want about %v", took, hintTimeout)
	}
	if h != nil {
		t.Errorf("a tool that did not answer: %+v", h)
	}
}
