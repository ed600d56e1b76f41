package homeleft

import (
	"strings"
	"testing"
)

func TestQuiet(t *testing.T) {
	for rel, want := range map[string]bool{
		".cache": true, ".npm": true, "go": true, ".bash_history": true, ".python_history": true,
		".node_repl_history": true, ".local/share/pnpm": true, ".config/go/telemetry": true, ".lesshst": true, ".local/state/jail": true, ".local/share/applications": true, ".config/configstore": true,
		".qwen": false, ".gitconfig": false, ".config/amp": false, ".config/go/env": false, ".local/bin": false,
		"history.txt": false, ".yarnrc": false,
	} {
		if got := quiet(rel); got != want {
			t.Errorf("quiet(%q) = %v, want %v", rel, got, want)
		}
	}
}

func TestNote(t *testing.T) {
	qwen, amp, gitconfig := Entry{".qwen", true}, Entry{".config/amp", true}, Entry{".gitconfig", false}
	none := func(Entry) bool { return false }
	notGit := func(e Entry) bool { return e.Rel != ".gitconfig" }
	for _, c := range []struct {
		name     string
		ents     []Entry
		profile  string
		keepable func(Entry) bool
		want     []string
		not      []string
	}{
		{"nothing", nil, "", nil, nil, nil},
		{"a directory", []Entry{amp, qwen}, "", nil,
			[]string{"what the run wrote there with it: ~/.config/amp/, ~/.qwen/ (a sign-in", "; to keep one, make it in your home and give it: mkdir -p ~/.config/amp, then --write ~/.config/amp"},
			[]string{"--profile"}},
		{"a directory is the example before a file", []Entry{gitconfig, qwen}, "", notGit,
			[]string{"~/.gitconfig, ~/.qwen/", "mkdir -p ~/.qwen, then --write ~/.qwen"}, nil},
		{"a file that --write may give", []Entry{{".toolrc", false}}, "", nil,
			[]string{"touch ~/.toolrc, then --write ~/.toolrc"}, nil},
		{"none --write may give", []Entry{gitconfig}, "", none,
			[]string{"~/.gitconfig (a sign-in", "; jail keeps these read-only in your home: make such a change outside jail"},
			[]string{"--write"}},
		{"a profile named like the command", []Entry{{".codex", true}}, "codex", nil,
			[]string{"; to keep one, run with --profile codex (it keeps codex's own state), or make it in your home and give it: mkdir -p ~/.codex, then --write ~/.codex"}, nil},
		{"a profile, nothing --write may give", []Entry{gitconfig}, "codex", none,
			[]string{"; --profile codex keeps codex's own state"}, []string{"--write", "outside jail"}},
		{"more than six", []Entry{{".a", true}, {".b", true}, {".c", true}, {".d", true}, {".e", true}, {".f", true}, {".g", true}, {".h", true}}, "", nil,
			[]string{"~/.f/ and 2 more ("}, []string{".g"}},
		{"a long name clipped", []Entry{{strings.Repeat("x", 100), true}}, "", nil,
			[]string{"~/" + strings.Repeat("x", 60) + ".../"}, []string{strings.Repeat("x", 61)}},
	} {
		got := Note(c.ents, c.profile, c.keepable)
		if (got == "") != (len(c.ents) == 0) {
			t.Errorf("%s: %q", c.name, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", c.name, got, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(got, w) {
				t.Errorf("%s: %q holds %q", c.name, got, w)
			}
		}
	}
}
