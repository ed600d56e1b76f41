package fsrules

import (
	"errors"
	"path"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		pat, name string
		want      bool
	}{
		{"*.pem", "a.pem", true},
		{"*.pem", ".pem", true},
		{"*.pem", "dir/a.pem", false},
		{"**/*.pem", "a.pem", true},
		{"**/*.pem", "x/y/z/a.pem", true},
		{"**/*.pem", "x/y/z/a.pem.bak", false},
		{"a/**", "a", true},
		{"a/**", "a/b/c", true},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/c", false},
		{"**/.env", ".env", true},
		{"**/.env", "p/.env", true},
		{"**/.env", "p/.envrc", false},
		{"**/.env.*", "p/.env.local", true},
		{"id_rsa*", "id_rsa.pub", true},
		{"?.txt", "a.txt", true},
		{"?.txt", "ab.txt", false},
		{"[ab].txt", "b.txt", true},
		{"[^ab].txt", "b.txt", false},
		{"[a-c]*", "car", true},
		{`\*.txt`, "*.txt", true},
		{`\*.txt`, "a.txt", false},
		{"a**b", "axxb", true},
		{"a**b", "ax/xb", false},
		{"**/**/x", "x", true},
		{"**", "", true},
		{"", "", true},
		{"", "a", false},
		{"a//b", "a/b", true},
		{"a[^x]b", "a/b", false}, // classes never match '/' (path.Match's do)
		{"a?b", "a/b", false},
	} {
		got, err := Match(c.pat, c.name)
		if err != nil || got != c.want {
			t.Errorf("Match(%q, %q) = %v, %v; want %v", c.pat, c.name, got, err, c.want)
		}
	}
	for _, bad := range []string{"[", "a/[b", `a\`, "[]"} {
		if _, err := Match(bad, "x"); !errors.Is(err, ErrBadPattern) {
			t.Errorf("Match(%q) err = %v, want ErrBadPattern", bad, err)
		}
	}
}

func TestDeepDoubleStarIsLinear(t *testing.T) {
	pat := strings.Repeat("**/a/", 30) + "b"
	name := strings.Repeat("a/", 200) + "c"
	if ok, _ := Match(pat, name); ok {
		t.Fatal("matched")
	}
}

// FuzzMatch: never panics. Without "**": on a single element it agrees with
// path.Match exactly; on several, a match of ours is a match of path.Match
// (ours is stricter: a class or escape never matches '/').
func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{{"**/*.pem", "a/b.pem"}, {"[a-", "a"}, {`a\*`, "a*"}, {"a/**/b", "a/b"}, {"?", "é"}, {"a[^x]b", "a/b"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pat, name string) {
		got, err := Match(pat, name)
		if strings.Contains(pat, "**") || strings.Contains(pat, "//") || strings.HasPrefix(pat, "/") ||
			strings.HasSuffix(pat, "/") || strings.Contains(name, "//") || strings.HasPrefix(name, "/") ||
			strings.HasSuffix(name, "/") || pat == "" || name == "" {
			return
		}
		want, werr := path.Match(pat, name)
		if !strings.Contains(pat, "/") && !strings.Contains(name, "/") {
			if (err != nil) != (werr != nil) || got != want {
				t.Fatalf("Match(%q, %q) = %v, %v; path.Match = %v, %v", pat, name, got, err, want, werr)
			}
			return
		}
		if err == nil && got && (werr != nil || !want) {
			t.Fatalf("Match(%q, %q) = true, path.Match = %v, %v", pat, name, want, werr)
		}
	})
}

func TestCompile(t *testing.T) {
	const ws, home = "/w/proj", "/home/u"
	for _, c := range []struct {
		pat, abs string
		dirOnly  bool
		err      error
	}{
		{"secrets/*.txt", "/w/proj/secrets/*.txt", false, nil},
		{"./a/../b", "/w/proj/b", false, nil},
		{"build/", "/w/proj/build", true, nil},
		{"~/.cache/x", "/home/u/.cache/x", false, nil},
		{"~", "/home/u", false, nil},
		{"/etc/foo", "/etc/foo", false, nil},
		{"/a/../../b", "/b", false, nil},
		{"../x", "", false, ErrEscapesWorkspace},
		{"a/../../x", "", false, ErrEscapesWorkspace},
		{"..", "", false, ErrEscapesWorkspace},
		{"/", "", false, ErrDenyRoot},
		{"/**", "", false, ErrDenyRoot},
		{"//", "", false, ErrDenyRoot},
		{"/../..", "", false, ErrDenyRoot},
		{"", "", false, ErrBadPattern},
		{"~bob/x", "", false, ErrBadPattern},
		{"a[", "", false, ErrBadPattern},
		{"a\x00b", "", false, ErrBadPattern},
	} {
		p, err := Compile(c.pat, ws, home)
		if c.err != nil {
			var fe *Error
			if !errors.Is(err, c.err) || !errors.As(err, &fe) || fe.Key != "deny" || fe.Value != c.pat {
				t.Errorf("Compile(%q) err = %v, want %v naming --deny", c.pat, err, c.err)
			}
			continue
		}
		if err != nil || p.Abs != c.abs || p.DirOnly != c.dirOnly {
			t.Errorf("Compile(%q) = %+v, %v; want %s dirOnly=%v", c.pat, p, err, c.abs, c.dirOnly)
		}
	}
}

func TestPatternMatchAndLive(t *testing.T) {
	p, err := Compile("secrets/*/key", "/w", "/h")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want bool
	}{{"/w/secrets/a/key", true}, {"/w/secrets/key", false}, {"/w/secrets/a/b/key", false}, {"/w/secretsx/a/key", false}, {"/x/secrets/a/key", false}} {
		if got := p.Match(c.path, false); got != c.want {
			t.Errorf("Match(%s) = %v", c.path, got)
		}
	}
	for _, c := range []struct {
		dir  string
		want bool
	}{{"/", true}, {"/w", true}, {"/w/secrets", true}, {"/w/secrets/a", true}, {"/w/secrets/a/b", false}, {"/w/other", false}, {"/x", false}} {
		if got := p.live(c.dir); got != c.want {
			t.Errorf("live(%s) = %v", c.dir, got)
		}
	}
	d, _ := Compile("build/", "/w", "/h")
	if d.Match("/w/build", false) || !d.Match("/w/build", true) {
		t.Error("DirOnly not honoured")
	}
}

// FuzzCompile: never panics; a relative pattern never anchors outside the
// workspace; nothing that compiles matches "/".
func FuzzCompile(f *testing.F) {
	for _, s := range []string{"a/**/b", "../x", "~/.ssh", "/etc/*", "a/../../b", "[", "./", "~", "(?i)**/*.PEM", "(?i)", "(?i)~/X"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pat string) {
		p, err := Compile(pat, "/w/proj", "/home/u")
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) || fe.Key != "deny" {
				t.Fatalf("error %v is not a *Error naming --deny", err)
			}
			return
		}
		if p.Match("/", true) {
			t.Fatalf("%q compiled but matches /", pat)
		}
		rel := strings.TrimPrefix(pat, FoldPrefix)
		if rel != "" && rel[0] != '/' && rel[0] != '~' && !under(p.prefix, "/w/proj") {
			t.Fatalf("relative %q anchored at %s, outside the workspace", pat, p.Abs)
		}
	})
}
