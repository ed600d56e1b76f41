package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/policy"
)

// fakeProfiles serves profiles from a map of TOML texts.
type fakeProfiles map[string]string

func (f fakeProfiles) Load(name string) (*File, error) {
	doc, ok := f[name]
	if !ok {
		return nil, errors.New("profile " + name + ": no such profile")
	}
	return Parse("/profiles/"+name+".toml", []byte(doc), ProfileFile, Source{Kind: FromProfile, Profile: name, File: "/profiles/" + name + ".toml"})
}

type world struct {
	t       *testing.T
	home    string
	ws      string
	cfgDir  string
	env     Env
	trust   *TrustStore
	profile fakeProfiles
	vars    map[string]string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, home: filepath.Join(root, "home"), ws: filepath.Join(root, "home", "proj"), profile: fakeProfiles{}, vars: map[string]string{}}
	w.cfgDir = filepath.Join(w.home, ".config", "jail")
	for _, d := range []string{w.ws, w.cfgDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w.trust = &TrustStore{Path: filepath.Join(w.cfgDir, "trust.json")}
	w.env = Env{Cwd: w.ws, Home: w.home, ConfigDir: w.cfgDir, Lookup: func(n string) (string, bool) { v, ok := w.vars[n]; return v, ok }}
	return w
}

func (w *world) write(path, doc string) string {
	w.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return path
}

// flag builds the flag layer as the CLI does: one setting per occurrence.
func flag(name, value string) Setting {
	return Setting{Option: policy.Lookup(name), Value: value, Source: Source{Kind: FromFlag, Flag: "--" + name, Raw: value}}
}

func (w *world) resolve(req Request) (*Result, error) {
	req.Env, req.Profiles, req.Trust = w.env, w.profile, w.trust
	return Resolve(req)
}

// default < profile < user config < trusted project < --config < flags;
// lists accumulate in that order; an unset flag overrides nothing.
func TestResolveLayers(t *testing.T) {
	w := newWorld(t)
	w.profile["base"] = "hostname = \"from-base\"\nwrite = [\"~/base\"]\npids = 10\n"
	w.profile["tool"] = "extends = [\"base\"]\nhostname = \"from-tool\"\nwrite = [\"~/tool\"]\nmemory = \"1G\"\ncpus = 1\n"
	w.write(filepath.Join(w.cfgDir, "config.toml"), "profile = [\"tool\"]\nwrite = [\"~/user\"]\nmemory = \"2G\"\ntimeout = \"1m\"\nkill-grace = \"2s\"\n")
	proj := w.write(filepath.Join(w.ws, ProjectFileName), "write = [\"~/project\"]\ntimeout = \"2m\"\ncpus = 2\n")
	if _, err := w.trust.Trust(proj, time.Now()); err != nil {
		t.Fatal(err)
	}
	explicit := w.write(filepath.Join(w.home, "extra.toml"), "write = [\"~/explicit\"]\ntimeout = \"3m\"\n")
	r, err := w.resolve(Request{ConfigFile: explicit, Flags: []Setting{flag("write", "~/flag"), flag("pids", "99")}})
	if err != nil {
		t.Fatal(err)
	}
	p := r.Policy
	if want := []string{"~/base", "~/tool", "~/user", "~/project", "~/explicit", "~/flag"}; !slices.Equal(p.Write, want) {
		t.Errorf("write %v, want %v", p.Write, want)
	}
	if p.Hostname != "from-tool" || p.Memory != 2<<30 || p.CPUs != 2 || p.Timeout != 3*time.Minute || p.Pids != 99 || p.KillGrace != 2*time.Second {
		t.Errorf("scalars: hostname %q memory %d cpus %v timeout %v pids %d grace %v", p.Hostname, p.Memory, p.CPUs, p.Timeout, p.Pids, p.KillGrace)
	}
	// No workspace setting: the sandbox chooses (the git top level of Cwd).
	if p.TmpSize != 1<<30 || p.Workspace != "" || p.Cwd != w.ws || !slices.Equal(p.Profile, []string{"tool"}) {
		t.Errorf("defaults: tmp %d workspace %q cwd %q profile %v", p.TmpSize, p.Workspace, p.Cwd, p.Profile)
	}
	for _, c := range []struct{ key, value, where string }{
		{"write", "~/base", "profile base (/profiles/base.toml:2)"},
		{"write", "~/project", proj + ":1"},
		{"timeout", "", explicit + ":2"},
		{"memory", "", filepath.Join(w.cfgDir, "config.toml") + ":3"},
		{"pids", "", ""},
	} {
		src, ok := r.Origins.Lookup(c.key, c.value)
		if !ok || src.where() != c.where {
			t.Errorf("origin of %s %q: %q, want %q", c.key, c.value, src.where(), c.where)
		}
	}
	if want := []string{filepath.Join(w.cfgDir, "config.toml"), explicit, proj}; !slices.Equal(r.Files, want) {
		t.Errorf("files %v, want %v", r.Files, want)
	}
}

// The project file: refused until trusted, refused again once changed, and
// skipped with no-project-file.
func TestResolveProjectTrust(t *testing.T) {
	w := newWorld(t)
	proj := w.write(filepath.Join(w.ws, ProjectFileName), "memory = \"3G\"\n")
	_, err := w.resolve(Request{})
	var te *TrustError
	if !errors.As(err, &te) || !errors.Is(err, ErrUntrusted) || !errors.Is(err, policy.ErrInvalid) || !strings.Contains(err.Error(), "jail trust "+proj) {
		t.Fatalf("untrusted: %v", err)
	}
	if _, err := w.trust.Trust(proj, time.Now()); err != nil {
		t.Fatal(err)
	}
	r, err := w.resolve(Request{})
	if err != nil || r.Policy.Memory != 3<<30 {
		t.Fatalf("trusted: %v %+v", err, r)
	}
	// The agent edits the file: the trust is gone, and jail says so.
	w.write(proj, "memory = \"3G\"\nwrite = [\"/\"]\n")
	_, err = w.resolve(Request{})
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "changed since you trusted it") || !strings.Contains(err.Error(), "jail trust "+proj+" again") {
		t.Fatalf("tampered: %v", err)
	}
	yes := true
	if r, err := w.resolve(Request{NoProject: &yes}); err != nil || r.Policy.Memory != 0 {
		t.Fatalf("--no-project-file: %v", err)
	}
	w.write(filepath.Join(w.cfgDir, "config.toml"), "no-project-file = true\n")
	if _, err := w.resolve(Request{}); err != nil {
		t.Fatalf("no-project-file in the config: %v", err)
	}
	// A symlinked project file is never trusted (it could point at another
	// project's trusted file).
	os.Remove(filepath.Join(w.cfgDir, "config.toml"))
	other := w.write(filepath.Join(w.home, "other", ProjectFileName), "memory = \"4G\"\n")
	if _, err := w.trust.Trust(other, time.Now()); err != nil {
		t.Fatal(err)
	}
	os.Remove(proj)
	if err := os.Symlink(other, proj); err != nil {
		t.Fatal(err)
	}
	if _, err := w.resolve(Request{}); err == nil {
		t.Fatal("a symlink to another project's trusted file was accepted")
	}
}

func TestResolveErrorsAndNotes(t *testing.T) {
	w := newWorld(t)
	w.vars["SET_ONE"] = "1"
	w.profile["p"] = "env = [\"OPTIONAL_KEY\"]\n"
	w.write(filepath.Join(w.cfgDir, "config.toml"), "env = [\"FROM_FILE\"]\n")
	r, err := w.resolve(Request{Flags: []Setting{flag("env", "SET_ONE"), flag("env", "UNSET_ONE"), flag("profile", "p")}})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(r.Notes, "\n")
	if !strings.Contains(notes, "--env UNSET_ONE: not set on the host") || !strings.Contains(notes, `config.toml:1: env "FROM_FILE": not set on the host`) {
		t.Errorf("notes:\n%s", notes)
	}
	if strings.Contains(notes, "--env SET_ONE:") || strings.Contains(notes, "OPTIONAL_KEY") {
		t.Errorf("warned about a set variable or a profile's optional one:\n%s", notes)
	}
	// A missing --config and a missing profile are errors.
	if _, err := w.resolve(Request{ConfigFile: "nope.toml"}); err == nil || !strings.Contains(err.Error(), "nope.toml: no such file") {
		t.Errorf("missing --config: %v", err)
	}
	r, err = w.resolve(Request{Flags: []Setting{flag("profile", "ghost")}})
	if err == nil {
		t.Fatal("missing profile accepted")
	}
	if got := (Origins{}).Explain(err); !strings.Contains(got, "ghost") {
		t.Errorf("missing profile: %q", got)
	}
	w.profile["a"] = "extends = [\"b\"]\n"
	w.profile["b"] = "extends = [\"a\"]\n"
	if _, err := w.resolve(Request{Flags: []Setting{flag("profile", "a")}}); err == nil || !strings.Contains(err.Error(), "a -> b -> a") {
		t.Errorf("cycle: %v", err)
	}
}

// Explain puts each value's source in front of the library's reason, and
// spells option references for that source.
func TestExplain(t *testing.T) {
	w := newWorld(t)
	cfg := w.write(filepath.Join(w.cfgDir, "config.toml"), "\nnet = \"none\"\nallow-ip = [\"10.0.0.1/8\"]\n")
	w.profile["p"] = "deny = [\"a[\"]\n"
	r, err := w.resolve(Request{Flags: []Setting{flag("allow-domain", "https://example.com/"), flag("read-only", "true"), flag("profile", "p")}})
	if err != nil {
		t.Fatal(err)
	}
	o := r.Origins
	cases := []struct {
		err  error
		want string
	}{
		{&policy.FieldError{Key: "allow-domain", Value: "https://example.com/", Reason: "a URL, not a host name: use the host name, example.com"},
			"--allow-domain https://example.com/: a URL, not a host name: use the host name, example.com"},
		{&policy.FieldError{Key: "allow-ip", Value: "10.0.0.1/8", Reason: "host bits set; use `allow-ip` 10.0.0.0/8"},
			cfg + `:3: allow-ip "10.0.0.1/8": host bits set; use allow-ip 10.0.0.0/8`},
		{&policy.FieldError{Key: "deny", Value: "a[", Reason: "bad glob"},
			`profile p (/profiles/p.toml:1): deny "a[": bad glob`},
		{&policy.ConflictError{Key1: "net", Value1: "none", Key2: "allow-domain", Value2: "https://example.com/", Reason: "rules need `net` allow"},
			`net "none" (` + cfg + `:2) conflicts with --allow-domain https://example.com/: rules need net allow`},
		{&policy.ConflictError{Key1: "read-only", Key2: "write", Value2: ".", Reason: "drop one"},
			`--read-only conflicts with --write .: drop one`},
		{errors.Join(&policy.FieldError{Key: "allow-ip", Value: "10.0.0.1/8", Reason: "x"}, &policy.FieldError{Key: "allow-ip", Value: "y", Reason: "z"}),
			"(and 1 more)"},
		{errors.New("no usable cgroup; drop `require-limits`"), "no usable cgroup; drop --require-limits"},
	}
	for _, c := range cases {
		if got := o.Explain(c.err); !strings.Contains(got, c.want) {
			t.Errorf("Explain(%v)\n got %q\nwant %q", c.err, got, c.want)
		}
	}
}

// Settings files sit above the layer that names them; a flag's just below
// the flags.
func TestResolveSettingsPlacement(t *testing.T) {
	w := newWorld(t)
	srt := w.write(filepath.Join(w.home, "srt.json"), `{"network": {"allowedDomains": ["srt.example"]}, "filesystem": {"allowWrite": ["."]}}`)
	w.write(filepath.Join(w.cfgDir, "config.toml"), "settings = [\"../../srt.json\"]\nallow-domain = [\"user.example\"]\n")
	r, err := w.resolve(Request{Flags: []Setting{flag("allow-domain", "flag.example")}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"user.example", "srt.example", "flag.example"}; !slices.Equal(r.Policy.AllowDomain, want) {
		t.Errorf("allow-domain %v, want %v", r.Policy.AllowDomain, want)
	}
	src, _ := r.Origins.Lookup("allow-domain", "srt.example")
	if src.Kind != FromSettings || src.File != srt || src.Line != 1 || src.Key != "network.allowedDomains" {
		t.Errorf("settings source %+v", src)
	}
}

// A workspace jail chooses below a trusted project's top -- a .git
// planted there by a command run in the project's sandbox, a submodule,
// the current directory in a project that is no repository -- gets the
// project's file, its relative paths the project's (trustsub). Seen failing
// before CheckAbove (trustfollow): the run resolved with memory 0 and no
// deny; seen refused on main (a34609b) where it now applies.
func TestResolveTrustedAbove(t *testing.T) {
	w := newWorld(t)
	w.write(filepath.Join(w.ws, ".git", "HEAD"), "ref: refs/heads/main\n")
	proj := w.write(filepath.Join(w.ws, ProjectFileName), "memory = \"3G\"\ndeny = [\"a/sub/secret\", \"(?i)**/*.pem\", \"/abs\", \"~/h\"]\nwrite = [\"out\", \"~/x\"]\n")
	if _, err := w.trust.Trust(proj, time.Now()); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(w.ws, "a", "sub")
	w.write(filepath.Join(sub, "deeper", "x"), "")
	w.env.Cwd = filepath.Join(sub, "deeper")
	// Before the plant: the subfolder's run is the project's.
	if r, err := w.resolve(Request{}); err != nil || r.Policy.Memory != 3<<30 || r.Workspace != w.ws || r.Policy.Deny[0] != "a/sub/secret" {
		t.Fatalf("before: %v %+v", err, r)
	}
	applied := func(what string) *Result {
		t.Helper()
		r, err := w.resolve(Request{})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		wantDeny := []string{w.ws + "/a/sub/secret", "(?i)" + w.ws + "/**/*.pem", "/abs", "~/h"}
		wantWrite := []string{w.ws + "/out", "~/x"}
		if r.Policy.Memory != 3<<30 || !slices.Equal(r.Policy.Deny, wantDeny) || !slices.Equal(r.Policy.Write, wantWrite) ||
			!slices.Contains(r.Files, proj) || !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.HasPrefix(n, proj+" applies") }) {
			t.Fatalf("%s: the project's file not applied: memory %d deny %q write %q files %q notes %q", what, r.Policy.Memory, r.Policy.Deny, r.Policy.Write, r.Files, r.Notes)
		}
		return r
	}
	// The agent plants a work tree of its own in the subfolder.
	w.write(filepath.Join(sub, ".git", "HEAD"), "ref: refs/heads/main\n")
	if r := applied("planted .git"); r.Workspace != sub || r.Policy.Workspace != "" {
		t.Fatalf("planted .git: workspace %s (%q), want %s chosen as ever", r.Workspace, r.Policy.Workspace, sub)
	}
	// jail trust from there names the file the run reads.
	if got := ProjectFile(w.env); got != proj {
		t.Fatalf("ProjectFile below the project: %s, want %s", got, proj)
	}
	// A .git file (gitdir:, a submodule's) narrows it the same way.
	os.RemoveAll(filepath.Join(sub, ".git"))
	w.write(filepath.Join(sub, ".git"), "gitdir: ../../.git/modules/sub\n")
	applied(".git file")
	// Changed or gone since it was trusted: refused as the workspace's
	// own file would be, its restrictions not dropped.
	data, _ := os.ReadFile(proj)
	w.write(proj, "memory = \"3G\"\n")
	var te *TrustError
	if _, err := w.resolve(Request{}); !errors.As(err, &te) || !errors.Is(err, ErrChanged) || te.File != proj {
		t.Fatalf("changed above: %v", err)
	}
	os.Remove(proj)
	if _, err := w.resolve(Request{}); !errors.As(err, &te) || !errors.Is(err, ErrGone) || te.File != proj {
		t.Fatalf("gone above: %v", err)
	}
	w.write(proj, string(data))
	// No git at all: the current directory is the workspace, still below.
	os.Remove(filepath.Join(sub, ".git"))
	os.RemoveAll(filepath.Join(w.ws, ".git"))
	if r := applied("no repository"); r.Workspace != w.env.Cwd {
		t.Fatalf("no repository: workspace %s", r.Workspace)
	}
	// Reached through a symlink: the same directory.
	link := filepath.Join(w.home, "link")
	if err := os.Symlink(filepath.Join(sub, "deeper"), link); err != nil {
		t.Fatal(err)
	}
	w.env.Cwd = link
	applied("symlinked current directory")
	w.env.Cwd = filepath.Join(sub, "deeper")
	// The subfolder replaced by a symlink to a place outside the project
	// (a -w path elsewhere): the resolved workspace is out of it, the
	// path the user typed is not: refused (the file's paths would name
	// nothing of that workspace).
	elsewhere := filepath.Join(w.home, "cache", "x")
	w.write(filepath.Join(elsewhere, "deeper", "y"), "")
	if err := os.Rename(sub, sub+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, sub); err != nil {
		t.Fatal(err)
	}
	_, err := w.resolve(Request{})
	if !errors.As(err, &te) || !errors.Is(err, ErrAbove) || !errors.Is(err, policy.ErrInvalid) || te.File != proj ||
		!strings.Contains(err.Error(), "--workspace "+w.ws) || !strings.Contains(err.Error(), "--no-project-file") {
		t.Fatalf("subfolder replaced by a symlink out: %v", err)
	}
	os.Remove(sub)
	if err := os.Rename(sub+".old", sub); err != nil {
		t.Fatal(err)
	}
	// The user's choices: without project files, or another workspace.
	yes := true
	if r, err := w.resolve(Request{NoProject: &yes}); err != nil || r.Policy.Memory != 0 {
		t.Fatalf("--no-project-file: %v", err)
	}
	if r, err := w.resolve(Request{Flags: []Setting{flag("workspace", w.ws)}}); err != nil || r.Policy.Memory != 3<<30 || r.Policy.Deny[0] != "a/sub/secret" {
		t.Fatalf("--workspace the project: %v %+v", err, r)
	}
	if r, err := w.resolve(Request{Flags: []Setting{flag("workspace", ".")}}); err != nil || r.Policy.Memory != 0 {
		t.Fatalf("--workspace chosen by the user: %v", err)
	}
	// A subfolder trusted on its own is its own project.
	own := w.write(filepath.Join(w.env.Cwd, ProjectFileName), "memory = \"1G\"\n")
	if _, err := w.trust.Trust(own, time.Now()); err != nil {
		t.Fatal(err)
	}
	if r, err := w.resolve(Request{}); err != nil || r.Policy.Memory != 1<<30 || len(r.Policy.Deny) != 0 {
		t.Fatalf("own trusted file: %v %+v", err, r)
	}
	os.Remove(own)
	w.trust.Revoke(own)
	// The closest enclosing project wins.
	mid := w.write(filepath.Join(w.ws, "a", ProjectFileName), "memory = \"2G\"\n")
	if _, err := w.trust.Trust(mid, time.Now()); err != nil {
		t.Fatal(err)
	}
	if r, err := w.resolve(Request{}); err != nil || r.Policy.Memory != 2<<30 || len(r.Policy.Deny) != 0 {
		t.Fatalf("the closer project: %v %+v", err, r)
	}
	w.trust.Revoke(mid)
	// An untrusted file above is no project's: nothing applies.
	w.trust.Revoke(proj)
	if r, err := w.resolve(Request{}); err != nil || r.Policy.Memory != 0 {
		t.Fatalf("untrusted above: %v %+v", err, r)
	}
	// Records that do not enclose the workspace: a sibling, and the home
	// (never a project of what lies below it).
	sib := w.write(filepath.Join(w.home, "sib", ProjectFileName), "memory = \"1G\"\n")
	homeFile := w.write(filepath.Join(w.home, ProjectFileName), "memory = \"1G\"\n")
	for _, f := range []string{sib, homeFile} {
		if _, err := w.trust.Trust(f, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := w.resolve(Request{}); err != nil || r.Policy.Memory != 0 {
		t.Fatalf("records not above the workspace: %v", err)
	}
}

// A nested work tree with a trusted project file of its own, inside a
// work tree with a trusted file: when the inner .git is emptied (a command
// run there can remove HEAD), the run from inside keeps the inner project
// as its workspace, with its file, rather than widening to the outer tree
// with the outer file alone; so does a trusted subdirectory that was only
// ever run with --workspace (trustsub). Seen failing before CheckInside
// (review14f): the outer memory and no deny; refused on main (a34609b).
func TestResolveTrustedInside(t *testing.T) {
	w := newWorld(t)
	sub := w.nestedTrusted(t)
	w.write(filepath.Join(sub, "deeper", "x"), "")
	w.env.Cwd = filepath.Join(sub, "deeper")
	if r, err := w.resolve(Request{}); err != nil || r.Workspace != sub || len(r.Policy.Deny) != 1 || r.Policy.Workspace != "" {
		t.Fatalf("before: %v %+v", err, r)
	}
	// Nested trusted projects each run as their own from their own trees.
	w.env.Cwd = w.ws
	if r, err := w.resolve(Request{}); err != nil || r.Workspace != w.ws || r.Policy.Memory != 3<<30 {
		t.Fatalf("the outer project: %v %+v", err, r)
	}
	w.env.Cwd = filepath.Join(sub, "deeper")
	if err := os.Remove(filepath.Join(sub, ".git", "HEAD")); err != nil {
		t.Fatal(err)
	}
	inner := func(what string) {
		t.Helper()
		r, err := w.resolve(Request{})
		// WorkspaceFromCwd: the sandbox checks the links on the way to
		// it as for a workspace it chooses (review15b).
		if err != nil || r.Workspace != sub || r.Policy.Workspace != sub || !r.Policy.WorkspaceFromCwd || !slices.Equal(r.Policy.Deny, []string{"secret"}) || r.Policy.Memory != 0 ||
			!slices.ContainsFunc(r.Notes, func(n string) bool { return strings.HasPrefix(n, "workspace: "+sub+", the trusted project") }) {
			t.Fatalf("%s: %v %+v", what, err, r)
		}
	}
	inner("emptied .git")
	if got, want := ProjectFile(w.env), filepath.Join(sub, ProjectFileName); got != want {
		t.Fatalf("ProjectFile in the inner project: %s, want %s", got, want)
	}
	// Reached through a symlink: the same directory.
	link := filepath.Join(w.home, "link")
	if err := os.Symlink(filepath.Join(sub, "deeper"), link); err != nil {
		t.Fatal(err)
	}
	w.env.Cwd = link
	inner("symlinked current directory")
	// A subdirectory trusted for runs with --workspace, never a work
	// tree: the same, and with no file in the outer tree too.
	os.RemoveAll(filepath.Join(sub, ".git"))
	inner("never a work tree")
	outer := filepath.Join(w.ws, ProjectFileName)
	data, _ := os.ReadFile(outer)
	os.Remove(outer)
	w.trust.Revoke(outer)
	inner("no outer file")
	w.write(outer, string(data))
	w.trust.Trust(outer, time.Now())
	// The inner file changed or gone: refused, naming it.
	innerFile := filepath.Join(sub, ProjectFileName)
	idata, _ := os.ReadFile(innerFile)
	w.write(innerFile, "")
	var te *TrustError
	if _, err := w.resolve(Request{}); !errors.As(err, &te) || !errors.Is(err, ErrChanged) || te.File != innerFile {
		t.Fatalf("inner changed: %v", err)
	}
	os.Remove(innerFile)
	if _, err := w.resolve(Request{}); !errors.As(err, &te) || !errors.Is(err, ErrGone) || te.File != innerFile {
		t.Fatalf("inner gone: %v", err)
	}
	w.write(innerFile, string(idata))
	// The user's choices: a workspace set is the user's, and without
	// project files nothing narrows.
	for _, ws := range []string{sub, w.ws} {
		if r, err := w.resolve(Request{Flags: []Setting{flag("workspace", ws)}}); err != nil || r.Policy.WorkspaceFromCwd {
			t.Fatalf("--workspace %s: %v %+v", ws, err, r)
		}
	}
	yes := true
	if r, err := w.resolve(Request{NoProject: &yes}); err != nil || r.Workspace != w.ws || r.Policy.Workspace != "" {
		t.Fatalf("--no-project-file: %v %+v", err, r)
	}
	// From the outer project's own tree, outside sub: the outer project.
	w.env.Cwd = w.ws
	if r, err := w.resolve(Request{}); err != nil || r.Workspace != w.ws || r.Policy.Memory != 3<<30 {
		t.Fatalf("the outer project after: %v %+v", err, r)
	}
}

// nestedTrusted makes the world's workspace a git work tree with a trusted
// project file (memory 3G) and its sub/ a work tree of its own with a
// trusted file denying "secret"; it returns sub.
func (w *world) nestedTrusted(t *testing.T) string {
	t.Helper()
	w.write(filepath.Join(w.ws, ".git", "HEAD"), "ref: refs/heads/main\n")
	outer := w.write(filepath.Join(w.ws, ProjectFileName), "memory = \"3G\"\n")
	sub := filepath.Join(w.ws, "sub")
	w.write(filepath.Join(sub, ".git", "HEAD"), "ref: refs/heads/main\n")
	inner := w.write(filepath.Join(sub, ProjectFileName), "deny = [\"secret\"]\n")
	for _, f := range []string{outer, inner} {
		if _, err := w.trust.Trust(f, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return sub
}

// A stored identity whose directory is gone may be an inode reused by a
// directory a command in the sandbox made: narrowing the workspace to it
// (Inner) or applying its file from above (Enclosing) on the strength of
// that identity would trust bytes the agent copied there. Forged here (the
// record's identity set to the agent's directory, its path gone): the run
// is refused, naming the file, never started with or without it
// (trustsub).
func TestResolveIdentityReuseRefused(t *testing.T) {
	w := newWorld(t)
	w.write(filepath.Join(w.ws, ".git", "HEAD"), "ref: refs/heads/main\n")
	gone := w.write(filepath.Join(w.home, "gone", ProjectFileName), "memory = \"1G\"\n")
	if _, err := w.trust.Trust(gone, time.Now()); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Dir(gone))
	// The agent's directory inside the work tree, the trusted bytes
	// copied in, and a deeper one for a run below it.
	made := filepath.Join(w.ws, "made")
	w.write(filepath.Join(made, ProjectFileName), "memory = \"1G\"\n")
	w.write(filepath.Join(made, "deeper", "x"), "")
	id, ok := idOf(made)
	if !ok {
		t.Fatal("no identity")
	}
	tf, err := w.trust.load()
	if err != nil {
		t.Fatal(err)
	}
	rec := tf.Files[gone]
	rec.Dev, rec.Ino = id.dev, id.ino
	tf.Files[gone] = rec
	if err := w.trust.save(tf); err != nil {
		t.Fatal(err)
	}
	for _, cwd := range []string{made, filepath.Join(made, "deeper")} {
		w.env.Cwd = cwd
		r, err := w.resolve(Request{})
		var te *TrustError
		if !errors.As(err, &te) || !errors.Is(err, ErrUntrusted) || te.File != filepath.Join(made, ProjectFileName) {
			t.Fatalf("from %s: %v %+v, want ErrUntrusted naming the agent's copy", cwd, err, r)
		}
	}
	// From above, the agent's directory a work tree of its own's parent:
	// its copy is found by identity as the enclosing file, and refused.
	w.write(filepath.Join(made, "deeper", ".git", "HEAD"), "ref: refs/heads/main\n")
	os.RemoveAll(filepath.Join(w.ws, ".git"))
	w.env.Cwd = filepath.Join(made, "deeper")
	var te *TrustError
	if _, err := w.resolve(Request{}); !errors.As(err, &te) || !errors.Is(err, ErrUntrusted) {
		t.Fatalf("enclosing by a reused identity: %v, want ErrUntrusted", err)
	}
}

// PolicyFiles names every file the policy was read from, with what named
// it, for the sandbox to keep read-only (policyfiles): the user's config,
// its settings files, --config, --settings, and the trust store and
// profiles (and the profiles directory) that are symlinks; never a trusted
// project file (its trust covers its bytes) nor a plain file in the config
// directory other than the config (hidden inside).
func TestResolvePolicyFiles(t *testing.T) {
	w := newWorld(t)
	srt := w.write(filepath.Join(w.ws, "srt.json"), `{"filesystem": {"allowWrite": ["."]}}`)
	flagSrt := w.write(filepath.Join(w.ws, "flag.json"), `{"filesystem": {"allowWrite": ["."]}}`)
	cfg := w.write(filepath.Join(w.cfgDir, "config.toml"), "settings = [\""+srt+"\"]\n")
	explicit := w.write(filepath.Join(w.ws, "jail.toml"), "memory = \"1G\"\n")
	proj := w.write(filepath.Join(w.ws, ProjectFileName), "memory = \"2G\"\n")
	if _, err := w.trust.Trust(proj, time.Now()); err != nil {
		t.Fatal(err)
	}
	w.write(filepath.Join(w.cfgDir, "profiles", "plain.toml"), "")
	dots := w.write(filepath.Join(w.home, "dots", "linked.toml"), "")
	if err := os.Symlink(dots, filepath.Join(w.cfgDir, "profiles", "linked.toml")); err != nil {
		t.Fatal(err)
	}
	r, err := w.resolve(Request{ConfigFile: explicit, Flags: []Setting{flag("settings", flagSrt)}})
	if err != nil {
		t.Fatal(err)
	}
	want := []policy.PolicyFile{
		{Path: cfg, From: "your config"},
		{Path: explicit, From: "--config"},
		{Path: srt, From: "settings in " + cfg + ":1"},
		{Path: flagSrt, From: "--settings"},
		{Path: filepath.Join(w.cfgDir, "profiles", "linked.toml"), From: "your profile linked"},
	}
	if !slices.Equal(r.PolicyFiles, want) {
		t.Errorf("PolicyFiles\n %+v\nwant\n %+v", r.PolicyFiles, want)
	}
	// A profiles directory that is a link is named whole.
	os.RemoveAll(filepath.Join(w.cfgDir, "profiles"))
	if err := os.Symlink(filepath.Dir(dots), filepath.Join(w.cfgDir, "profiles")); err != nil {
		t.Fatal(err)
	}
	r, err = w.resolve(Request{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(r.PolicyFiles, policy.PolicyFile{Path: filepath.Join(w.cfgDir, "profiles"), From: "your profiles directory"}) {
		t.Errorf("linked profiles directory not named: %+v", r.PolicyFiles)
	}
}
