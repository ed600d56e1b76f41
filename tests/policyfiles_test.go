//go:build linux

package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// policyFilesFixture is a workspace holding every kind of file a run's
// policy can be read from: a settings file named by --settings, one named
// by the user's config (settings = [...]), a --config file, a --seccomp
// file, a hard link of the first elsewhere in the workspace and a settings
// file reached through a symlink in the workspace.
type policyFilesFixture struct {
	h                                         homeDir
	ws                                        string
	srt, fromCfg, cfg, sc, hard, link, target string
	flags                                     []string
}

const policyFilesSRT = `{"filesystem": {"allowWrite": ["."]}, "network": {"allowedDomains": []}}`

func newPolicyFilesFixture(t *testing.T) policyFilesFixture {
	t.Helper()
	f := policyFilesFixture{h: newHome(t), ws: workspace(t)}
	f.srt = filepath.Join(f.ws, "srt.json")
	f.fromCfg = filepath.Join(f.ws, "conf", "srt2.json")
	f.cfg = filepath.Join(f.ws, "jail.toml")
	f.sc = filepath.Join(f.ws, "seccomp.json")
	f.hard = filepath.Join(f.ws, "sub", "hard.json")
	f.target = filepath.Join(f.ws, "real", "srt3.json")
	f.link = filepath.Join(f.ws, "srt3.json")
	for _, p := range []string{f.srt, f.fromCfg, f.target} {
		writeFile(t, p, policyFilesSRT)
	}
	writeFile(t, f.cfg, "hostname = \"mine\"\n")
	writeFile(t, f.sc, seccompOffPolicy)
	writeFile(t, filepath.Join(f.h.cfg, "config.toml"), "settings = [\""+f.fromCfg+"\"]\n")
	if err := os.MkdirAll(filepath.Dir(f.hard), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(f.srt, f.hard); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real/srt3.json", f.link); err != nil {
		t.Fatal(err)
	}
	f.flags = []string{"--settings", f.srt, "--settings", f.link, "--config", f.cfg, "--seccomp", f.sc}
	return f
}

// policyFilesAttack is the agent's script: rewrite every policy file
// (widening writes and domains), through each of its names, and replace
// the symlink with a file of its own.
const policyFilesAttack = `evil='{"filesystem": {"allowWrite": [".", "~/Documents"]}, "network": {"allowedDomains": ["evil.example.com"]}}'
for f in srt.json conf/srt2.json sub/hard.json real/srt3.json; do
  printf '%s' "$evil" > "$f" 2>/dev/null && echo "WROTE $f"
  mv "$f" "$f.old" 2>/dev/null && printf '%s' "$evil" > "$f" && echo "REPLACED $f"
done
printf 'write = ["~"]\n' >> jail.toml 2>/dev/null && echo "WROTE jail.toml"
printf '{"default_action": "allow"}' > seccomp.json 2>/dev/null && echo "WROTE seccomp.json"
rm -f srt3.json && printf '%s' "$evil" > srt3.json && echo "RELINKED srt3.json"
true`

// check says what of the fixture the agent changed on the host.
func (f policyFilesFixture) changed(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, p := range []string{f.srt, f.fromCfg, f.hard, f.target} {
		if b, err := os.ReadFile(p); err != nil || string(b) != policyFilesSRT {
			out = append(out, p)
		}
	}
	if b, _ := os.ReadFile(f.cfg); string(b) != "hostname = \"mine\"\n" {
		out = append(out, f.cfg)
	}
	if b, _ := os.ReadFile(f.sc); string(b) != seccompOffPolicy {
		out = append(out, f.sc)
	}
	if l, err := os.Readlink(f.link); err != nil || l != "real/srt3.json" {
		out = append(out, f.link)
	}
	return out
}

// The files a run's policy was read from (--settings, settings = [...] in
// the user's config, --config, --seccomp) are read again by the next run:
// when they lie in a tree the sandbox can write, the agent must not change
// them. review17b: a sandbox-runtime settings file in the workspace that
// the agent rewrote (allowWrite ["~/Documents"], allowedDomains) widened
// the next run, nothing said. Seen failing on main's binary (a493adb):
// every file rewritten, the symlink replaced, exit 0 and no word.
func TestPolicyFilesReadOnly(t *testing.T) {
	f := newPolicyFilesFixture(t)
	r := sh(t, runOpts{env: f.h.env, dir: f.ws}, policyFilesAttack, f.flags...)
	mustCode(t, r, 0)
	if strings.Contains(r.stdout, "WROTE") || strings.Contains(r.stdout, "REPLACED") {
		t.Errorf("the agent wrote a policy file inside:\n%s", r.stdout)
	}
	if ch := f.changed(t); len(ch) > 0 {
		t.Fatalf("policy files changed on the host after the run: %q\nstdout: %s\nstderr: %s", ch, r.stdout, r.stderr)
	}
	// Said at the start, in one line naming their number and the first
	// few; --dry-run lists each file and what named it.
	if !strings.Contains(r.stderr, "jail: policy files: read-only inside for this run") || !strings.Contains(r.stderr, ": 5 files: ") {
		t.Errorf("the start does not say the policy files are read-only:\n%s", r.stderr)
	}
	r = run(t, runOpts{env: f.h.env, dir: f.ws}, append(append([]string{"--dry-run"}, f.flags...), "--", "true")...)
	mustCode(t, r, 0)
	out := r.stdout + r.stderr
	for _, w := range []string{f.srt + "  (policy file (--settings)", f.cfg + "  (policy file (--config)", f.sc + "  (policy file (--seccomp)", f.target + "  (policy file (--settings)",
		f.fromCfg + "  (policy file (settings in " + filepath.Join(f.h.cfg, "config.toml")} {
		if !strings.Contains(out, w) {
			t.Errorf("--dry-run does not name %q:\n%s", w, out)
		}
	}
	if !strings.Contains(out, "read-only  "+f.hard+"  (another name (hard link) of "+f.srt) {
		t.Errorf("--dry-run: the hard link is not read-only:\n%s", out)
	}
}

// Degraded mode has no mounts: the policy files are guarded whole (put
// back when changed) instead, and the start says so. Seen failing on
// main's binary (a493adb): the rewritten files stayed.
func TestPolicyFilesDegraded(t *testing.T) {
	f := newPolicyFilesFixture(t)
	r := sh(t, runOpts{env: f.h.env, dir: f.ws}, policyFilesAttack, append([]string{"--x-degraded", "--net", "none"}, f.flags...)...)
	if r.code != 0 {
		t.Fatalf("degraded run: code %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if ch := f.changed(t); len(ch) > 0 {
		t.Fatalf("degraded: policy files changed on the host after the run: %q\nstdout: %s\nstderr: %s", ch, r.stdout, r.stderr)
	}
}

// jail's config directory is hidden inside, but what its entries link to
// is not: with a dotfiles repository as the workspace (GNU stow's links
// from ~/.config/jail into it), the user's config, trust store and
// profiles were the agent's to rewrite, and every later run read them.
// Every profile linked counts, not only the ones this run uses. Seen
// failing on main's binary (a493adb): all three rewritten.
func TestPolicyFilesConfigLinks(t *testing.T) {
	h := newHome(t)
	dots := workspace(t)
	const cfg, trust, prof = "hostname = \"mine\"\n", `{"version": 1, "files": {}}`, "description = \"mine\"\n"
	for name, body := range map[string]string{"config.toml": cfg, "trust.json": trust, "profiles/mine.toml": prof} {
		writeFile(t, filepath.Join(dots, "jail", name), body)
		if err := os.MkdirAll(filepath.Dir(filepath.Join(h.cfg, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(dots, "jail", name), filepath.Join(h.cfg, name)); err != nil {
			t.Fatal(err)
		}
	}
	r := sh(t, runOpts{env: h.env, dir: dots}, `printf 'write = ["~"]\n' >> jail/config.toml 2>/dev/null && echo WROTE config
printf '{"version": 1, "files": {"/x/.jail.toml": {}}}' > jail/trust.json 2>/dev/null && echo WROTE trust
printf 'write = ["~"]\n' >> jail/profiles/mine.toml 2>/dev/null && echo WROTE profile
true`)
	mustCode(t, r, 0)
	if strings.Contains(r.stdout, "WROTE") {
		t.Errorf("the agent wrote jail's linked config files:\n%s", r.stdout)
	}
	for name, body := range map[string]string{"config.toml": cfg, "trust.json": trust, "profiles/mine.toml": prof} {
		if b, _ := os.ReadFile(filepath.Join(dots, "jail", name)); string(b) != body {
			t.Errorf("%s changed on the host: %q", name, b)
		}
	}
}

// A profiles directory that is itself a link into a writable tree is all
// policy: a profile the agent added there shadows the built-in one of its
// name (`-P claude` would load the agent's). Read-only whole. Seen
// failing on main's binary (a493adb): claude.toml planted, mine.toml
// rewritten.
func TestPolicyFilesProfilesDirLink(t *testing.T) {
	h := newHome(t)
	dots := workspace(t)
	const prof = "description = \"mine\"\n"
	writeFile(t, filepath.Join(dots, "profiles", "mine.toml"), prof)
	if err := os.Symlink(filepath.Join(dots, "profiles"), filepath.Join(h.cfg, "profiles")); err != nil {
		t.Fatal(err)
	}
	r := sh(t, runOpts{env: h.env, dir: dots}, `printf 'write = ["~"]\n' > profiles/claude.toml 2>/dev/null && echo WROTE claude
printf 'write = ["~"]\n' >> profiles/mine.toml 2>/dev/null && echo WROTE mine
true`)
	mustCode(t, r, 0)
	if strings.Contains(r.stdout, "WROTE") {
		t.Errorf("the agent wrote the linked profiles directory:\n%s", r.stdout)
	}
	if _, err := os.Lstat(filepath.Join(dots, "profiles", "claude.toml")); err == nil {
		t.Errorf("the agent planted a profile")
	}
	if b, _ := os.ReadFile(filepath.Join(dots, "profiles", "mine.toml")); string(b) != prof {
		t.Errorf("mine.toml changed on the host: %q", b)
	}
	if !strings.Contains(r.stderr, filepath.Join(dots, "profiles")+"/ (your profiles directory)") {
		t.Errorf("the start does not name the profiles directory:\n%s", r.stderr)
	}
}

// A Claude Code settings.json named as a settings file stays the agent's
// to write (Claude Code writes it): the agent configuration guard keeps
// every key jail reads from it ("sandbox", "permissions") as on the host.
func TestPolicyFilesClaudeSettingsGuarded(t *testing.T) {
	h := newHome(t)
	ws := workspace(t)
	const orig = `{"sandbox": {"network": {"allowedDomains": []}, "filesystem": {"allowWrite": ["."]}}}`
	cs := filepath.Join(ws, ".claude", "settings.json")
	writeFile(t, cs, orig)
	r := sh(t, runOpts{env: h.env, dir: ws}, `printf '%s' '{"model": "x", "sandbox": {"network": {"allowedDomains": ["evil.example.com"]}, "filesystem": {"allowWrite": [".", "~/Documents"]}}, "permissions": {"allow": ["WebFetch(domain:evil.example.com)"]}}' > .claude/settings.json && echo WROTE`, "--settings", cs)
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout, "WROTE") {
		t.Fatalf("a guarded Claude settings.json is not writable inside:\n%s\n%s", r.stdout, r.stderr)
	}
	b, err := os.ReadFile(cs)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "evil") || strings.Contains(string(b), "Documents") || !strings.Contains(string(b), `"model"`) {
		t.Fatalf("the guard did not keep the sandbox and permissions keys (or dropped the agent's own): %s", b)
	}
}

// A file named only by a flag (--settings here) of one run is read again
// by that run's next start: another run of the same workspace not given the
// flag must not be able to rewrite it either (policyfiles left it writable
// there, said in README). Every later run keeps a file an earlier run was
// given by a flag read-only. Seen failing on main (b5e615a) as root and as
// jailtest: the second run wrote srt.json, exit 0.
func TestPolicyFileFlagKeptInLaterRuns(t *testing.T) {
	h, ws := newHome(t), workspace(t)
	srt := filepath.Join(ws, "srt.json")
	writeFile(t, srt, policyFilesSRT)
	mustCode(t, run(t, runOpts{env: h.env, dir: ws}, "--settings", srt, "--", "true"), 0)
	r := sh(t, runOpts{env: h.env, dir: ws}, `printf '{"filesystem": {"allowWrite": [".", "~/Documents"]}}' > srt.json 2>/dev/null && echo WROTE; true`)
	mustCode(t, r, 0)
	if b, _ := os.ReadFile(srt); strings.Contains(r.stdout, "WROTE") || string(b) != policyFilesSRT {
		t.Fatalf("a run without --settings rewrote the file an earlier run's --settings named:\n%s\n%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, srt+" (--settings in an earlier run)") {
		t.Errorf("the start does not say the earlier run's policy file is read-only:\n%s", r.stderr)
	}
}

// A settings file named inside a --config file is read again by the next
// start given that flag, like the --config file itself: another run not
// given the flag kept the --config file read-only but not the settings
// file it names, and its agent rewrote that (allowWrite ["~/Documents"]):
// the next `jail --config` read the agent's policy (review19c). Every
// later run keeps it read-only too. Seen failing on main (4d8a97a) as
// root and as jailtest: the second run wrote srt.json, exit 0.
func TestPolicyFileConfigNamedKeptInLaterRuns(t *testing.T) {
	h, ws := newHome(t), workspace(t)
	srt, cfg := filepath.Join(ws, "srt.json"), filepath.Join(ws, "jail.toml")
	writeFile(t, srt, policyFilesSRT)
	writeFile(t, cfg, "settings = [\"srt.json\"]\n")
	mustCode(t, run(t, runOpts{env: h.env, dir: ws}, "--config", cfg, "--", "true"), 0)
	r := sh(t, runOpts{env: h.env, dir: ws}, `printf '{"filesystem": {"allowWrite": [".", "~/Documents"]}}' > srt.json 2>/dev/null && echo WROTE; true`)
	mustCode(t, r, 0)
	if b, _ := os.ReadFile(srt); strings.Contains(r.stdout, "WROTE") || string(b) != policyFilesSRT {
		t.Fatalf("a run without --config rewrote the settings file an earlier run's --config file named:\n%s\n%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "srt.json (settings in "+cfg+":1 in an earlier run)") {
		t.Errorf("the start does not say the earlier run's settings file is read-only:\n%s", r.stderr)
	}
}

// A policy file named through a symlink whose way passes a directory and
// leaves it (srt.json -> b/../real/srt.json): the file and the link were
// kept, not b, which the agent swapped for a link into a tree of its own
// (b -> evil/x), and the next start given --settings srt.json read
// evil/real/srt.json (review19c, review18d's hole for policy files). A
// normal run pins b; a degraded one refuses, naming b and the flag. Seen
// failing on main (4d8a97a) as root and as jailtest: the host's srt.json
// read the agent's settings after either run.
func TestPolicyFileWayDirLeft(t *testing.T) {
	dirLeftModes(t, func(t *testing.T, flags []string) {
		h, ws := newHome(t), workspace(t)
		mkdirs(t, filepath.Join(ws, "b"))
		writeFile(t, filepath.Join(ws, "real", "srt.json"), policyFilesSRT)
		symlink(t, "b/../real/srt.json", filepath.Join(ws, "srt.json"))
		r := sh(t, runOpts{env: h.env, dir: ws}, `
mkdir -p evil/x evil/real && printf '{"filesystem": {"allowWrite": [".", "~/Documents"]}}' > evil/real/srt.json
mv b b.old 2>/dev/null || rm -rf b 2>/dev/null
ln -s evil/x b 2>/dev/null
exit 0`, append(append([]string{}, flags...), "--settings", filepath.Join(ws, "srt.json"))...)
		pinnedOrRefused(t, r, flags, filepath.Join(ws, "b")+" and leaves it")
		if b, _ := os.ReadFile(filepath.Join(ws, "srt.json")); string(b) != policyFilesSRT {
			t.Fatalf("the next start given --settings reads the agent's settings: %s\nstderr:\n%s", b, r.stderr)
		}
	})
}

// A run that started before any run named the file by a flag can write it
// for as long as it lasts: the start naming it refuses, saying which run
// (its next start would read that run's bytes). Seen failing on main
// (b5e615a) as root and as jailtest: the start went on, exit 0.
func TestPolicyFileFlagLiveRunRefuses(t *testing.T) {
	h, ws := newHome(t), workspace(t)
	srt := filepath.Join(ws, "srt.json")
	writeFile(t, srt, policyFilesSRT)
	end := runWaiting(t, h, ws)
	r := run(t, runOpts{env: h.env, dir: ws}, "--settings", srt, "--", "true")
	end()
	if r.code == 0 || !strings.Contains(r.stderr, "policy file "+srt+" (--settings) can be written by a live run") {
		t.Fatalf("a live run could write the --settings file and the start went on: code %d\n%s", r.code, r.stderr)
	}
}

// A settings file added to the user's own config while a run lives, in a
// tree that run can write (it started before the line, so keeps the file
// writable): the next start read it, its bytes possibly that run's agent's,
// nothing said. The start refuses, naming the live run, as for --settings;
// once it ends the start goes on and later runs keep the file read-only.
// Seen failing on main as root and as jailtest: the start went on, exit 0.
func TestPolicyFileUserConfigAddedWhileLive(t *testing.T) {
	h, ws := newHome(t), workspace(t)
	srt := filepath.Join(ws, "srt.json")
	writeFile(t, srt, policyFilesSRT)
	end := runWaiting(t, h, ws)
	writeFile(t, filepath.Join(h.cfg, "config.toml"), "settings = [\""+srt+"\"]\n")
	other := workspace(t)
	r := run(t, runOpts{env: h.env, dir: other}, "--", "true")
	end()
	if r.code == 0 || !strings.Contains(r.stderr, "policy file "+srt+" (settings in ") || !strings.Contains(r.stderr, "can be written by a live run") {
		t.Fatalf("ATTACK WORKED: a live run could write the settings file the user's config names and the start went on: code %d\n%s", r.code, r.stderr)
	}
	mustCode(t, run(t, runOpts{env: h.env, dir: other}, "--", "true"), 0)
	r = sh(t, runOpts{env: h.env, dir: ws}, `printf '{"filesystem": {"allowWrite": [".", "~/Documents"]}}' > srt.json 2>/dev/null && echo WROTE; true`)
	mustCode(t, r, 0)
	if b, _ := os.ReadFile(srt); strings.Contains(r.stdout, "WROTE") || string(b) != policyFilesSRT {
		t.Fatalf("a later run rewrote the settings file the user's config names:\n%s\n%s", r.stdout, r.stderr)
	}
}

// A policy file with more other names (hard links) in the writable trees
// than a start makes read-only (16: each is a mount) was only said: the
// agent rewrote it through one left writable. The start refuses instead,
// saying how to find them. Seen failing on main (b5e615a) as root and as
// jailtest: the 17th link was written, exit 0.
func TestPolicyFileManyLinksRefuses(t *testing.T) {
	h, ws := newHome(t), workspace(t)
	srt := filepath.Join(ws, "srt.json")
	writeFile(t, srt, policyFilesSRT)
	if err := os.MkdirAll(filepath.Join(ws, "l"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if err := os.Link(srt, filepath.Join(ws, "l", fmt.Sprintf("%02d.json", i))); err != nil {
			t.Fatal(err)
		}
	}
	r := sh(t, runOpts{env: h.env, dir: ws}, `for f in l/*.json; do printf '{"filesystem": {"allowWrite": [".", "~/Documents"]}}' > "$f" 2>/dev/null && echo "WROTE $f"; done; true`, "--settings", srt)
	if b, _ := os.ReadFile(srt); strings.Contains(r.stdout, "WROTE") || string(b) != policyFilesSRT {
		t.Fatalf("the agent rewrote the policy file through a hard link: code %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r.code == 0 || !strings.Contains(r.stderr, "other names (hard links)") || !strings.Contains(r.stderr, "-samefile") {
		t.Fatalf("the start went on (or did not say how to find the links): code %d\n%s", r.code, r.stderr)
	}
}

// A file another workspace's run named by --settings (the policy-named
// record) with more than 16 other names (hard links) in this workspace
// refused every start here: the links' maker need not be this workspace's
// user, and the file is not this run's policy. Such a run starts now (16
// names read-only, said) and marks the file in the record: the start
// given the flag refuses until the user checks the file, removes the links
// and drops the entry. Seen failing on main (e374781) as root and as
// jailtest: the run without the flag refused (exit 125).
func TestPolicyFileManyLinksOtherWorkspace(t *testing.T) {
	h, ws, other := newHome(t), workspace(t), workspace(t)
	srt := filepath.Join(ws, "srt.json")
	writeFile(t, srt, policyFilesSRT)
	mustCode(t, run(t, runOpts{env: h.env, dir: other}, "--settings", srt, "--", "true"), 0)
	if err := os.MkdirAll(filepath.Join(ws, "l"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if err := os.Link(srt, filepath.Join(ws, "l", fmt.Sprintf("%02d.json", i))); err != nil {
			t.Fatal(err)
		}
	}
	r := sh(t, runOpts{env: h.env, dir: ws}, `for f in l/*.json; do printf '{"filesystem": {"allowWrite": [".", "~/Documents"]}}' > "$f" 2>/dev/null && echo "WROTE $f"; done; true`)
	if r.code != 0 || !strings.Contains(r.stderr, "other names (hard links)") {
		t.Fatalf("a run not given the flag refused (or said nothing) for another workspace's policy file: code %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "WROTE l/00.json") {
		t.Fatalf("the first 16 other names were not read-only:\n%s", r.stdout)
	}
	r = run(t, runOpts{env: h.env, dir: other}, "--settings", srt, "--", "true")
	if r.code == 0 || !strings.Contains(r.stderr, "policy-named") {
		t.Fatalf("the start given the flag went on after another run could write the file through its links: code %d\n%s", r.code, r.stderr)
	}
	// What the line says to do: remove the links, drop the entry.
	if err := os.RemoveAll(filepath.Join(ws, "l")); err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(h.dir, ".local", "state", "jail", "policy-named")
	b, err := os.ReadFile(rec)
	var m map[string]any
	if err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatalf("record %s: %v %q", rec, err, b)
	}
	delete(m, srt)
	b, _ = json.Marshal(m)
	writeFile(t, rec, string(b))
	writeFile(t, srt, policyFilesSRT)
	mustCode(t, run(t, runOpts{env: h.env, dir: other}, "--settings", srt, "--", "true"), 0)
}

// A degraded run (no mounts) guards a policy file, and a symlink on the way
// to one, by putting it back when changed: until then a start that reads
// it reads the agent's bytes. A start whose policy file lies in a tree a
// live degraded run can write refuses. Seen failing on main (b5e615a) as
// root and as jailtest: the start went on (exit 0) beside the live
// degraded run whose agent could swap the link.
func TestPolicyFileDegradedLiveRefuses(t *testing.T) {
	h, ws := newHome(t), workspace(t)
	target := filepath.Join(ws, "real", "srt.json")
	link := filepath.Join(ws, "srt.json")
	writeFile(t, target, policyFilesSRT)
	if err := os.Symlink("real/srt.json", link); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(h.cfg, "config.toml"), "settings = [\""+link+"\"]\n")
	end := runWaiting(t, h, ws, "--x-degraded", "--net", "none")
	r := run(t, runOpts{env: h.env, dir: ws}, "--", "true")
	end()
	if r.code == 0 || !strings.Contains(r.stderr, "lies in a tree a live degraded run") {
		t.Fatalf("a live degraded run could change the policy file and the start went on: code %d\n%s", r.code, r.stderr)
	}
}

// runWaiting starts a run in ws with flags whose agent waits, and returns
// once the agent runs (the run is registered by then); the func returned
// ends it.
func runWaiting(t *testing.T, h homeDir, ws string, flags ...string) (end func()) {
	t.Helper()
	done := make(chan result, 1)
	go func() {
		done <- sh(t, runOpts{env: h.env, dir: ws, timeout: 90 * time.Second},
			`touch ready; i=0; while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; true`, flags...)
	}()
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(ws, "ready")); err == nil {
			break
		}
		if i > 600 {
			t.Fatal("the waiting run did not start")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return func() {
		writeFile(t, filepath.Join(ws, "go"), "")
		<-done
	}
}

// Two starts at once: run B in ws (no flag) and run A in another workspace
// given ws/srt-N.json by --settings. B's plan read the policy-named record
// before A wrote it, and A's check listed the live runs before B was
// registered: neither refused, and B's agent rewrote the file A's next
// start reads. Every try must end with one start refused or the file
// unchanged. Seen failing on main (e374781) as root and as jailtest: B
// wrote the file, both exit 0, in the first tries.
func TestPolicyFileFlagConcurrentStarts(t *testing.T) {
	h, ws, other := newHome(t), workspace(t), workspace(t)
	for i := 0; i < 6; i++ {
		srt := filepath.Join(ws, fmt.Sprintf("srt-%d.json", i))
		writeFile(t, srt, policyFilesSRT)
		bDone := make(chan result, 1)
		go func() {
			bDone <- sh(t, runOpts{env: h.env, dir: ws},
				fmt.Sprintf(`sleep 0.5; printf ' ' >> srt-%d.json 2>/dev/null && echo WROTE; true`, i))
		}()
		a := run(t, runOpts{env: h.env, dir: other}, "--settings", srt, "--", "true")
		b := <-bDone
		if strings.Contains(b.stdout, "WROTE") && a.code == 0 && b.code == 0 {
			t.Fatalf("try %d: a run started beside the one naming %s by --settings rewrote it, and neither start refused\nA: %s\nB: %s", i, srt, a.stderr, b.stderr)
		}
		if b, _ := os.ReadFile(srt); a.code == 0 && string(b) != policyFilesSRT {
			t.Fatalf("try %d: %s changed after A's start went on: %q", i, srt, b)
		}
	}
}
