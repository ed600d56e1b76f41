//go:build linux

package tests

// `jail -- npm install` (or an agent's npm install under -P claude) was
// refused the registry and told to allow that one name (session 40, trying
// it as a user would): npm then worked, with its cache in the sandbox's
// empty home, gone at the end, where -P node allows every registry npm is
// configured with and keeps a cache of jail's own. Nothing named the
// profile. The end of a run that refused a name and ran a package tool now
// says which toolchain profile allows it, as the host's configuration of
// the tool says (the profile's own way, toolreg): a stand-in npm, outside
// the workspace, names the test's reserved registry when jail asks it on
// the host, and connects to it and to another name inside.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRegistryNamesProfile(t *testing.T) {
	home, ws := workspace(t), workspace(t)
	// The tool where the sandbox sees it and cannot write it.
	tools := besideHome(t, "registryhint-")
	asked := filepath.Join(home, "asked")
	// Asked on the host (npm config get registry globalconfig), the tool
	// leaves a mark and names its registry; inside, it connects. The mark's
	// directory is the home, which the sandbox does not show.
	script := "#!/bin/bash\n" +
		"if [ \"$1\" = config ]; then echo \"$0\" >> " + asked + "; printf 'registry=https://reg.hinted.invalid/\\nglobalconfig=/nonexistent/npmrc\\n'; exit 0; fi\n" +
		"for h in reg.hinted.invalid other.hinted.invalid evil.hinted.invalid; do (exec 3<>/dev/tcp/$h/443) 2>/dev/null; done\nexit 0\n"
	for _, d := range []string{tools, filepath.Join(ws, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "npm"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The workspace's own .npmrc names another host: the agent can write it,
	// so it is not what the profile would allow, and no line names it.
	if err := os.WriteFile(filepath.Join(ws, ".npmrc"), []byte("registry=https://evil.hinted.invalid/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := func(path string) runOpts {
		return runOpts{dir: ws, env: []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
			"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"), "PATH=" + path + ":/usr/bin:/bin"}}
	}
	const hinted = "jail: reg.hinted.invalid:443, refused in this run, is a registry npm is configured with: add --profile node, which allows it and keeps caches of jail's own\n"
	for _, c := range []struct {
		name   string
		path   string
		args   []string
		hinted bool
	}{
		{"the command is the tool", tools, []string{"--", "npm", "install"}, true},
		{"the tool run by the command", tools, []string{"--", "sh", "-c", "npm install"}, true},
		{"beside an agent's profile", tools, []string{"-P", "claude", "--", "sh", "-c", "npm install"}, true},
		{"the profile applied", tools, []string{"-P", "node", "--", "npm", "install"}, false},
		{"no tool ran", tools, []string{"--", "bash", "-c", "(exec 3<>/dev/tcp/reg.hinted.invalid/443) 2>/dev/null; exit 0"}, false},
		{"quiet", tools, []string{"--quiet", "--", "npm", "install"}, false},
		// The only npm on the PATH is one the sandbox can write: its answer
		// would be the agent's, and jail does not run it on the host.
		{"the tool in the workspace", filepath.Join(ws, "bin"), []string{"--", "npm", "install"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(asked)
			r := run(t, env(c.path), c.args...)
			mustCode(t, r, 0)
			if !slices.Contains(c.args, "--quiet") && !strings.Contains(r.stderr, "refused reg.hinted.invalid:443") {
				t.Fatalf("no refusal: the test's tool did not connect\nstderr:\n%s", r.stderr)
			}
			if got := strings.Contains(r.stderr, hinted); got != c.hinted {
				t.Errorf("profile named: %v, want %v\n want %s\nstderr:\n%s", got, c.hinted, hinted, r.stderr)
			}
			if strings.Contains(r.stderr, "other.hinted.invalid:443, refused") || strings.Contains(r.stderr, "evil.hinted.invalid:443, refused") {
				t.Errorf("a name no registry of npm's is named as one\nstderr:\n%s", r.stderr)
			}
			if data, _ := os.ReadFile(asked); strings.Contains(string(data), ws) {
				t.Errorf("the workspace's npm was run on the host: %s", data)
			}
		})
	}
	// In the background (jail run -d, session 49): the supervisor is a
	// process of its own, handed the policy as JSON, and the question
	// (a function) did not reach it: its log said neither the profile
	// nor the flag, only the option's key ("add allow-domain ...").
	t.Run("in the background", func(t *testing.T) {
		out := inBackground(t, env(tools), hinted, "--", "npm", "install")
		if !strings.Contains(out, "refused reg.hinted.invalid:443 - add --allow-domain reg.hinted.invalid\n") {
			t.Errorf("the refusal does not name the flag\nlog:\n%s", out)
		}
		if !strings.Contains(out, hinted) {
			t.Errorf("no profile named\n want %s\nlog:\n%s", hinted, out)
		}
		if strings.Contains(out, "other.hinted.invalid:443, refused") || strings.Contains(out, "evil.hinted.invalid:443, refused") {
			t.Errorf("a name no registry of npm's is named as one\nlog:\n%s", out)
		}
		if data, _ := os.ReadFile(asked); strings.Contains(string(data), ws) {
			t.Errorf("the workspace's npm was run on the host: %s", data)
		}
		// The supervisor's own question trusts no more than the command
		// line's: an npm the sandbox can write is not run on the host.
		os.Remove(asked)
		out = inBackground(t, env(filepath.Join(ws, "bin")), "refused reg.hinted.invalid:443", "--", "npm", "install")
		if !strings.Contains(out, "refused reg.hinted.invalid:443") || strings.Contains(out, hinted) {
			t.Errorf("the workspace's npm: want the refusal and no profile named\nlog:\n%s", out)
		}
		if data, _ := os.ReadFile(asked); strings.Contains(string(data), ws) {
			t.Errorf("the workspace's npm was run on the host: %s", data)
		}
	})
}
