//go:build linux

package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// home makes a private HOME (and XDG dirs) for one test: jail reads its
// config from there, never from the real home of whoever runs the tests.
type homeDir struct {
	dir, cfg string
	env      []string
}

func newHome(t *testing.T) homeDir {
	t.Helper()
	d := workspace(t)
	h := homeDir{dir: d, cfg: filepath.Join(d, ".config", "jail")}
	if err := os.MkdirAll(h.cfg, 0o755); err != nil {
		t.Fatal(err)
	}
	h.env = []string{"HOME=" + d, "XDG_CONFIG_HOME=" + filepath.Join(d, ".config"), "XDG_STATE_HOME=" + filepath.Join(d, ".local", "state")}
	return h
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	writeMode(t, path, content, 0o644)
}

// writeExec writes an executable file (a stand-in program), making its
// directories.
func writeExec(t *testing.T, path, content string) {
	t.Helper()
	writeMode(t, path, content, 0o755)
}

func writeMode(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func oneLine(t *testing.T, r result, want ...string) {
	t.Helper()
	mustCode(t, r, 125)
	line := strings.TrimSpace(r.stderr)
	if strings.Contains(line, "\n") || r.stdout != "" {
		t.Fatalf("want one line on stderr, got\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(line, w) {
			t.Errorf("%q lacks %q", line, w)
		}
	}
}

// The user's config file changes a run; a flag overrides it; a mistake in
// it names the file, line and key.
func TestConfigFileChangesRun(t *testing.T) {
	h := newHome(t)
	writeFile(t, filepath.Join(h.cfg, "config.toml"), "# mine\nhostname = \"from-config\"\nsetenv = [\"FROM_CONFIG=1\"]\n")
	o := runOpts{env: h.env}
	r := sh(t, o, `echo "$(hostname) $FROM_CONFIG"`)
	mustCode(t, r, 0)
	if strings.TrimSpace(r.stdout) != "from-config 1" {
		t.Fatalf("config file not applied: %q\n%s", r.stdout, r.stderr)
	}
	r = sh(t, o, `hostname`, "--hostname", "from-flag")
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "from-flag" {
		t.Fatalf("flag does not override the file: %q", r.stdout)
	}
	writeFile(t, filepath.Join(h.cfg, "config.toml"), "hostname = \"x\"\n\nmemroy = \"1G\"\n")
	oneLine(t, sh(t, o, "true"), filepath.Join(h.cfg, "config.toml")+":3: memroy: unknown key; did you mean memory?")
	writeFile(t, filepath.Join(h.cfg, "config.toml"), "timeout = \"10\"\n")
	oneLine(t, sh(t, o, "true"), "config.toml:1: timeout: \"10\": add a unit")
	// A value that is wrong only together with another names both sources.
	writeFile(t, filepath.Join(h.cfg, "config.toml"), "net = \"none\"\n")
	oneLine(t, sh(t, o, "true", "--allow-domain", "example.com"), `net "none" (`+filepath.Join(h.cfg, "config.toml")+`:1) conflicts with --allow-domain example.com`)
}

// A project's .jail.toml is refused until trusted, used once trusted, and
// refused again once the sandboxed command has edited it.
func TestProjectFileTrust(t *testing.T) {
	h := newHome(t)
	ws := workspace(t)
	proj := filepath.Join(ws, ".jail.toml")
	writeFile(t, proj, "setenv = [\"FROM_PROJECT=yes\"]\n")
	o := runOpts{env: h.env, dir: ws}
	oneLine(t, sh(t, o, "true"), proj+" is not trusted", "jail trust "+proj)
	mustCode(t, run(t, o, "trust", "--yes"), 0)
	r := sh(t, o, `echo "$FROM_PROJECT"`)
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "yes" {
		t.Fatalf("trusted project file not applied: %q %s", r.stdout, r.stderr)
	}
	// The agent widens its next sandbox through the project file.
	mustCode(t, sh(t, o, `printf 'net = "host"\n' >> .jail.toml`), 0)
	oneLine(t, sh(t, o, "true"), proj+" changed since you trusted it", "jail trust "+proj+" again")
	// Without the project file the run goes on.
	r = sh(t, o, `echo "[$FROM_PROJECT]"`, "--no-project-file")
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "[]" {
		t.Fatalf("--no-project-file: %q", r.stdout)
	}
	r = run(t, o, "trust", "--list")
	if mustCode(t, r, 0); !strings.Contains(r.stdout, "changed") || !strings.Contains(r.stdout, proj) {
		t.Fatalf("trust --list: %q", r.stdout)
	}
}

// A trusted project file the sandboxed command deletes does not take its
// restrictions with it: the next run is refused until the user restores the
// file or revokes its trust, as for a changed file (review14b). Seen failing
// on main's binary (ad705ff): after the agent's rm .jail.toml, the next run
// started without the file's deny and read secret.txt.
func TestProjectFileDeleted(t *testing.T) {
	h := newHome(t)
	ws := workspace(t)
	proj := filepath.Join(ws, ".jail.toml")
	writeFile(t, proj, "deny = [\"secret.txt\"]\n")
	writeFile(t, filepath.Join(ws, "secret.txt"), "s3cret\n")
	o := runOpts{env: h.env, dir: ws}
	mustCode(t, run(t, o, "trust", "--yes"), 0)
	r := sh(t, o, `cat secret.txt 2>/dev/null || echo DENIED`)
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "DENIED" {
		t.Fatalf("trusted project file not applied: %q %s", r.stdout, r.stderr)
	}
	// The agent removes the project's restrictions for the next run.
	mustCode(t, sh(t, o, `rm -f .jail.toml`), 0)
	if _, err := os.Stat(proj); err == nil {
		t.Fatalf("the sandbox could not remove .jail.toml: the test checks nothing")
	}
	oneLine(t, sh(t, o, "cat secret.txt"), proj+" was trusted but is gone", "jail trust --revoke "+proj)
	// Said how to go on: without the file, or after revoking its trust.
	r = sh(t, o, `echo ok`, "--no-project-file")
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "ok" {
		t.Fatalf("--no-project-file: %q", r.stdout)
	}
	mustCode(t, run(t, o, "trust", "--revoke", proj), 0)
	r = sh(t, o, `echo ok`)
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "ok" {
		t.Fatalf("after --revoke: %q %s", r.stdout, r.stderr)
	}
}

// jail trust on a project file the agent wrote: jail's error quotes the
// file's key, which must reach the user's terminal inert. The refusal to
// start tells the user to run jail trust, whose parse error printed the
// agent's bytes as they were: an OSC 52 in a key wrote the user's
// clipboard (review14b). Seen failing on main's binary (ad705ff): stderr
// held ESC ] 52 ... BEL.
func TestTrustErrorEscapesAgentBytes(t *testing.T) {
	h := newHome(t)
	ws := workspace(t)
	o := runOpts{env: h.env, dir: ws}
	// Written from inside, as an agent would.
	mustCode(t, sh(t, o, `printf '"\\u001b]52;c;aGVsbG8=\\u0007" = 1\n' > .jail.toml; printf '"k\\u202e\\u009b21t" = 1\n' > c.toml`), 0)
	for _, args := range [][]string{{"trust", "--yes"}, {"--config", "c.toml", "--no-project-file", "--", "true"}} {
		r := run(t, o, args...)
		if r.code != 125 || !strings.Contains(r.stderr, "jail: ") {
			t.Fatalf("jail %v: exit %d, want 125 and an error\n%s", args, r.code, r.stderr)
		}
		if strings.ContainsAny(r.stderr, "\x1b\x07\u009b\u202e") {
			t.Errorf("jail %v: the agent's control characters reached stderr as they are: %q", args, r.stderr)
		}
	}
}

// jail's own config directory is out of the sandbox's reach even when the
// directory holding it is writable: nothing inside can read the config,
// trust its own project file or leave a config for the next run.
func TestConfigDirHiddenInside(t *testing.T) {
	for _, existing := range []bool{true, false} {
		h := newHome(t)
		if existing {
			writeFile(t, filepath.Join(h.cfg, "config.toml"), "hostname = \"mine\"\n")
			writeFile(t, filepath.Join(h.cfg, "trust.json"), "{\"version\": 1, \"files\": {}}\n")
		} else {
			os.RemoveAll(h.cfg)
		}
		o := runOpts{env: h.env}
		r := sh(t, o, `cat ~/.config/jail/config.toml 2>/dev/null && echo READ
printf 'hostname = "agent"\n' > ~/.config/jail/config.toml 2>/dev/null && echo WROTE
mkdir -p ~/.config/jail/profiles 2>/dev/null && echo x > ~/.config/jail/profiles/evil.toml 2>/dev/null && echo PROFILE
echo '{}' > ~/.config/jail/trust.json 2>/dev/null && echo TRUST
touch ~/.config/other-tool-config && echo OTHER`, "-w", filepath.Join(h.dir, ".config"))
		mustCode(t, r, 0)
		if out := r.stdout; strings.Contains(out, "READ") || strings.Contains(out, "WROTE") || strings.Contains(out, "PROFILE") || strings.Contains(out, "TRUST") || !strings.Contains(out, "OTHER") {
			t.Fatalf("existing=%v: jail's config dir reachable inside:\n%s\n%s", existing, out, r.stderr)
		}
		if b, _ := os.ReadFile(filepath.Join(h.cfg, "config.toml")); strings.Contains(string(b), "agent") {
			t.Fatalf("existing=%v: the sandbox rewrote the config file", existing)
		}
		if _, err := os.Stat(filepath.Join(h.cfg, "profiles", "evil.toml")); err == nil {
			t.Fatalf("existing=%v: the sandbox planted a profile", existing)
		}
	}
	// $XDG_CONFIG_HOME elsewhere, inside a writable tree: hidden by path.
	h := newHome(t)
	other := filepath.Join(h.dir, "dotfiles")
	writeFile(t, filepath.Join(other, "jail", "config.toml"), "hostname = \"mine\"\n")
	env := append(append([]string{}, h.env...), "XDG_CONFIG_HOME="+other)
	r := sh(t, runOpts{env: env}, `hostname; cat `+filepath.Join(other, "jail", "config.toml")+` 2>/dev/null && echo READ; echo x > `+filepath.Join(other, "jail", "config.toml")+` 2>/dev/null && echo WROTE; true`, "-w", other)
	mustCode(t, r, 0)
	if strings.Contains(r.stdout, "READ") || strings.Contains(r.stdout, "WROTE") || !strings.HasPrefix(r.stdout, "mine\n") {
		t.Fatalf("XDG_CONFIG_HOME elsewhere: %q\n%s", r.stdout, r.stderr)
	}
}

// jail's own config directory stays hidden under --no-default-deny, as its
// state and runtime directories do: that flag lifts the protections of the
// user's files, not of jail's own, and a config, profile or trust record the
// agent writes would weaken every later run (review14b). Seen failing on
// main's binary (ad705ff): the agent wrote config.toml, a profile and
// trust.json through -w ~/.config.
func TestConfigDirHiddenWithoutDefaultDeny(t *testing.T) {
	h := newHome(t)
	writeFile(t, filepath.Join(h.cfg, "config.toml"), "hostname = \"mine\"\n")
	o := runOpts{env: h.env}
	r := sh(t, o, `cat ~/.config/jail/config.toml 2>/dev/null && echo READ
printf 'write = ["/"]\n' > ~/.config/jail/config.toml 2>/dev/null && echo WROTE
mkdir -p ~/.config/jail/profiles 2>/dev/null && echo x > ~/.config/jail/profiles/evil.toml 2>/dev/null && echo PROFILE
echo '{}' > ~/.config/jail/trust.json 2>/dev/null && echo TRUST
touch ~/.config/other-tool-config && echo OTHER`, "--no-default-deny", "-w", filepath.Join(h.dir, ".config"))
	mustCode(t, r, 0)
	if out := r.stdout; strings.Contains(out, "READ") || strings.Contains(out, "WROTE") || strings.Contains(out, "PROFILE") || strings.Contains(out, "TRUST") || !strings.Contains(out, "OTHER") {
		t.Fatalf("--no-default-deny: jail's config dir reachable inside:\n%s\n%s", out, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(h.cfg, "config.toml")); !strings.Contains(string(b), "mine") {
		t.Fatalf("--no-default-deny: the sandbox rewrote the config file: %q", b)
	}
	for _, name := range []string{"profiles/evil.toml", "trust.json"} {
		if _, err := os.Stat(filepath.Join(h.cfg, name)); err == nil {
			t.Fatalf("--no-default-deny: the sandbox planted %s", name)
		}
	}
	// Naming it is refused, as the state directory is: the sandbox never
	// sees it.
	r = sh(t, o, `true`, "--no-default-deny", "-w", h.cfg)
	if r.code != 125 || !strings.Contains(r.stderr, "config directory") {
		t.Fatalf("-w of jail's config directory: code %d\n%s", r.code, r.stderr)
	}
}

// --settings: sandbox-runtime's JSON changes the run, and what jail cannot
// honour is said, one line each.
func TestSettingsFile(t *testing.T) {
	h := newHome(t)
	ws := workspace(t)
	writeFile(t, filepath.Join(ws, "secret.txt"), "s3cret")
	writeFile(t, filepath.Join(ws, "ok.txt"), "fine")
	settings := filepath.Join(h.dir, "srt.json")
	writeFile(t, settings, `{
  "network": {"allowedDomains": [], "deniedDomains": [], "allowUnixSockets": ["/var/run/docker.sock"]},
  "filesystem": {"denyRead": ["secret.txt"], "allowWrite": ["."], "denyWrite": []}
}`)
	r := sh(t, runOpts{env: h.env, dir: ws}, `cat ok.txt; cat secret.txt 2>/dev/null || echo DENIED`, "--settings", settings)
	mustCode(t, r, 0)
	if r.stdout != "fineDENIED\n" {
		t.Fatalf("settings not applied: %q\n%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, settings+":2: network.allowUnixSockets: no jail equivalent") {
		t.Fatalf("unmapped key not reported:\n%s", r.stderr)
	}
}

// Profiles: a user profile creates what its tool needs and opens it; the
// built-in review profile makes the workspace read-only; profiles compose.
func TestProfiles(t *testing.T) {
	h := newHome(t)
	writeFile(t, filepath.Join(h.cfg, "profiles", "demo.toml"), `description = "a demo tool"
extends = ["review"]
write = ["~/.demo", "~/.demo.json"]
[why]
"~/.demo" = "demo state"
"~/.demo.json" = "demo settings"
[[create]]
path = "~/.demo"
dir = true
[[create]]
path = "~/.demo.json"
content = "{}\n"
`)
	ws := workspace(t)
	o := runOpts{env: h.env, dir: ws}
	r := sh(t, o, `cat ~/.demo.json; echo ok > ~/.demo/state && echo STATE; touch x 2>/dev/null || echo WS-READONLY`, "--profile", "demo")
	mustCode(t, r, 0)
	if r.stdout != "{}\nSTATE\nWS-READONLY\n" {
		t.Fatalf("profile not applied: %q\n%s", r.stdout, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(h.dir, ".demo", "state")); err != nil || string(b) != "ok\n" {
		t.Fatalf("state did not persist on the host: %q %v", b, err)
	}
	if !strings.Contains(r.stderr, "created ~/.demo.json (profile demo") {
		t.Errorf("creation not reported:\n%s", r.stderr)
	}
	r = run(t, o, "profiles", "show", "demo")
	mustCode(t, r, 0)
	for _, w := range []string{"review:", "demo: a demo tool", "--write ~/.demo", "--read-only", "why         ~/.demo: demo state", "together: jail"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("profiles show lacks %q:\n%s", w, r.stdout)
		}
	}
	r = run(t, o, "profiles")
	if mustCode(t, r, 0); !strings.Contains(r.stdout, "demo") || !strings.Contains(r.stdout, "review") {
		t.Errorf("profiles:\n%s", r.stdout)
	}
	oneLine(t, sh(t, o, "true", "--profile", "nope"), "--profile nope: no such profile")
}

// A profile's settings key was accepted and never read: a denyRead the user
// put in a settings file named there did not apply, nothing said. The start
// refuses in one line naming where settings files go.
func TestProfileSettingsKeyRefused(t *testing.T) {
	h := newHome(t)
	ws := workspace(t)
	secret := filepath.Join(ws, "secret.txt")
	writeFile(t, secret, "SECRET\n")
	settings := filepath.Join(h.dir, "srt.json")
	writeFile(t, settings, `{"filesystem": {"allowWrite": ["."], "denyRead": ["`+secret+`"]}}`)
	writeFile(t, filepath.Join(h.cfg, "profiles", "mine.toml"), "description = \"mine\"\nsettings = [\""+settings+"\"]\n")
	o := runOpts{env: h.env, dir: ws}
	r := sh(t, o, "cat secret.txt", "--profile", "mine")
	if strings.Contains(r.stdout, "SECRET") {
		t.Errorf("the profile's settings file was ignored: its denyRead did not apply")
	}
	oneLine(t, r, "mine", "settings", "cannot name settings files", "--settings FILE")
}

// config show prints what the layers amount to; loading it back gives the
// same output.
func TestConfigShowRoundTrip(t *testing.T) {
	h := newHome(t)
	writeFile(t, filepath.Join(h.cfg, "config.toml"), "memory = \"2G\"\nwrite = [\"/tmp\"]\n")
	o := runOpts{env: h.env}
	r := run(t, o, "config", "show", "--timeout", "5m", "--allow-domain", "example.com", "--profile", "review")
	mustCode(t, r, 0)
	saved := filepath.Join(h.dir, "saved.toml")
	writeFile(t, saved, r.stdout)
	os.Remove(filepath.Join(h.cfg, "config.toml"))
	r2 := run(t, o, "config", "show", "--config", saved)
	mustCode(t, r2, 0)
	body := func(s string) string {
		var keep []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.HasPrefix(l, "# read:") && !strings.HasPrefix(l, "# workspace:") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if body(r.stdout) != body(r2.stdout) {
		t.Fatalf("config show does not round-trip:\n%s\n---\n%s", r.stdout, r2.stdout)
	}
	for _, w := range []string{"memory = \"2G\"", "timeout = \"5m\"", "allow-domain = [\"example.com\"]", "read-only = true"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("config show lacks %q", w)
		}
	}
}

// jail trust, run in a subfolder of a git work tree, trusts the .jail.toml
// the run reads: the one at the top level, which is the workspace there.
func TestProjectFileTrustFromSubfolder(t *testing.T) {
	h := newHome(t)
	ws := workspace(t)
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	proj := filepath.Join(ws, ".jail.toml")
	writeFile(t, proj, "setenv = [\"FROM_PROJECT=yes\"]\n")
	sub := filepath.Join(ws, "sub")
	os.MkdirAll(sub, 0o777)
	o := runOpts{env: h.env, dir: sub}
	oneLine(t, sh(t, o, "true"), proj+" is not trusted", "jail trust "+proj)
	r := run(t, o, "trust", "--yes")
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout+r.stderr, proj) {
		t.Fatalf("jail trust in a subfolder did not name %s: %q %q", proj, r.stdout, r.stderr)
	}
	r = sh(t, o, `echo "$FROM_PROJECT"`)
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "yes" {
		t.Fatalf("project file trusted from a subfolder not applied: %q %s", r.stdout, r.stderr)
	}
}

// A .git the sandboxed command makes in a subfolder of a project whose
// trusted .jail.toml denies something narrows the workspace of the next run
// started in that subfolder: that run gets the project's file, its deny
// anchored at the project (trustsub), rather than starting without it
// (before trustfollow) or being refused (main, a34609b: "is trusted for").
// So do the honest narrower workspaces: a submodule of the project and a
// subdirectory of a project that is no repository. Seen failing on main's
// binary (a34609b), as root and as jailtest: each run below was refused.
func TestProjectFileAboveNarrowedWorkspace(t *testing.T) {
	h := newHome(t)
	ws := workspace(t)
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	proj := filepath.Join(ws, ".jail.toml")
	writeFile(t, proj, "deny = [\"sub/secret.txt\"]\n")
	sub := filepath.Join(ws, "sub")
	writeFile(t, filepath.Join(sub, "secret.txt"), "s3cret\n")
	o := runOpts{env: h.env, dir: sub}
	mustCode(t, run(t, o, "trust", "--yes"), 0)
	denied := func(what string, o runOpts, extra ...string) {
		t.Helper()
		r := sh(t, o, `cat secret.txt 2>/dev/null || echo DENIED; touch written`, extra...)
		if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "DENIED" {
			t.Fatalf("%s: the project's deny not applied: %q %s", what, r.stdout, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(o.dir, "written")); err != nil {
			t.Fatalf("%s: the workspace not writable: %v %s", what, err, r.stderr)
		}
		os.Remove(filepath.Join(o.dir, "written"))
	}
	denied("from the subfolder", o)
	// The agent makes sub/ a work tree of its own.
	mustCode(t, sh(t, o, `mkdir -p .git && echo 'ref: refs/heads/main' > .git/HEAD`), 0)
	if _, err := os.Stat(filepath.Join(sub, ".git", "HEAD")); err != nil {
		t.Fatalf("the sandbox could not make sub/.git/HEAD: the test checks nothing (%v)", err)
	}
	denied("planted .git", o)
	r := sh(t, o, `cat secret.txt 2>/dev/null || echo DENIED`, "--dry-run")
	if !strings.Contains(r.stdout+r.stderr, proj+" applies") {
		t.Fatalf("--dry-run does not say the project's file applies: %q %q", r.stdout, r.stderr)
	}
	// A submodule: sub/.git a file naming the superproject's modules dir.
	os.RemoveAll(filepath.Join(sub, ".git"))
	mod := filepath.Join(ws, ".git", "modules", "sub")
	os.MkdirAll(filepath.Dir(mod), 0o755)
	if out, err := exec.Command("git", "init", "-q", "--separate-git-dir", mod, sub).CombinedOutput(); err != nil {
		t.Fatalf("git init submodule: %v %s", err, out)
	}
	denied("submodule", o)
	// No repository at all: the subfolder is the workspace.
	os.Remove(filepath.Join(sub, ".git"))
	os.RemoveAll(filepath.Join(ws, ".git"))
	denied("no repository", o)
	// The ways on: the project's workspace, or without it.
	denied("--workspace the project", o, "--workspace", ws)
	r = sh(t, o, `cat secret.txt`, "--no-project-file")
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "s3cret" {
		t.Fatalf("--no-project-file: %q %s", r.stdout, r.stderr)
	}
	// The subfolder replaced by a symlink to a place the agent can write
	// outside the project (a -w path): the resolved workspace leaves the
	// project, the path the user cd'd through ($PWD) does not: refused.
	other := workspace(t)
	mustCode(t, sh(t, runOpts{env: h.env, dir: ws}, `mv sub sub.old && mkdir -p `+other+`/x && ln -s `+other+`/x sub`, "--write", other, "--no-project-file"), 0)
	if l, err := os.Readlink(sub); err != nil || l != other+"/x" {
		t.Fatalf("the sandbox could not replace sub with a link: the test checks nothing (%q %v)", l, err)
	}
	oneLine(t, sh(t, runOpts{env: append(append([]string{}, h.env...), "PWD="+sub), dir: sub}, "true"), proj+" is trusted for "+ws, "--no-project-file")
}

// jail trust says what it trusted, from the bytes it hashed: a line the
// sandboxed command added after the user read the file shows in its output,
// escaped (trustfollow). Seen failing on main's binary (7c2873e): its output
// was the path and hash only.
func TestTrustShowsWhatItTrusts(t *testing.T) {
	h := newHome(t)
	ws := workspace(t)
	proj := filepath.Join(ws, ".jail.toml")
	writeFile(t, proj, "memory = \"2G\"\n")
	o := runOpts{env: h.env, dir: ws}
	// The user has read the file; a command in a sandbox still running
	// adds to it before the user runs jail trust.
	mustCode(t, sh(t, o, `printf '%s\n' 'net = "host"' 'hostname = "a\u001b]0;x\u0007"' >> .jail.toml`, "--no-project-file"), 0)
	r := run(t, o, "trust", "--yes")
	mustCode(t, r, 0)
	for _, w := range []string{proj, "it sets:", `line 1: memory = "2G"`, `line 2: net = "host"`, `line 3: hostname = "a\u001b]0;x\u0007"`} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("jail trust output lacks %q:\n%s", w, r.stdout)
		}
	}
	if strings.ContainsAny(r.stdout, "\x1b\x07") {
		t.Errorf("a control reached the terminal: %q", r.stdout)
	}
}

// The other way round: a nested work tree with a trusted .jail.toml of its
// own (deny secret.txt) inside a work tree with a trusted .jail.toml that
// does not deny it. A run there empties sub/.git (HEAD is the workspace's
// file): the next run from sub/ keeps sub/ as its workspace with its file
// (trustsub), as does a run in a trusted subdirectory only ever run with
// --workspace. The workspace line is said once. Seen failing on main's binary (1450a8d) before review14f:
// the run from sub/ read secret.txt; on a34609b: refused ("is trusted for").
func TestProjectFileInsideWidenedWorkspace(t *testing.T) {
	h := newHome(t)
	ws := workspace(t)
	sub := filepath.Join(ws, "sub")
	for _, d := range []string{ws, sub} {
		if out, err := exec.Command("git", "init", "-q", d).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
	}
	writeFile(t, filepath.Join(ws, ".jail.toml"), "memory = \"2G\"\n")
	inner := filepath.Join(sub, ".jail.toml")
	writeFile(t, inner, "deny = [\"secret.txt\"]\n")
	writeFile(t, filepath.Join(sub, "secret.txt"), "s3cret\n")
	writeFile(t, filepath.Join(ws, "outer.txt"), "")
	mustCode(t, run(t, runOpts{env: h.env, dir: ws}, "trust", "--yes"), 0)
	o := runOpts{env: h.env, dir: sub}
	mustCode(t, run(t, o, "trust", "--yes"), 0)
	r := sh(t, o, `cat secret.txt 2>/dev/null || echo DENIED; rm -f .git/HEAD`)
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "DENIED" {
		t.Fatalf("the inner project's file not applied: %q %s", r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(sub, ".git", "HEAD")); err == nil {
		t.Fatal("the sandbox could not remove sub/.git/HEAD: the test checks nothing")
	}
	innerRun := func(what string) {
		t.Helper()
		r := sh(t, o, `cat secret.txt 2>/dev/null || echo DENIED; echo WIDE 2>/dev/null >../outer.txt; true`)
		if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "DENIED" {
			t.Fatalf("%s: the run from sub/ lost sub's deny: %q %s", what, r.stdout, r.stderr)
		}
		if b, _ := os.ReadFile(filepath.Join(ws, "outer.txt")); len(b) != 0 {
			t.Fatalf("%s: the run from sub/ widened to the enclosing work tree: %q %s", what, b, r.stderr)
		}
		// Said once: the readers' notes reached the plan's notes too and
		// were printed from both (seen twice on e4c1d18's binary).
		if n := strings.Count(r.stderr, "the trusted project holding the current directory"); what == "emptied .git" && n != 1 {
			t.Fatalf("%s: the workspace line said %d times: %s", what, n, r.stderr)
		}
	}
	innerRun("emptied .git")
	// Never a work tree of its own (run with --workspace only).
	os.RemoveAll(filepath.Join(sub, ".git"))
	innerRun("never a work tree")
	// The ways on: the inner project (its deny applies), or the outer.
	r = sh(t, o, `cat secret.txt 2>/dev/null || echo DENIED`, "--workspace", sub)
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "DENIED" {
		t.Fatalf("--workspace the inner project: %q %s", r.stdout, r.stderr)
	}
	r = sh(t, o, `echo x >../outer.txt && echo ok`, "--workspace", ws)
	mustCode(t, r, 0)
	if b, _ := os.ReadFile(filepath.Join(ws, "outer.txt")); string(b) != "x\n" {
		t.Fatalf("--workspace the outer project: %q %q %s", b, r.stdout, r.stderr)
	}
	r = sh(t, runOpts{env: h.env, dir: ws}, `echo ok`)
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "ok" {
		t.Fatalf("a run from the enclosing project: %q %s", r.stdout, r.stderr)
	}
}

// config show with a project file jail will not read yet (seen: it
// failed as a run does, so the command a user reaches for to look before
// trusting showed nothing): the rest is shown, the file's line says why
// it was left out and how to trust it, and a run still stops.
func TestConfigShowUntrustedProject(t *testing.T) {
	h := newHome(t)
	writeFile(t, filepath.Join(h.cfg, "config.toml"), "memory = \"2G\"\n")
	ws := workspace(t)
	pf := filepath.Join(ws, ".jail.toml")
	writeFile(t, pf, "timeout = \"5m\"\n")
	o := runOpts{env: h.env, dir: ws}
	r := run(t, o, "config", "show")
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout, "memory = \"2G\"") || strings.Contains(r.stdout, "timeout = \"5m\"") {
		t.Errorf("config show: the user's file should apply, the untrusted one not:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "# not read: "+pf+" is not trusted: read it, then run jail trust "+pf) {
		t.Errorf("config show does not say the project file was left out:\n%s", r.stdout)
	}
	r = sh(t, o, "true")
	if r.code != 125 || !strings.Contains(r.stderr, pf+" is not trusted") {
		t.Errorf("a run with the untrusted file: exit %d\n%s", r.code, r.stderr)
	}
}
