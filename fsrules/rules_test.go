package fsrules

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// rulesHome makes a home and a workspace with what the built-ins protect
// (keys, credentials, shell startup files, tool configurations, a git
// directory, a project's secrets), as a real home has them.
func rulesHome(t *testing.T) (base, home, ws string) {
	base = tmp(t)
	home, ws = filepath.Join(base, "home"), filepath.Join(base, "ws")
	mk(t, home, ".ssh/id_ed25519", ".ssh/config", ".aws/credentials", ".bashrc", ".profile", ".gitconfig",
		".config/gh/hosts.yml", ".npmrc", ".local/bin/tool", ".docker/config.json", ".netrc",
		".config/git/config", ".cargo/credentials.toml", ".kube/config", "notes.txt")
	mk(t, ws, ".env", ".envrc", "secrets/key.pem", "src/main.go", "src/.env.local", ".git/config",
		".git/hooks/pre-commit", ".git/HEAD", ".vscode/settings.json", "deep/a/b/server.PEM", "node_modules/x/.npmrc")
	mk(t, base, "home2/.ssh/id_rsa", "ws2/.env", "ro/.aws/credentials")
	return base, home, ws
}

// Rules compiled for one Input are used by Validate and Expand only for an
// Input with the same values (Workspace, Home, the homes' anchors, Deny,
// NoDefaultDeny, AllowGitConfig, the list of built-ins): given rules of
// any other values, Expand and Validate answer what they answer without
// them. And with the same values they are used, not compiled again.
func TestRulesOnlyForTheirInputs(t *testing.T) {
	base, home, ws := rulesHome(t)
	a := Input{Workspace: ws, Home: home, Deny: []string{"secrets/**", "~/notes.txt"}, Writable: []string{ws}}
	ra, err := CheckRules(a)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		mod   func(in *Input)
		reuse bool // the same rule values: ra must be used
	}{
		{"same", func(in *Input) {}, true},
		{"other roots", func(in *Input) {
			in.Readable = []string{filepath.Join(base, "ro")}
			in.Homes = []string{"/root"} // an anchor anyway
		}, true},
		{"other deny", func(in *Input) { in.Deny = []string{"**/*.pem"} }, false},
		{"deny added", func(in *Input) { in.Deny = append(slices.Clone(in.Deny), "src/**") }, false},
		{"no deny", func(in *Input) { in.Deny = nil }, false},
		{"deny folded", func(in *Input) { in.Deny = []string{"(?i)secrets/**", "~/notes.txt"} }, false},
		{"other workspace", func(in *Input) {
			in.Workspace = filepath.Join(base, "ws2")
			in.Writable = []string{in.Workspace}
		}, false},
		{"other home", func(in *Input) { in.Home = filepath.Join(base, "home2") }, false},
		{"another home's anchor", func(in *Input) { in.Homes = []string{filepath.Join(base, "home2")} }, false},
		{"no default deny", func(in *Input) { in.NoDefaultDeny = true }, false},
		{"allow git config", func(in *Input) { in.AllowGitConfig = true }, false},
		{"built-ins changed", func(in *Input) {
			saved := Builtins
			Builtins = append(slices.Clip(Builtins), Builtin{Name: "notes.txt", Kind: Hide})
			t.Cleanup(func() { Builtins = saved })
		}, false},
		{"a built-in changed in place", func(in *Input) {
			saved := slices.Clone(Builtins)
			for i := range Builtins {
				if Builtins[i].Name == ".env" {
					Builtins[i].Kind = ReadOnly
				}
			}
			t.Cleanup(func() { copy(Builtins, saved) })
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := a
			b.Deny, b.Writable = slices.Clone(a.Deny), slices.Clone(a.Writable)
			c.mod(&b)
			want, wantErr := Expand(b)
			wantV := Validate(b)
			with := b
			with.Rules = ra
			got, gotErr := Expand(with)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("Expand with the other rules: error %v, without them %v", gotErr, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Expand with the rules of other values differs from Expand alone:\n with: %+v\nalone: %+v", got, want)
			}
			if gotV := Validate(with); fmt.Sprint(gotV) != fmt.Sprint(wantV) {
				t.Errorf("Validate with the other rules: %v, alone %v", gotV, wantV)
			}
			cmp, err := compile(with)
			if err != nil {
				t.Fatal(err)
			}
			if used := cmp.rules == ra; used != c.reuse {
				t.Errorf("rules compiled for other values used: %v, want %v", used, c.reuse)
			}
		})
	}
}

// A conflict found with rules given is the one found without them: the
// check of the paths runs for every Input.
func TestRulesCheckPathsEachTime(t *testing.T) {
	_, home, ws := rulesHome(t)
	a := Input{Workspace: ws, Home: home, Deny: []string{"secrets/**"}, Writable: []string{ws}}
	ra, err := CheckRules(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []Input{
		{Readable: []string{filepath.Join(ws, "secrets")}},
		{Writable: []string{filepath.Join(home, ".ssh")}},
		{Writable: []string{filepath.Join(ws, ".git", "hooks")}},
		{Readable: []string{filepath.Join(home, ".local", "bin")}},
	} {
		in.Workspace, in.Home, in.Deny, in.Rules = a.Workspace, a.Home, a.Deny, ra
		got := Validate(in)
		in.Rules = nil
		want := Validate(in)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%v %v: with the rules %v, alone %v", in.Readable, in.Writable, got, want)
		}
		if (in.Readable != nil && in.Readable[0] == filepath.Join(ws, "secrets") || in.Writable != nil) && want == nil {
			t.Errorf("%v %v: no conflict found", in.Readable, in.Writable)
		}
	}
}

// A root's own entry, asked of every rule in order (everyRule), is
// decided as with the candidates of an index of the rules (indexRules):
// the same answer and the same masks, for roots named by the built-ins
// and by --deny patterns, files, directories and symlinks.
func TestRootEntryEveryRuleSameAsIndex(t *testing.T) {
	base, home, ws := rulesHome(t)
	mk(t, base, "links/")
	for _, l := range [][2]string{{filepath.Join(ws, ".env"), "links/env"}, {filepath.Join(home, ".ssh"), "links/.ssh"}, {filepath.Join(ws, "secrets"), "links/.aws"}} {
		if err := os.Symlink(l[0], filepath.Join(base, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := CheckRules(Input{Workspace: ws, Home: home, Deny: []string{"secrets/**", "~/notes.txt", "(?i)**/*.PEM", filepath.Join(base, "links", "env")},
		Homes: []string{filepath.Join(base, "home2")}, Writable: []string{ws}})
	if err != nil {
		t.Fatal(err)
	}
	roots := []string{ws, filepath.Join(ws, ".env"), filepath.Join(ws, ".vscode"), filepath.Join(ws, ".git", "hooks"), filepath.Join(ws, ".git", "config"),
		filepath.Join(ws, "secrets"), filepath.Join(ws, "secrets", "key.pem"), filepath.Join(ws, "deep", "a", "b", "server.PEM"),
		filepath.Join(home, ".ssh"), filepath.Join(home, ".bashrc"), filepath.Join(home, ".local", "bin"), filepath.Join(home, "notes.txt"),
		filepath.Join(base, "home2", ".ssh"), filepath.Join(base, "links", "env"), filepath.Join(base, "links", ".ssh"), filepath.Join(base, "links", ".aws")}
	hits := 0
	for _, rules := range [][]rule{rs.all, rs.user} {
		for _, root := range roots {
			for _, writable := range []bool{true, false} {
				st, err := os.Lstat(root)
				if err != nil {
					t.Fatal(err)
				}
				newWalker := func() *walker {
					return &walker{masks: map[string]Mask{}, hits: map[string]int{}, links: map[[2]uint64]linkInfo{}, rootWritable: writable, writable: []string{ws}}
				}
				a, b := newWalker(), newWalker()
				dir, name, isDir, isLink := filepath.Dir(root), filepath.Base(root), st.IsDir(), st.Mode()&os.ModeSymlink != 0
				ga := a.entry(dir, name, isDir, isLink, rules, a.everyRule(len(rules)), nil)
				gb := b.entry(dir, name, isDir, isLink, rules, indexRules(rules).candidates(name, nil), nil)
				if ga != gb || !reflect.DeepEqual(a.masks, b.masks) || !reflect.DeepEqual(a.hits, b.hits) || !reflect.DeepEqual(a.links, b.links) {
					t.Errorf("%s (writable %v): every rule: %v %v %v; indexed: %v %v %v", root, writable, ga, a.masks, a.hits, gb, b.masks, b.hits)
				}
				hits += len(b.hits)
			}
		}
	}
	if hits < 10 {
		t.Errorf("only %d rules hit the roots: the table tests little", hits)
	}
}
