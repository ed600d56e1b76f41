package fsrules

import (
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/asciifold"
)

// matchBefore is Pattern.Match as it was before it split into a buffer on
// the stack and rejected on the last element before splitting: the
// reference the new one must agree with.
func matchBefore(p *Pattern, abs string, isDir bool) bool {
	if p.DirOnly && !isDir {
		return false
	}
	if p.Fold {
		abs = asciifold.Lower(abs)
	}
	if !under(abs, p.prefix) {
		return false
	}
	for _, l := range p.inner {
		if !strings.Contains(abs, l) {
			return false
		}
	}
	var ns []string
	for _, e := range strings.Split(abs, "/") {
		if e != "" {
			ns = append(ns, e)
		}
	}
	if len(ns) < p.nlit {
		return false
	}
	ns = ns[p.nlit:]
	ps := p.segs[p.nlit:]
	if l := len(ps); l > 0 && ps[l-1].kind != segDoubleStar {
		if len(ns) == 0 || !ps[l-1].match(ns[len(ns)-1]) {
			return false
		}
	}
	if p.depth >= 0 && len(ns) != p.depth {
		return false
	}
	return matchSegs(ps, ns)
}

// matchPaths are paths to match: at and around the built-ins' names, at
// every depth, in homes and workspaces, with capitals, and a few that are
// not clean (Match's contract is a clean path; it must not differ on the
// others either).
var matchPaths = []string{
	"/", "/a", "/ws", "/ws/.env", "/ws/.ENV", "/ws/src/.env.local", "/ws/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z/.env",
	"/ws/secrets", "/ws/secrets/key.pem", "/ws/deep/a/b/server.PEM", "/ws/.git", "/ws/.git/config", "/ws/.git/hooks",
	"/ws/.git/hooks/pre-commit", "/ws/sub/.git/HEAD", "/ws/.vscode", "/ws/.vscode/settings.json", "/ws/node_modules/x/.npmrc",
	"/root", "/root/.ssh", "/root/.ssh/id_rsa", "/home", "/home/u", "/home/u/.ssh", "/home/u/.aws/credentials",
	"/home/u/.bashrc", "/home/u/.local/bin", "/home/u/.local/bin/tool", "/home/u/.config/gh/hosts.yml",
	"/home/Alice/Projects/.env", "/home/u/x/.ssh", "/srv/Other Home/.ssh", "/srv/Other Home/.gitconfig",
	"/h/.gnupg", "/h/.gnupg/private-keys-v1.d", "/ws/.env/", "/ws//.env", "//ws/.env", "/ws/.git/hooks/", "/home/u/.ssh/",
	"/ws/a.sql", "/ws/B.SQL", "/ws/pkg1/sub1/deep/file.go", "/ws/pkg/x/secret-1", "/ws/name7.txt", "/ws/service-account.json",
}

// Match decides as it did, for every built-in at several homes' anchors
// and user patterns of every shape, on paths of every depth.
func TestMatchSameAsBefore(t *testing.T) {
	var pats []*Pattern
	for _, r := range compileBuiltins(false, homeAnchors([]string{"/root", "/home/u", "/srv/Other Home", "/h"})) {
		pats = append(pats, r.pat)
	}
	for _, d := range []string{"secrets/**", "**/*.pem", "(?i)**/*.sql", "~/notes.txt", "/home/u/.ssh/", "*.db",
		"pkg*/**/secret*", "**/name[0-9].txt", "pkg1/sub1/deep/file.go", "**", "a/**/b/**/c", "**/.git/hooks/",
		"/ws/*/x/*", "/ws/?ecrets/**", `/ws/\*`, "**/*service*account*.json"} {
		p, err := Compile(d, "/ws", "/home/u")
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		pats = append(pats, p)
	}
	n := 0
	for _, p := range pats {
		for _, path := range matchPaths {
			for _, isDir := range []bool{false, true} {
				got, want := p.Match(path, isDir), matchBefore(p, path, isDir)
				if got != want {
					t.Errorf("%s matches %q (dir %v): %v, before %v", p.Abs, path, isDir, got, want)
				}
				if got {
					n++
				}
			}
		}
	}
	if n < 100 {
		t.Errorf("only %d matches in the table: it tests little", n)
	}
}

// Match allocates nothing for a path of up to 24 elements (it runs for
// every candidate rule of every entry walked).
func TestMatchAllocates(t *testing.T) {
	p, err := compileAbs("/**/.git/hooks/", true, true)
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { p.Match("/ws/a/b/c/.git/hooks", true) }); n != 0 {
		t.Errorf("Match made %v allocations", n)
	}
}
