package gitguard

import (
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The user's own git config names directories and programs by absolute
// path: inside a writable tree they are protected even when no repository
// is there (a global core.hooksPath runs in every repository of the host;
// init.templateDir's hooks are copied into every new one).
func TestScanUserConfigPathsNoRepo(t *testing.T) {
	ws, home := tmp(t), tmp(t)
	os.MkdirAll(ws+"/githooks", 0o755)
	os.MkdirAll(ws+"/tmpl/hooks", 0o755)
	write(t, ws+"/bin/key.sh", "#!/bin/sh\n", 0o755)
	write(t, home+"/.gitconfig", "[core]\n\thooksPath = "+ws+"/githooks\n[init]\n\ttemplateDir = "+ws+"/tmpl\n"+
		"[gpg \"ssh\"]\n\tdefaultKeyCommand = "+ws+"/bin/key.sh\n[credential]\n\thelper = "+ws+"/bin/absent-helper\n", 0o644)
	p := scan(t, ws, func(in *Input) { in.UserConfigs = []string{home + "/.gitconfig"}; in.Home = home })
	ro := paths(p.ReadOnly, ws)
	for _, want := range []string{"githooks", "tmpl", "bin/key.sh"} {
		if !slices.Contains(ro, want) {
			t.Errorf("%s not read-only: %v", want, ro)
		}
	}
	if ab := paths(p.Absent, ws); !slices.Contains(ab, "bin/absent-helper") {
		t.Errorf("credential.helper's absent program not watched: %v", ab)
	}
}

// Every symlink on the way to a path the user's git config names is kept
// (Plan.Links), not only the first one met or the path itself: with
// core.hooksPath = ws/a/c/hooks, a -> b and b/c -> ../d, the agent that
// repoints b/c at a directory of its own gets its hooks run in every
// repository of the host, though d/hooks stays read-only; likewise the
// link e on the way from hl -> e/hooks. Seen failing on main (review13e):
// Links had a and hl only.
func TestScanUserConfigEveryLinkOnTheWay(t *testing.T) {
	ws, home := tmp(t), tmp(t)
	for _, d := range []string{"b", "d/hooks", "f/hooks"} {
		os.MkdirAll(ws+"/"+d, 0o755)
	}
	for l, to := range map[string]string{"a": "b", "b/c": "../d", "hl": "e/hooks", "e": "f"} {
		if err := os.Symlink(to, ws+"/"+l); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ hooks, ro string }{{ws + "/a/c/hooks", "d/hooks"}, {ws + "/hl", "f/hooks"}} {
		write(t, home+"/.gitconfig", "[core]\n\thooksPath = "+c.hooks+"\n", 0o644)
		p := scan(t, ws, func(in *Input) { in.UserConfigs = []string{home + "/.gitconfig"}; in.Home = home })
		if ro := paths(p.ReadOnly, ws); !slices.Contains(ro, c.ro) {
			t.Errorf("hooksPath %s: %s not read-only: %v", c.hooks, c.ro, ro)
		}
		want := []string{"a", "b/c"}
		if c.ro == "f/hooks" {
			want = []string{"e", "hl"}
		}
		if got := paths(p.Links, ws); !slices.Equal(got, want) {
			t.Errorf("hooksPath %s: links %v, want %v", c.hooks, got, want)
		}
	}
	// A loop ends (the kernel's 40 links), with the link kept.
	os.Symlink("loop/x", ws+"/loop")
	write(t, home+"/.gitconfig", "[core]\n\thooksPath = "+ws+"/loop/hooks\n", 0o644)
	p := scan(t, ws, func(in *Input) { in.UserConfigs = []string{home + "/.gitconfig"}; in.Home = home })
	if got := paths(p.Links, ws); !slices.Equal(got, []string{"loop"}) {
		t.Errorf("a link loop: links %v", got)
	}
}

// The environment's config as git reads it: GIT_CONFIG_COUNT pairs and both
// forms of GIT_CONFIG_PARAMETERS (checked against git config --list, which
// prints what the environment sets).
func TestEnvConfig(t *testing.T) {
	env := []string{
		"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=Core.HooksPath", "GIT_CONFIG_VALUE_0=.githooks",
		"GIT_CONFIG_KEY_1=diff.My.Sub.textconv", "GIT_CONFIG_VALUE_1=./conv it",
		`GIT_CONFIG_PARAMETERS='core.fsmonitor'='./fs'\''m' 'include.path=/x/inc' 'core.bare' 'alias.x'=`,
	}
	got := EnvConfig(env)
	want := []Entry{
		{Section: "core", Key: "hookspath", Value: ".githooks"},
		{Section: "diff", HasSub: true, Subsection: "My.Sub", Key: "textconv", Value: "./conv it"},
		{Section: "core", Key: "fsmonitor", Value: "./fs'm"},
		{Section: "include", Key: "path", Value: "/x/inc"},
		{Section: "core", Key: "bare", NoValue: true},
		{Section: "alias", Key: "x", NoValue: true},
	}
	if len(got) != len(want) {
		t.Fatalf("EnvConfig = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if git, err := exec.LookPath("git"); err == nil {
		cmd := exec.Command(git, "config", "--list", "--show-scope")
		cmd.Env = append([]string{"HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1"}, env[:5]...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git config --list: %v\n%s", err, out)
		}
		for _, w := range []string{"command\tcore.hookspath=.githooks", "command\tdiff.My.Sub.textconv=./conv it"} {
			if !strings.Contains(string(out), w) {
				t.Errorf("git config --list has no %q:\n%s", w, out)
			}
		}
	}
	if got := EnvConfig([]string{"GIT_CONFIG_PARAMETERS='core.hooksPath", "GIT_CONFIG_COUNT=3", "GIT_CONFIG_KEY_0=nodot", "GIT_CONFIG_VALUE_0=x"}); len(got) != 0 {
		t.Errorf("malformed: %+v", got)
	}
}

// GIT_CONFIG_COUNT has no bound in git but INT_MAX: every pair it names is
// read, so a core.hooksPath past any fixed cap still applies to every
// repository (checked against git config --get) and must be read
// (review18f: the 4,096-pair cap left pair 4,096 on unread).
func TestEnvConfigManyPairs(t *testing.T) {
	const n = 5000
	env := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(n)}
	for i := 0; i < n-1; i++ {
		env = append(env, "GIT_CONFIG_KEY_"+strconv.Itoa(i)+"=user.x"+strconv.Itoa(i), "GIT_CONFIG_VALUE_"+strconv.Itoa(i)+"=v")
	}
	env = append(env, "GIT_CONFIG_KEY_"+strconv.Itoa(n-1)+"=core.hooksPath", "GIT_CONFIG_VALUE_"+strconv.Itoa(n-1)+"=/w/hooks")
	got := EnvConfig(env)
	if len(got) != n || got[n-1] != (Entry{Section: "core", Key: "hookspath", Value: "/w/hooks"}) {
		last := Entry{}
		if len(got) > 0 {
			last = got[len(got)-1]
		}
		t.Errorf("EnvConfig read %d of %d pairs, last %+v: want core.hookspath=/w/hooks last", len(got), n, last)
	}
	if git, err := exec.LookPath("git"); err == nil {
		cmd := exec.Command(git, "config", "--get", "core.hooksPath")
		cmd.Env = append([]string{"HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1"}, env...)
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "/w/hooks" {
			t.Errorf("git config --get core.hooksPath = %q, %v: want /w/hooks (git reads every pair)", out, err)
		}
	}
}

// FuzzEnvConfig: never panics, and a key and value quoted the way git's
// sq_quote writes `git -c`'s GIT_CONFIG_PARAMETERS (a quote or a bang
// closes the quote, is escaped and reopens it) are read back as git reads
// them (parse_config_env_list), before any other word.
func FuzzEnvConfig(f *testing.F) {
	f.Add("core.hooksPath", "./h'oo!ks", "'a.b'= 'c.d=e'")
	f.Add("diff.My Sub.textconv", "", "'")
	f.Add("include.path", "x\ny", `'x.y'\!`)
	f.Fuzz(func(t *testing.T, key, value, tail string) {
		sq := func(s string) string {
			s = strings.ReplaceAll(s, "'", `'\''`)
			return "'" + strings.ReplaceAll(s, "!", `'\!'`) + "'"
		}
		got := EnvConfig([]string{"GIT_CONFIG_PARAMETERS=" + sq(key) + "=" + sq(value) + " " + tail})
		i, j := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
		if i <= 0 || j == len(key)-1 {
			return // git rejects the key (and dies): nothing to compare
		}
		if len(got) == 0 {
			t.Fatalf("%q=%q: nothing read", key, value)
		}
		e := got[0]
		if e.Section != strings.ToLower(key[:i]) || e.Key != strings.ToLower(key[j+1:]) || e.Value != value || e.NoValue {
			t.Fatalf("%q=%q read as %+v", key, value, e)
		}
		if (i != j) != e.HasSub || (e.HasSub && e.Subsection != key[i+1:j]) {
			t.Fatalf("%q: subsection read as %+v", key, e)
		}
	})
}

// A variable set twice in the environment: git run directly takes its
// first value (getenv), git run from a shell its last (bash, dash and zsh
// import environ in order). EnvConfig and UserConfigFiles read both, so a
// core.hooksPath either git applies is read (session 19: the last value
// only was read, and git run directly applied the first's hooks path).
// Checked against real git through a raw exec (os/exec would drop the
// repeats).
func TestEnvConfigRepeatedVariables(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no git to check against: %v", err)
		}
		t.Skip("no git")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("no sh: %v", err)
	}
	home, home2 := t.TempDir(), t.TempDir()
	if err := os.WriteFile(home+"/.gitconfig", []byte("[core]\n\thooksPath = /from/home\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(home2+"/.gitconfig", []byte("[core]\n\thooksPath = /from/home2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"GIT_CONFIG_NOSYSTEM=1", "PATH=" + os.Getenv("PATH")}
	for _, c := range []struct {
		name string
		env  []string
	}{
		{"key", []string{"HOME=" + home2, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.hooksPath", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=/a"}},
		{"value", []string{"HOME=" + home2, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.hooksPath", "GIT_CONFIG_VALUE_0=/a", "GIT_CONFIG_VALUE_0=/b"}},
		{"count", []string{"HOME=" + home2, "GIT_CONFIG_COUNT=2", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=x", "GIT_CONFIG_KEY_1=core.hooksPath", "GIT_CONFIG_VALUE_1=/a"}},
		{"parameters", []string{"HOME=" + home2, "GIT_CONFIG_PARAMETERS='core.hooksPath'='/a'", "GIT_CONFIG_PARAMETERS='user.name'='x'"}},
		{"both", []string{"HOME=" + home2, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_KEY_0=core.hooksPath", "GIT_CONFIG_VALUE_0=/a", "GIT_CONFIG_PARAMETERS='user.name'='x'", "GIT_CONFIG_PARAMETERS='core.hooksPath'='/b'"}},
		{"home", []string{"HOME=" + home, "HOME=" + home2}},
		{"global", []string{"HOME=" + home2, "GIT_CONFIG_GLOBAL=" + home + "/.gitconfig", "GIT_CONFIG_GLOBAL=" + home2 + "/.gitconfig"}},
	} {
		env := append(append([]string{}, base...), c.env...)
		var read []string
		for _, e := range EnvConfig(env) {
			if e.Section == "core" && e.Key == "hookspath" {
				read = append(read, e.Value)
			}
		}
		for _, f := range UserConfigFiles(env) {
			b, _ := os.ReadFile(f)
			if v, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "[core]\n\thooksPath = "); ok {
				read = append(read, v)
			}
		}
		for _, argv := range [][]string{{git, "config", "--get-all", "core.hooksPath"}, {sh, "-c", `exec git config --get-all core.hooksPath`}} {
			out := rawRun(t, argv, env)
			for _, v := range strings.Fields(out) {
				if !slices.Contains(read, v) {
					t.Errorf("%s: %s applies core.hooksPath %s; read only %q", c.name, argv[0], v, read)
				}
			}
		}
	}
}

// rawRun runs argv with env exactly as given (repeats kept) and returns its
// standard output.
func rawRun(t *testing.T, argv, env []string) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{Env: env, Files: []uintptr{0, w.Fd(), 2}})
	w.Close()
	if err != nil {
		t.Fatalf("%s: %v", argv[0], err)
	}
	out, _ := io.ReadAll(r)
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
		t.Fatal(err)
	}
	return string(out)
}
