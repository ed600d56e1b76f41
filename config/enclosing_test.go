package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/policy"
)

// rebase anchors a project file's relative deny globs at the file's
// directory with that directory's glob characters escaped: a project in
// "/p/a[1]*" denies its own files, not a sibling's the brackets or the star
// would match.
func TestRebaseDenyEscapes(t *testing.T) {
	for _, tc := range []struct {
		dir, pat  string
		match, no []string
	}{
		{"/p/a[1]*", "sub/secret", []string{"/p/a[1]*/sub/secret"}, []string{"/p/a1/sub/secret", "/p/a1x/sub/secret"}},
		{"/p/q?\\r", "**/*.pem", []string{"/p/q?\\r/x/k.pem", "/p/q?\\r/k.pem"}, []string{"/p/qx\\r/k.pem"}},
		{"/p/Proj", "(?i)*.KEY", []string{"/p/Proj/a.key", "/p/proj/A.KEY"}, []string{"/p/Proj/x/a.key"}},
	} {
		f := &File{Settings: []Setting{{Option: policy.Lookup("deny"), Value: tc.pat}}}
		rebase(f, tc.dir)
		p, err := fsrules.Compile(f.Settings[0].Value, "/elsewhere", "/home/u")
		if err != nil {
			t.Fatalf("%s in %s: %q: %v", tc.pat, tc.dir, f.Settings[0].Value, err)
		}
		for _, m := range tc.match {
			if !p.Match(m, false) {
				t.Errorf("%s in %s (%q): %s not matched", tc.pat, tc.dir, f.Settings[0].Value, m)
			}
		}
		for _, m := range tc.no {
			if p.Match(m, false) {
				t.Errorf("%s in %s (%q): %s matched", tc.pat, tc.dir, f.Settings[0].Value, m)
			}
		}
	}
	// Absolute, home, climbing out: as written.
	for _, v := range []string{"/abs/x", "~/x", "../x", "(?i)../x", "(?i)/abs"} {
		f := &File{Settings: []Setting{{Option: policy.Lookup("deny"), Value: v}}}
		rebase(f, "/p")
		if f.Settings[0].Value != v {
			t.Errorf("%s rebased to %s", v, f.Settings[0].Value)
		}
	}
}

// FuzzRebaseDeny: a literal relative deny of a project in any directory,
// rebased, names that file in that directory and not the same name in a
// directory spelled alike (the directory's glob characters escaped).
func FuzzRebaseDeny(f *testing.F) {
	for _, s := range [][2]string{{"/p/a[1]*", "sub/secret"}, {`/p/q?\r`, "x"}, {"/p/[!a]", "k"}, {"/p/**", "a/b"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, dir, name string) {
		dir = filepath.Clean("/" + dir)
		name = filepath.Clean(name)
		if dir == "/" || strings.ContainsRune(dir+name, 0) || filepath.IsAbs(name) || name == "." ||
			strings.HasPrefix(name, "..") || strings.HasPrefix(name, "~") || strings.HasPrefix(name, "(?i)") || strings.ContainsAny(name, `*?[]\`) {
			return
		}
		f := &File{Settings: []Setting{{Option: policy.Lookup("deny"), Value: name}}}
		rebase(f, dir)
		p, err := fsrules.Compile(f.Settings[0].Value, "/elsewhere", "/home/u")
		if err != nil {
			return // a pattern fsrules refuses, as it would unrebased
		}
		if !p.Match(dir+"/"+name, false) {
			t.Fatalf("%q in %q (%q): %s not matched", name, dir, f.Settings[0].Value, dir+"/"+name)
		}
		if other := dir + "x/" + name; p.Match(other, false) {
			t.Fatalf("%q in %q (%q): %s matched", name, dir, f.Settings[0].Value, other)
		}
	})
}

// rebase anchors a project file's relative write, read and
// no-default-deny-at paths at the file's directory: a lift of "testdata"
// in /p/.jail.toml is /p/testdata in a run from /p/sub too, not the
// narrower workspace's sub/testdata (seen failing with the key left out of
// rebase).
func TestRebasePaths(t *testing.T) {
	for _, key := range []string{"write", "read", "no-default-deny-at"} {
		f := &File{Settings: []Setting{{Option: policy.Lookup(key), Value: "testdata"}, {Option: policy.Lookup(key), Value: "/abs"}, {Option: policy.Lookup(key), Value: "~/x"}}}
		rebase(f, "/p")
		for i, want := range []string{"/p/testdata", "/abs", "~/x"} {
			if got := f.Settings[i].Value; got != want {
				t.Errorf("%s = %q rebased to %q, want %q", key, []string{"testdata", "/abs", "~/x"}[i], got, want)
			}
		}
	}
}
