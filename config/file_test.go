package config

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/policy"
)

func parse(t *testing.T, kind FileKind, doc string) (*File, error) {
	t.Helper()
	return Parse("/cfg/test.toml", []byte(doc), kind, Source{Kind: FromFile, File: "/cfg/test.toml"})
}

func TestParse(t *testing.T) {
	f, err := parse(t, UserConfig, `# a comment
version = 1
write = [
  "~/.cache/go-build",
  "out",
]
memory = "2G"
cpus = 0.5
pids = 256
read-only = true
timeout = "30m"
net = "allow"
settings = ["srt.json"]
no-project-file = true
`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range f.Settings {
		got = append(got, s.Option.Name+"="+s.Value+"@"+strconv.Itoa(s.Source.Line))
	}
	want := []string{"write=~/.cache/go-build@4", "write=out@5", "memory=2G@7", "cpus=0.5@8", "pids=256@9", "read-only=true@10", "timeout=30m@11", "net=allow@12", "settings=/cfg/srt.json@13"}
	if !slices.Equal(got, want) {
		t.Errorf("settings\n got %v\nwant %v", got, want)
	}
	if f.NoProject == nil || !*f.NoProject {
		t.Error("no-project-file not read")
	}
	if s := f.Settings[0].Source; s.Kind != FromFile || s.File != "/cfg/test.toml" || s.Key != "write" || s.Raw != "~/.cache/go-build" {
		t.Errorf("source %+v", s)
	}
}

// Every mistake names the file, the line and the key, and says what is right.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		name string
		kind FileKind
		doc  string
		line int
		key  string
		want string
	}{
		{"unknown key", UserConfig, "write = []\nallowed_domains = [\"x\"]\n", 2, "allowed_domains", "unknown key; did you mean allow-domain?"},
		{"misspelled key", UserConfig, "\n\nmemroy = \"1G\"\n", 3, "memroy", "did you mean memory?"},
		{"bad size", UserConfig, "memory = \"lots\"\n", 1, "memory", `"lots": not a size`},
		{"duration without unit", UserConfig, "timeout = \"10\"\n", 1, "timeout", `"10": add a unit`},
		{"duration as a number", UserConfig, "timeout = 10\n", 1, "timeout", `wrong type: write it like timeout = "30m"`},
		{"bool as string", UserConfig, "read-only = \"yes\"\n", 1, "read-only", "write it like read-only = true"},
		{"list as string", UserConfig, "write = \"~/x\"\n", 1, "write", `write = ["~/.cache/go-build"]`},
		{"number in a list", UserConfig, "allow-domain = [\"a.com\", 3]\n", 1, "allow-domain", "wrong type"},
		{"bad enum", UserConfig, "net = \"bridge\"\n", 1, "net", `"bridge": want none, allow or host`},
		{"bad list element line", UserConfig, "pids = \"x\"\n", 1, "pids", "wrong type"},
		{"syntax", UserConfig, "write = [\n\"a\"\nmemory = 1\n", 3, "", ""},
		{"duplicate", UserConfig, "pids = 1\npids = 2\n", 2, "pids", "already defined"},
		{"table", UserConfig, "[network]\nallow = 1\n", 1, "network", "unknown key"},
		{"version", UserConfig, "version = 2\n", 1, "version", "reads version 1"},
		{"project moves workspace", ProjectConfig, "workspace = \"/\"\n", 1, "workspace", "cannot move the workspace"},
		{"project names a settings file", ProjectConfig, "settings = [\"x.json\"]\n", 1, "settings", "cannot name other files"},
		{"project names a seccomp file", ProjectConfig, "seccomp = \"x.json\"\n", 1, "seccomp", "cannot name other files"},
		{"project turns project files off", ProjectConfig, "no-project-file = true\n", 1, "no-project-file", "only your config file"},
		{"profile key in a config file", UserConfig, "description = \"x\"\n", 1, "description", "unknown key"},
		{"profile names profiles", ProfileFile, "profile = [\"x\"]\n", 1, "profile", "extends"},
		{"profile names settings", ProfileFile, "description = \"d\"\nsettings = [\"s.json\"]\n", 2, "settings", "put settings = [...] in your config file or pass --settings"},
		{"profile creates outside home", ProfileFile, "[[create]]\npath = \"/etc/x\"\n", 1, "create.path", "under the home directory only"},
		{"profile creates dir with content", ProfileFile, "[[create]]\npath = \"~/x\"\ndir = true\ncontent = \"y\"\n", 1, "create.content", "no content"},
		{"profile why not a string", ProfileFile, "[why]\n\"~/x\" = 3\n", 2, "why.~/x", "want a string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(t, c.kind, c.doc)
			var fe *FileError
			if !errors.As(err, &fe) || !errors.Is(err, policy.ErrInvalid) {
				t.Fatalf("got %v, want a FileError", err)
			}
			if fe.File != "/cfg/test.toml" || fe.Line != c.line || fe.Key != c.key || !strings.Contains(fe.Reason, c.want) {
				t.Errorf("got %q (line %d key %q), want line %d key %q with %q", err, fe.Line, fe.Key, c.line, c.key, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("not one line: %q", err)
			}
		})
	}
}

func TestParseProfile(t *testing.T) {
	f, err := Parse("", []byte(`version = 1
description = "demo"
extends = ["base", "other"]
write = ["~/.demo"]
env = ["DEMO_KEY"]

[why]
"~/.demo" = "demo state"

[[create]]
path = "~/.demo"
dir = true
why = "demo wants it"

[[create]]
path = "~/.demo.json"
content = "{}\n"
`), ProfileFile, Source{Kind: FromProfile, Profile: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	if f.Description != "demo" || !slices.Equal(f.Extends, []string{"base", "other"}) || f.Why["~/.demo"] != "demo state" {
		t.Errorf("profile %+v", f)
	}
	if len(f.Creates) != 2 || !f.Creates[0].Dir || f.Creates[1].Content != "{}\n" || f.Creates[1].Source.Line != 15 || f.Creates[0].Why != "demo wants it" {
		t.Errorf("creates %+v", f.Creates)
	}
	if s := f.Settings[0].Source; s.Kind != FromProfile || s.Profile != "demo" || s.Line != 4 || s.where() != "profile demo (built in, line 4)" {
		t.Errorf("source %+v %q", s, s.where())
	}
}

// The parser takes any bytes: errors, never panics, always one line.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"write = [\"a\"]\n", "memory = \"1G\"\n[why]\na = \"b\"\n", "[[create]]\npath = \"~/x\"\n", "x = [[1], {a = 2}]", "\"\\u0000\" = 1", "a.b.c = 1", "[args]\ncodex = {args = [\"-c\"], unless = [\"-s\"]}\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		for _, kind := range []FileKind{UserConfig, ProjectConfig, ProfileFile} {
			_, err := Parse("/f.toml", []byte(doc), kind, Source{Kind: FromFile, File: "/f.toml"})
			if err != nil && !errors.Is(err, policy.ErrInvalid) {
				t.Fatalf("error is not ErrInvalid: %v", err)
			}
		}
	})
}

// registries = [TOOL] names tools jail knows; anything else is an error
// naming the line and the key.
func TestProfileRegistriesKey(t *testing.T) {
	src := Source{Kind: FromProfile, Profile: "p"}
	f, err := Parse("", []byte("version = 1\nregistries = [\"npm\", \"go\"]\n"), ProfileFile, src)
	if err != nil || len(f.Registries) != 2 || f.Registries[0].Tool != "npm" || f.Registries[1].Tool != "go" {
		t.Fatalf("got %+v %v", f, err)
	}
	for _, bad := range []string{`registries = ["gradle"]`, `registries = "npm"`, `registries = [1]`} {
		_, err := Parse("", []byte(bad+"\n"), ProfileFile, src)
		var fe *FileError
		if !errors.As(err, &fe) || fe.Key != "registries" || fe.Line != 1 {
			t.Errorf("%s: got %v, want a FileError at line 1, key registries", bad, err)
		}
	}
	if _, err := Parse("c.toml", []byte(`registries = ["npm"]`+"\n"), UserConfig, Source{Kind: FromFile}); err == nil {
		t.Errorf("registries in a config file: accepted, want unknown key (profiles only)")
	}
}

// [refused] names hosts a profile's program does without, each with a
// string saying so; a pattern, a bad name or a non-string is an error
// naming the key; a config file has no such key.
func TestProfileRefusedKey(t *testing.T) {
	src := Source{Kind: FromProfile, Profile: "p"}
	f, err := Parse("", []byte("version = 1\n[refused]\n\"GitHub.com\" = \"its marketplace: it goes on\"\n"), ProfileFile, src)
	if err != nil || len(f.Refused) != 1 || f.Refused["github.com"] != "its marketplace: it goes on" {
		t.Fatalf("got %+v %v", f, err)
	}
	wantKeyErrors(t, src, "refused", []string{"[refused]\n\"*.github.com\" = \"x\"", "[refused]\n\"a b\" = \"x\"", "[refused]\n\"github.com\" = 1", "[refused]\n\"github.com\" = \" \"", "refused = \"github.com\""})
	if _, err := Parse("c.toml", []byte("[refused]\n\"github.com\" = \"x\"\n"), UserConfig, Source{Kind: FromFile}); err == nil {
		t.Errorf("[refused] in a config file: accepted, want unknown key (profiles only)")
	}
}

// wantKeyErrors parses each profile text of bads, which must fail with a
// FileError on key (or a key under it).
func wantKeyErrors(t *testing.T, src Source, key string, bads []string) {
	t.Helper()
	for _, bad := range bads {
		_, err := Parse("", []byte(bad+"\n"), ProfileFile, src)
		var fe *FileError
		if !errors.As(err, &fe) || !strings.HasPrefix(fe.Key, key) {
			t.Errorf("%q: got %v, want a FileError on %s", bad, err, key)
		}
	}
}

// [args] holds, per program, arguments a profile adds when the command is
// that program; anything else is an error naming the line and the key.
func TestProfileArgsKey(t *testing.T) {
	src := Source{Kind: FromProfile, Profile: "p"}
	f, err := Parse("", []byte("version = 1\n[args]\ncodex = [\"-c\", \"k=v\"]\n"), ProfileFile, src)
	if err != nil || len(f.Args) != 1 || f.Args[0].Program != "codex" || strings.Join(f.Args[0].Args, " ") != "-c k=v" || f.Args[0].Source.Line != 3 {
		t.Fatalf("got %+v %v", f, err)
	}
	// The table form: the arguments, and the beginnings of the user's
	// own arguments that leave them out.
	f, err = Parse("", []byte("version = 1\n[args]\ncodex = {args = [\"--sandbox\", \"x\"], unless = [\"--sandbox\", \"-s\"]}\n"), ProfileFile, src)
	if err != nil || len(f.Args) != 1 || strings.Join(f.Args[0].Args, " ") != "--sandbox x" || strings.Join(f.Args[0].Unless, " ") != "--sandbox -s" || f.Args[0].Source.Line != 3 {
		t.Fatalf("table form: got %+v %v", f, err)
	}
	f, err = Parse("", []byte("version = 1\n[args.codex]\nargs = [\"--sandbox\", \"x\"]\nunless = [\"-s\"]\n"), ProfileFile, src)
	if err != nil || len(f.Args) != 1 || strings.Join(f.Args[0].Args, " ") != "--sandbox x" || strings.Join(f.Args[0].Unless, " ") != "-s" {
		t.Fatalf("[args.codex] form: got %+v %v", f, err)
	}
	wantKeyErrors(t, src, "args", []string{"args = [\"-c\"]", "[args]\ncodex = \"-c\"", "[args]\ncodex = [1]", "[args]\n\"/bin/codex\" = [\"-c\"]",
		"[args]\ncodex = {unless = [\"-s\"]}", "[args]\ncodex = {args = [\"-c\"], unless = \"-s\"}", "[args]\ncodex = {args = [\"-c\"], unless = [\"\"]}",
		"[args]\ncodex = {args = [\"-c\"], unles = [\"-s\"]}", "[args]\ncodex = {args = [\"-c\"], unless = [1]}"})
	if _, err := Parse("c.toml", []byte("[args]\ncodex = [\"-c\"]\n"), UserConfig, Source{Kind: FromFile}); err == nil {
		t.Errorf("[args] in a config file: accepted, want unknown key (profiles only)")
	}
}
