package gitguard

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// configCases are read by ParseConfig and, where git is installed, compared
// with what `git config --list` reads from the same bytes.
var configCases = []struct {
	name string
	in   string
	want []string // "name=value" or "name" (no value); nil with err
	err  bool
}{
	{"plain", "[core]\n\tbare = false\n\tfsmonitor = x\n", []string{"core.bare=false", "core.fsmonitor=x"}, false},
	{"case", "[CoRe]\n\tFSMonitor = X\n", []string{"core.fsmonitor=X"}, false},
	{"subsection", "[remote \"Origin\"]\n\turl = u\n", []string{"remote.Origin.url=u"}, false},
	{"deprecated dotted", "[remote.Origin]\n\turl = u\n", []string{"remote.origin.url=u"}, false},
	{"dotted and quoted", "[a.B \"C\"]\n\tk = v\n", []string{"a.b.C.k=v"}, false},
	{"header then key on one line", "[core] fsmonitor = x\n", []string{"core.fsmonitor=x"}, false},
	{"two headers one line", "[user][core]fsmonitor=x\n", []string{"core.fsmonitor=x"}, false},
	{"no value", "[core]\n\tbare\n", []string{"core.bare"}, false},
	{"no value at eof", "[core]\n\tbare", []string{"core.bare"}, false},
	{"comments", "# c\n; c\n[core] ; c\n\tk = v # c\n\tj = \"v # not\" ; c\n", []string{"core.k=v", "core.j=v # not"}, false},
	{"continuation", "[core]\n\tfsmonitor = ec\\\nho x\n", []string{"core.fsmonitor=echo x"}, false},
	{"escapes", "[a]\n\tk = \"x\\ty\\nz\\\\\\\"\"\n", []string{"a.k=x\ty\nz\\\""}, false},
	{"bad escape", "[a]\n\tk = \\q\n", nil, true},
	{"open quote", "[a]\n\tk = \"x\n", nil, true},
	{"spaces", "[a]\n\tk =   x  \t y   \n", []string{"a.k=x    y"}, false},
	{"crlf", "[core]\r\n\tfsmonitor = x\r\n", []string{"core.fsmonitor=x"}, false},
	{"lone cr", "[core]\n\tk = a\rb\n", []string{"core.k=a b"}, false},
	{"bom", "\xef\xbb\xbf[core]\n\tk = v\n", []string{"core.k=v"}, false},
	{"partial bom", "\xef\xbb[core]\n\tk = v\n", nil, true},
	{"key before section", "k = v\n", []string{"k=v"}, false},
	{"bad key", "[core]\n\t1k = v\n", nil, true},
	{"bad section", "[co re]\n\tk = v\n", nil, true},
	{"bad section char", "[co_re]\n\tk = v\n", nil, true},
	{"unterminated header", "[core\n\tk = v\n", nil, true},
	{"subsection escapes", "[a \"x\\\"y\\\\z\\q\"]\n\tk = v\n", []string{"a.x\"y\\zq.k=v"}, false},
	{"key with dash", "[a]\n\tk-1 = v\n", []string{"a.k-1=v"}, false},
	{"empty value", "[a]\n\tk =\n", []string{"a.k="}, false},
	{"value with equals", "[a]\n\tk = x=y\n", []string{"a.k=x=y"}, false},
	{"missing equals", "[a]\n\tk v\n", nil, true},
	{"quote in middle", "[a]\n\tk = a\"  b\"c\n", []string{"a.k=a  bc"}, false},
	{"include", "[include]\n\tpath = x\n", []string{"include.path=x"}, false},
	{"nul in subsection forges a key", "[core \"fsmonitor\x00\"]\n\tx = echo PWNED\n", []string{"core.fsmonitor=echo PWNED"}, false},
	{"nul in value", "[a]\n\tk = x\x00y\n", []string{"a.k=x"}, false},
	{"vt is not space", "[a]\n\tk = \vx\n", []string{"a.k=\vx"}, false},
	{"eof after backslash", "[a]\n\tk = x\\", []string{"a.k=x"}, false},
}

func entriesText(es []Entry) []string {
	var out []string
	for _, e := range es {
		if e.NoValue {
			out = append(out, e.Name())
		} else {
			out = append(out, e.Name()+"="+e.Value)
		}
	}
	return out
}

func TestParseConfig(t *testing.T) {
	for _, c := range configCases {
		t.Run(c.name, func(t *testing.T) {
			es, err := ParseConfig([]byte(c.in))
			if c.err {
				if err == nil || !errors.Is(err, ErrConfig) {
					t.Fatalf("err = %v, want ErrConfig (entries %q)", err, entriesText(es))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := entriesText(es); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// gitList asks the installed git what it reads from data.
func gitList(t *testing.T, data []byte) ([]string, bool) {
	f := filepath.Join(t.TempDir(), "config")
	os.WriteFile(f, data, 0o644)
	cmd := exec.Command("git", "config", "--file", f, "--list", "-z")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		return nil, false
	}
	var list []string
	for _, rec := range bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		k, v, ok := bytes.Cut(rec, []byte("\n"))
		if ok {
			list = append(list, string(k)+"="+string(v))
		} else {
			list = append(list, string(k))
		}
	}
	return list, true
}

// The parser agrees with git itself on every case (where git is here):
// what jail judges is what git reads.
func TestParseConfigAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is needed to check the parser against it")
		}
		t.Skip("git not installed")
	}
	for _, c := range configCases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := gitList(t, []byte(c.in))
			if !ok != c.err {
				t.Fatalf("git ok=%v (%q), our err=%v", ok, got, c.err)
			}
			if ok && !reflect.DeepEqual(got, c.want) {
				t.Errorf("git reads %q, the table (and ParseConfig) %q", got, c.want)
			}
		})
	}
}

func TestParseConfigStrict(t *testing.T) {
	ok := []string{
		"[core]\n\tbare = false\n",
		"[remote \"o\"]\n\turl = u\n\tfetch = +refs/heads/*:refs/remotes/o/*\n",
		"# c\n[user] # c\n\tname = \"a b\"\n",
		"[core]\r\n\tbare = false\r\n",
	}
	bad := []string{
		"[core] fsmonitor = x\n",
		"[core]\n\tfsmonitor = ec\\\nho\n",
		"[remote.o]\n\turl = u\n",
		"k = v\n",
		"[a]\n\tk = x\x00\n",
		"\xef\xbb\xbf[a]\n",
		"[a]\n\tk = a\rb\n",
		"[a]\n\tk = \xff\n",
		"[core \"fsmonitor\x00\"]\n\tx = y\n",
		"[a]\n\tk = \"open\n",
	}
	for _, s := range ok {
		if _, err := ParseConfigStrict([]byte(s)); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	for _, s := range bad {
		if _, err := ParseConfigStrict([]byte(s)); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestSanitize(t *testing.T) {
	cases := []struct {
		name, in  string
		submodule bool
		ok        bool
		keep      []string
		drop      []string
	}{
		{"git init", "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n", false, true,
			[]string{"core.repositoryformatversion=0", "core.filemode=true", "core.bare=false", "core.logallrefupdates=true"}, nil},
		{"git clone", "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://h/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n", false, true,
			[]string{"core.bare=false", "remote.origin.url=https://h/r.git", "remote.origin.fetch=+refs/heads/*:refs/remotes/origin/*", "branch.main.remote=origin", "branch.main.merge=refs/heads/main"}, nil},
		{"fsmonitor", "[core]\n\tbare = false\n\tfsmonitor = evil\n[user]\n\temail = a@b\n", false, false,
			[]string{"core.bare=false", "user.email=a@b"}, []string{"core.fsmonitor"}},
		{"hooksPath", "[core]\n\thooksPath = h\n", false, false, nil, []string{"core.hookspath"}},
		{"forged by NUL", "[user]\n\tname = a\n[core \"fsmonitor\x00\"]\n\tx = evil\n", false, false, []string{"user.name=a"}, []string{"core.fsmonitor"}},
		{"same line", "[user] name = a\n", false, false, []string{"user.name=a"}, nil},
		{"include", "[include]\n\tpath = ../x\n", false, false, nil, []string{"include.path"}},
		{"alias", "[alias]\n\tst = !sh -c evil\n", false, false, nil, []string{"alias.st"}},
		{"ext url", "[remote \"o\"]\n\turl = ext::sh -c evil\n", false, false, nil, []string{"remote.o.url"}},
		// Any "<transport>::" runs the helper git-remote-<transport> (gcrypt::
		// runs gpg, an installed helper may run anything it is given).
		{"transport helper url", "[remote \"o\"]\n\turl = gcrypt::rsync://h/x\n\tpushurl = Fd::3\n[submodule \"s\"]\n\turl = x+y.z::a\n", false, false, nil,
			[]string{"remote.o.url", "remote.o.pushurl", "submodule.s.url"}},
		{"urls that are no helper", "[remote \"o\"]\n\turl = ssh://h/x::y\n\tpushurl = ../a::b\n", false, true,
			[]string{"remote.o.url=ssh://h/x::y", "remote.o.pushurl=../a::b"}, nil},
		{"uploadpack", "[remote \"o\"]\n\turl = /x\n\tuploadpack = evil\n", false, false, []string{"remote.o.url=/x"}, []string{"remote.o.uploadpack"}},
		{"submodule update cmd", "[submodule \"s\"]\n\tupdate = !evil\n\turl = u\n", false, false, []string{"submodule.s.url=u"}, []string{"submodule.s.update"}},
		{"submodule update ok", "[submodule \"s\"]\n\tupdate = rebase\n", false, true, []string{"submodule.s.update=rebase"}, nil},
		{"worktree outside submodule", "[core]\n\tworktree = /\n", false, false, nil, []string{"core.worktree"}},
		{"worktree in submodule", "[core]\n\tworktree = ../../../lib\n", true, true, []string{"core.worktree=../../../lib"}, nil},
		{"bad syntax keeps the start", "[user]\n\tname = a\n[core\n", false, false, []string{"user.name=a"}, nil},
		{"filters", "[filter \"x\"]\n\tclean = evil\n[diff \"y\"]\n\ttextconv = evil\n", false, false, nil, []string{"filter.x.clean", "diff.y.textconv"}},
		{"core key under a subsection", "[core \"x\"]\n\tbare = false\n", false, false, nil, []string{"core.x.bare"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, dropped, ok := Sanitize([]byte(c.in), c.submodule)
			if ok != c.ok {
				t.Fatalf("ok = %v, want %v (dropped %v)", ok, c.ok, dropped)
			}
			if ok && string(out) != c.in {
				t.Errorf("a harmless file was changed: %q", out)
			}
			es, err := ParseConfigStrict(out)
			if err != nil {
				t.Fatalf("output %q is not strict: %v", out, err)
			}
			if got := entriesText(es); !reflect.DeepEqual(got, c.keep) && !(len(got) == 0 && len(c.keep) == 0) {
				t.Errorf("kept %q, want %q", got, c.keep)
			}
			for _, d := range c.drop {
				if !strings.Contains(strings.Join(dropped, " "), d) {
					t.Errorf("dropped %v lacks %s", dropped, d)
				}
			}
			// What git reads from the output is what was kept.
			if _, err := exec.LookPath("git"); err == nil {
				if got, ok := gitList(t, out); !ok || !reflect.DeepEqual(got, entriesText(es)) && len(got)+len(es) > 0 {
					t.Errorf("git reads %q from the sanitized file, jail kept %q", got, entriesText(es))
				}
			}
		})
	}
}

// FuzzParseConfig: never panics; whatever is kept, written and read back is
// the same, in the strict subset, and Safe still.
func FuzzParseConfig(f *testing.F) {
	for _, c := range configCases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := ParseConfig(b)
		if err != nil && !errors.Is(err, ErrConfig) {
			t.Fatalf("error %v does not wrap ErrConfig", err)
		}
		out, dropped := FormatConfig(es)
		back, err := ParseConfigStrict(out)
		if err != nil {
			t.Fatalf("FormatConfig output %q is not strict: %v", out, err)
		}
		var kept []Entry
		for _, e := range es {
			keep := true
			for _, d := range dropped {
				if reflect.DeepEqual(d, e) {
					keep = false
				}
			}
			if keep {
				kept = append(kept, e)
			}
		}
		if a, b := entriesText(kept), entriesText(back); !reflect.DeepEqual(a, b) {
			t.Fatalf("round trip: %q -> %q -> %q", a, out, b)
		}
		s, _, ok := Sanitize(b, false)
		ses, err := ParseConfig(s)
		if err != nil {
			t.Fatalf("Sanitize output does not parse: %v", err)
		}
		for _, e := range ses {
			if !Safe(e, false) {
				t.Fatalf("Sanitize (ok=%v) kept %s", ok, e.Name())
			}
		}
	})
}

func FuzzParseGitFile(f *testing.F) {
	for _, s := range []string{"gitdir: /r/.git/worktrees/x\n", "gitdir:../x", "gitdir: \n", "nope", "gitdir: a\x00b", "gitdir: a \r\n\r\n", "gitdir: a\nb\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseGitFile(b)
		if err != nil {
			if !errors.Is(err, ErrNotGitFile) {
				t.Fatalf("error %v does not wrap ErrNotGitFile", err)
			}
			return
		}
		// git's own reading: prefix "gitdir: ", trailing CR/LF dropped.
		want := strings.TrimRight(strings.TrimPrefix(string(b), "gitdir: "), "\r\n")
		if p != want || p == "" || strings.ContainsRune(p, 0) || !strings.HasPrefix(string(b), "gitdir: ") {
			t.Fatalf("%q -> %q, git reads %q", b, p, want)
		}
	})
}

func FuzzParseCommondir(f *testing.F) {
	for _, s := range []string{"../..\n", "/abs\r\n", "", "\n", "a\x00b", "x\ny\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseCommondir(b)
		if err != nil {
			if !errors.Is(err, ErrCommondir) {
				t.Fatalf("error %v does not wrap ErrCommondir", err)
			}
			return
		}
		if want := strings.TrimRight(string(b), "\r\n"); p != want || p == "" || strings.ContainsRune(p, 0) {
			t.Fatalf("%q -> %q, git reads %q", b, p, want)
		}
	})
}

func TestParseGitFile(t *testing.T) {
	for in, want := range map[string]string{
		"gitdir: ../.git/modules/x\n": "../.git/modules/x",
		"gitdir: /a b \n":             "/a b ",
		"gitdir: x\r\n\n":             "x",
		"gitdir:x":                    "",
		"gitdir:  x":                  " x",
		"Gitdir: x":                   "",
		"gitdir: ":                    "",
	} {
		got, err := ParseGitFile([]byte(in))
		if (err != nil) != (want == "") || got != want {
			t.Errorf("%q -> %q, %v; want %q", in, got, err, want)
		}
	}
}

// A .git file as git reads it: the test makes the directories and asks git
// whether it follows the file, for the shapes where jail and a lenient
// reader would differ.
func TestParseGitFileAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	base := t.TempDir()
	run := func(dir string, args ...string) error {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+base)
		return cmd.Run()
	}
	if err := run(base, "init", "-q", "--bare", "r.git"); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(base, "r.git "), 0o755) // "r.git " with a space: not a repository
	for i, content := range []string{"gitdir: ../r.git\n", "gitdir: ../r.git \n", "gitdir:../r.git\n", "gitdir:  ../r.git\n", "gitdir: ../r.git\r\n"} {
		wt := filepath.Join(base, fmt.Sprint("wt", i))
		os.Mkdir(wt, 0o755)
		os.WriteFile(filepath.Join(wt, ".git"), []byte(content), 0o644)
		gitOK := run(wt, "rev-parse", "--git-dir") == nil
		p, err := ParseGitFile([]byte(content))
		ours := err == nil && IsGitDir(rel(wt, p))
		if gitOK != ours {
			t.Errorf("%q: git follows it: %v, jail: %v (%q)", content, gitOK, ours, p)
		}
	}
}

// Random configs from git's syntax characters, read by ParseConfig and by
// git: both refuse, or both read the same variables.
func TestParseConfigAgreesWithGitRandom(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	toks := []string{"[", "]", "\"", "\\", "\n", "\r", "\r\n", "=", " ", "\t", "#", ";", "core", "fsmonitor",
		"x", "A", ".", "\x00", "-", "1", "[core]", "[a \"b\"]", "k = v", "\\\n", "\xef\xbb\xbf", "\v"}
	rnd := rand.New(rand.NewSource(1))
	n := 120 // each is a git process: about 40 ms on a busy machine
	if testing.Short() {
		n = 20
	}
	for i := 0; i < n; i++ {
		var b strings.Builder
		for k := rnd.Intn(14) + 1; k > 0; k-- {
			b.WriteString(toks[rnd.Intn(len(toks))])
		}
		in := b.String()
		es, err := ParseConfig([]byte(in))
		got, ok := gitList(t, []byte(in))
		if ok != (err == nil) {
			t.Errorf("%q: git ok=%v (%q), ParseConfig err=%v (%q)", in, ok, got, err, entriesText(es))
			continue
		}
		if ok && !reflect.DeepEqual(got, entriesText(es)) && len(got)+len(es) > 0 {
			t.Errorf("%q: git reads %q, ParseConfig %q", in, got, entriesText(es))
		}
	}
}

// FormatConfig writes plain values bare, as git does (a config cut down to
// its harmless keys looks like one git wrote), and quotes the others.
func TestFormatConfigBare(t *testing.T) {
	out, _ := FormatConfig([]Entry{
		{Section: "core", Key: "bare", Value: "false"},
		{Section: "remote", Subsection: "o", HasSub: true, Key: "url", Value: "https://h/r.git"},
		{Section: "remote", Subsection: "o", HasSub: true, Key: "fetch", Value: "+refs/heads/*:refs/remotes/o/*"},
		{Section: "user", Key: "name", Value: "A B"},
		{Section: "user", Key: "email", Value: "a#b;c"},
		{Section: "user", Key: "signingkey", Value: ""},
	})
	want := "[core]\n\tbare = false\n[remote \"o\"]\n\turl = https://h/r.git\n\tfetch = +refs/heads/*:refs/remotes/o/*\n" +
		"[user]\n\tname = \"A B\"\n\temail = \"a#b;c\"\n\tsigningkey = \"\"\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}
