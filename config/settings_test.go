package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// settingsOf maps a settings document and returns option=value lines, the
// notes and the sources.
func settingsOf(t *testing.T, w *world, path, doc string) ([]string, []string, *File) {
	t.Helper()
	w.write(path, doc)
	f, err := ParseSettings(path, []byte(doc), w.env)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range f.Settings {
		got = append(got, s.Option.Name+"="+s.Value)
	}
	return got, f.Notes, f
}

// sandbox-runtime's README "Complete Configuration Example" (at 05014ea):
// every key maps or is reported, one line each.
func TestSettingsSRTReadmeExample(t *testing.T) {
	w := newWorld(t)
	for _, d := range []string{"src", "test"} {
		os.MkdirAll(filepath.Join(w.ws, d), 0o755)
	}
	path := filepath.Join(w.home, ".srt-settings.json")
	got, notes, f := settingsOf(t, w, path, `{
  "network": {
    "allowedDomains": [
      "github.com",
      "*.github.com",
      "lfs.github.com",
      "api.github.com",
      "registry.test",
      "*.registry.test"
    ],
    "deniedDomains": ["malicious.com"],
    "allowUnixSockets": ["/var/run/docker.sock"],
    "allowLocalBinding": false
  },
  "filesystem": {
    "denyRead": ["~/.ssh"],
    "allowRead": [],
    "allowWrite": [".", "src/", "test/", "/tmp"],
    "denyWrite": [".env", "config/production.json"]
  },
  "ignoreViolations": {
    "*": ["/usr/bin", "/System"],
    "git push": ["/usr/bin/nc"],
    "npm": ["/private/tmp"]
  },
  "enableWeakerNestedSandbox": false,
  "enableWeakerNetworkIsolation": false,
  "allowAppleEvents": false
}`)
	want := []string{
		"allow-domain=github.com", "allow-domain=*.github.com", "allow-domain=lfs.github.com", "allow-domain=api.github.com",
		"allow-domain=registry.test", "allow-domain=*.registry.test", "deny-domain=malicious.com", "no-local-tcp=true", // allowLocalBinding: false
		"deny=~/.ssh", "write=" + filepath.Join(w.ws, "src"), "write=" + filepath.Join(w.ws, "test"), "write=/tmp",
		"deny=" + filepath.Join(w.ws, ".env"), "deny=" + filepath.Join(w.ws, "config/production.json"),
	}
	if !slices.Equal(got, want) {
		t.Errorf("mapped\n got %v\nwant %v", got, want)
	}
	joined := strings.Join(notes, "\n")
	for _, n := range []string{
		path + ":12: network.allowUnixSockets: no jail equivalent",
		path + ":19: filesystem.denyWrite: \".env\": jail has no write-only denial",
		path + ":21: ignoreViolations: no jail equivalent",
	} {
		if !strings.Contains(joined, n) {
			t.Errorf("notes lack %q:\n%s", n, joined)
		}
	}
	for _, n := range notes {
		if strings.Contains(n, "\n") || strings.Contains(n, "enableWeaker") || strings.Contains(n, "allowAppleEvents") {
			t.Errorf("bad note (false keys are not missed): %q", n)
		}
	}
	if s := f.Settings[1].Source; s.Kind != FromSettings || s.Line != 5 || s.Key != "network.allowedDomains" || s.Raw != "*.github.com" {
		t.Errorf("source %+v", s)
	}
}

// srt writes nowhere unless allowWrite says so: without "." the workspace is
// read-only. A denyRead of the home directory is jail's default already.
func TestSettingsSRTReadOnlyAndHome(t *testing.T) {
	w := newWorld(t)
	got, notes, _ := settingsOf(t, w, filepath.Join(w.home, "s.json"), `{"network": {"allowedDomains": [], "deniedDomains": ["*"]},
 "filesystem": {
  "denyRead": ["~/", "`+filepath.Dir(w.home)+`", "~/.aws"],
  "allowRead": ["."],
  "allowWrite": ["/nonexistent/x", "build/**"], "denyWrite": []}}`)
	want := []string{"deny=~/.aws", "read=" + w.ws, "read-only=true"}
	if !slices.Equal(got, want) {
		t.Errorf("mapped\n got %v\nwant %v", got, want)
	}
	joined := strings.Join(notes, "\n")
	for _, n := range []string{`"*": jail refuses every name`, `"~/": jail hides the home directory anyway`, `"/nonexistent/x": no such file; skipped`, `"build/**": jail makes whole paths`, "the workspace is read-only"} {
		if !strings.Contains(joined, n) {
			t.Errorf("notes lack %q:\n%s", n, joined)
		}
	}
}

// Claude Code's settings.json: the sandbox block with Claude's path
// prefixes, WebFetch domains from permissions, Claude-only keys reported.
func TestSettingsClaudeCode(t *testing.T) {
	w := newWorld(t)
	settingsDir := filepath.Join(w.ws, ".claude")
	os.MkdirAll(filepath.Join(settingsDir, "out"), 0o755)
	os.MkdirAll(filepath.Join(w.home, ".kube"), 0o755)
	path := filepath.Join(settingsDir, "settings.json")
	got, notes, _ := settingsOf(t, w, path, `{
  "model": "x",
  "permissions": {"allow": ["WebFetch(domain:docs.example.com)", "Bash(npm test)"]},
  "sandbox": {
    "enabled": true,
    "autoAllowBashIfSandboxed": true,
    "excludedCommands": ["docker *"],
    "filesystem": {
      "allowWrite": ["//tmp", "~/.kube", "/out", "./"],
      "denyRead": ["~/.aws/credentials"],
      "denyWrite": []
    },
    "network": {
      "allowedDomains": ["github.com", "*.registry.test"],
      "allowLocalBinding": true,
      "httpProxyPort": 8080
    },
    "someFutureKey": 1
  }
}`)
	want := []string{"write=/tmp", "write=~/.kube", "write=" + filepath.Join(settingsDir, "out"), "deny=~/.aws/credentials",
		"allow-domain=github.com", "allow-domain=*.registry.test", "allow-local-tcp=true", "allow-domain=docs.example.com"}
	if !slices.Equal(got, want) {
		t.Errorf("mapped\n got %v\nwant %v", got, want)
	}
	joined := strings.Join(notes, "\n")
	for _, n := range []string{
		path + ":6: sandbox.autoAllowBashIfSandboxed: no jail equivalent",
		path + ":7: sandbox.excludedCommands: no jail equivalent (jail runs no command outside the sandbox)",
		path + ":16: sandbox.network.httpProxyPort: no jail equivalent",
		path + ":18: sandbox.someFutureKey: unknown key",
	} {
		if !strings.Contains(joined, n) {
			t.Errorf("notes lack %q:\n%s", n, joined)
		}
	}
	if strings.Contains(joined, "model") || strings.Contains(joined, "read-only") {
		t.Errorf("Claude's own keys reported, or the workspace made read-only:\n%s", joined)
	}
}

// "/x" in Claude settings is relative to the settings file; when only the
// absolute path exists, jail says how to write it.
func TestSettingsClaudeSlashPrefix(t *testing.T) {
	w := newWorld(t)
	abs := filepath.Join(w.home, "cache")
	os.MkdirAll(abs, 0o755)
	path := filepath.Join(w.home, ".claude", "settings.json")
	got, notes, _ := settingsOf(t, w, path, `{"sandbox": {"filesystem": {"allowWrite": ["`+abs+`"]}}}`)
	if len(got) != 0 || !strings.Contains(strings.Join(notes, "\n"), `for the absolute path write "/`+abs+`"`) {
		t.Errorf("got %v notes %v", got, notes)
	}
}

func TestSettingsErrors(t *testing.T) {
	w := newWorld(t)
	for doc, want := range map[string]string{
		`[1]`:                                  "not a JSON object",
		`{"foo": 1}`:                           "neither sandbox-runtime settings",
		`{"sandbox": []}`:                      "want an object",
		`{"network": {"allowedDomains": "x"}}`: "want a list of strings",
		"{\n\"network\": {\"allowedDomains\": [1]}}": ":2: network.allowedDomains: want a list",
		`{"network": {"allowLocalBinding": "y"}}`:    "want true or false",
		"{\"network\": {\n,}}":                       ":2: ",
	} {
		path := filepath.Join(w.home, "bad.json")
		w.write(path, doc)
		_, err := ParseSettings(path, []byte(doc), w.env)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), path) {
			t.Errorf("%s: %v, want %q", doc, err, want)
		}
	}
}

func FuzzParseSettings(f *testing.F) {
	for _, s := range []string{`{"network": {"allowedDomains": ["a.com"]}}`, `{"sandbox": {"filesystem": {"denyRead": ["//x"]}}}`, `{"filesystem": {"allowWrite": ["."]}, "x": [1, {"y": null}]}`} {
		f.Add(s)
	}
	env := Env{Cwd: "/nonexistent/ws", Home: "/nonexistent/home"}
	f.Fuzz(func(t *testing.T, doc string) {
		fl, err := ParseSettings("/s.json", []byte(doc), env)
		if err != nil {
			return
		}
		for _, s := range fl.Settings {
			if s.Option == nil || s.Source.Kind != FromSettings {
				t.Fatalf("bad setting %+v", s)
			}
		}
		for _, n := range fl.Notes {
			if strings.Contains(n, "\n") && !strings.Contains(doc, "\n") {
				t.Fatalf("note spans lines: %q", n)
			}
		}
	})
}
