package fsrules

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLifted: Input.Lifted takes the built-in protections other than git's
// off the paths named and what lies below them, and nothing else: a key
// beside them, a user's own --deny, git's hooks, and a hard link of a file
// protected elsewhere stay as they were. Seen failing before Lifted: the
// test keys of testdata/ and a committed .env.example were hidden, and the
// only way to read them inside was --no-default-deny, which drops every
// built-in everywhere.
func TestLifted(t *testing.T) {
	base := tmp(t)
	ws := filepath.Join(base, "ws")
	home := filepath.Join(base, "home")
	mk(t, ws,
		"testdata/key.pem", "testdata/sub/.env", "testdata/.vscode/settings.json", "testdata/credentials.json",
		".env.example", ".env", "keys/server.pem", "keys/other.pem",
		".git/hooks/pre-commit", ".git/config", ".git/HEAD", ".vscode/settings.json")
	must(t, os.Link(filepath.Join(ws, "keys/other.pem"), filepath.Join(ws, "testdata/linked.pem")))
	// A protected name outside the lift, a symlink into it: its target
	// keeps that name's protection.
	mk(t, ws, "testdata/aliased")
	must(t, os.Symlink("testdata/aliased", filepath.Join(ws, "alias.pem")))
	in := Input{Workspace: ws, Home: home, Writable: []string{ws},
		Lifted: []string{filepath.Join(ws, "testdata"), filepath.Join(ws, ".env.example")}}
	plan, err := Expand(in)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "masks with testdata/ and .env.example lifted", summary(ws, plan.Masks), []string{
		"hide .env",
		"read-only .git/config",
		"read-only .git/hooks/",
		"read-only .vscode/",
		"hide keys/other.pem",
		"hide keys/server.pem",
		"hide testdata/aliased",
		// The other name of keys/other.pem, protected there.
		"hide testdata/linked.pem",
	})
	for _, n := range plan.Notes {
		if strings.Contains(n, "lifted") || strings.Contains(n, "no-default-deny-at") {
			t.Errorf("a note about a lift that lifted something: %q", n)
		}
	}

	// A user's own rule holds inside a lifted tree.
	in.Deny = []string{"testdata/**/*.pem"}
	plan, err = Expand(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(summary(ws, plan.Masks), "\n"); !strings.Contains(got, "hide testdata/key.pem") {
		t.Errorf("--deny 'testdata/**/*.pem' left testdata/key.pem readable under the lift:\n%s", got)
	}
	in.Deny = nil

	// A read path that lies in a lifted place is no conflict; unlifted, it is.
	key := filepath.Join(ws, "keys/server.pem")
	ro := Input{Workspace: ws, Home: home, Writable: []string{ws}, Readable: []string{key}}
	if err := Validate(ro); !errors.Is(err, ErrConflict) {
		t.Errorf("a read path of a hidden key, not lifted: %v, want a conflict", err)
	}
	ro.Lifted = []string{key}
	if err := Validate(ro); err != nil {
		t.Errorf("a read path of a lifted key: %v", err)
	}

	// The workspace lifted whole: none of its top's protected names is
	// watched for any more, git's still are (by package gitguard).
	all := Input{Workspace: ws, Home: home, Writable: []string{ws}, Lifted: []string{ws}}
	plan, err = Expand(all)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "masks with the workspace lifted", summary(ws, plan.Masks), []string{
		"read-only .git/config",
		"read-only .git/hooks/",
	})
	for _, a := range plan.Absent {
		git := slices.ContainsFunc(Builtins, func(b Builtin) bool { return b.Git && "default: "+b.Name == a.Rule })
		if strings.HasPrefix(a.Path, ws+"/") && !git {
			t.Errorf("absent %s (%s) watched though lifted", a.Path, a.Rule)
		}
	}
	plan, err = Expand(Input{Workspace: ws, Home: home, Writable: []string{ws}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(plan.Absent, func(a Absent) bool { return a.Path == filepath.Join(ws, ".bashrc") }) {
		t.Errorf("the absent names are not watched without the lift either: %v", plan.Absent)
	}

	// A lift that lifts nothing says so.
	mk(t, ws, "docs/readme.md")
	plan, err = Expand(Input{Workspace: ws, Home: home, Writable: []string{ws}, Lifted: []string{filepath.Join(ws, "docs")}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(plan.Notes, func(n string) bool {
		return strings.Contains(n, filepath.Join(ws, "docs")) && strings.Contains(n, "nothing")
	}) {
		t.Errorf("no note for a lift with nothing to lift: %q", plan.Notes)
	}
}

// TestLiftedRefused: a lift that would need more than it names, or that
// names git's protections, is refused with what to do.
func TestLiftedRefused(t *testing.T) {
	base := tmp(t)
	ws := filepath.Join(base, "ws")
	home := filepath.Join(base, "home")
	mk(t, ws, ".git/hooks/pre-commit", ".git/config", ".aws/config", ".vscode/settings.json", "ok/a.pem")
	for _, c := range []struct {
		lift, want string
	}{
		{".git/hooks", "allow-git-config"},
		{".git/config", "allow-git-config"},
		{".git/hooks/pre-commit", "allow-git-config"},
		{".aws/config", ws + "/.aws"},
		{".vscode/settings.json", ws + "/.vscode"},
	} {
		in := Input{Workspace: ws, Home: home, Writable: []string{ws}, Lifted: []string{filepath.Join(ws, c.lift)}}
		err := Validate(in)
		var fe *Error
		if !errors.As(err, &fe) || fe.Key != "no-default-deny-at" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("lift %s: %v, want an error of no-default-deny-at naming %q", c.lift, err, c.want)
		}
	}
	// The enclosing protection lifted too: allowed.
	in := Input{Workspace: ws, Home: home, Writable: []string{ws}, Lifted: []string{filepath.Join(ws, ".aws"), filepath.Join(ws, ".aws/config")}}
	if err := Validate(in); err != nil {
		t.Errorf("a lift inside a lifted .aws: %v", err)
	}
}

func TestLiftableRule(t *testing.T) {
	git := ""
	for _, b := range Builtins {
		if b.Git {
			git = b.Name
			break
		}
	}
	if git == "" {
		t.Fatal("no git built-in")
	}
	for rule, want := range map[string]bool{
		"default: *.pem":                      true,
		"default: .env":                       true,
		"default: " + git:                     false,
		"default: *.pem (via symlink /ws/k)":  false,
		"default: *.pem (hard link of /ws/k)": false,
		"default: unreadable directory":       false,
		"deny *.pem":                          false,
	} {
		if got := Liftable(rule); got != want {
			t.Errorf("Liftable(%q) = %v, want %v", rule, got, want)
		}
	}
}
