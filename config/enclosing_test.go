package config

import (
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
