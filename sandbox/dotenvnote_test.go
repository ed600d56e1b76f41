package sandbox

import (
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/fsrules"
)

// The .env files masked where a program looks for them (the workspace's
// top level, the start directory and those between) are named, relative
// to the start directory; others, a link's or hard link's mask, a
// directory and a read-only file are not.
func TestDotenvNote(t *testing.T) {
	hide := func(p, rule string) fsrules.Mask { return fsrules.Mask{Path: p, Kind: fsrules.Hide, Rule: rule} }
	for _, c := range []struct {
		name     string
		masks    []fsrules.Mask
		cwd      string
		want     string // the names, as the note starts
		lift     string
		wantNone bool
	}{
		{name: "top level", masks: []fsrules.Mask{hide("/ws/.env", "default: .env"), hide("/ws/.env.local", "default: .env.*")}, cwd: "/ws",
			want: ".env, .env.local are unreadable", lift: "(`no-default-deny-at` .env)"},
		{name: "from a subfolder", masks: []fsrules.Mask{hide("/ws/.env", "default: .env"), hide("/ws/app/prod.env", "default: *.env")}, cwd: "/ws/app/src",
			want: "../../.env, ../prod.env are unreadable", lift: "(`no-default-deny-at` ../../.env)"},
		{name: "one", masks: []fsrules.Mask{hide("/ws/.env", "default: .env")}, cwd: "/ws", want: ".env is unreadable", lift: "loads it "},
		{name: "many", masks: []fsrules.Mask{hide("/ws/.env", "default: .env"), hide("/ws/.env.a", "default: .env.*"), hide("/ws/.env.b", "default: .env.*"),
			hide("/ws/.env.c", "default: .env.*"), hide("/ws/.env.d", "default: .env.*"), hide("/ws/.env.e", "default: .env.*")}, cwd: "/ws",
			want: ".env, .env.a, .env.b, .env.c and 2 more are unreadable"},
		{name: "elsewhere in the tree", masks: []fsrules.Mask{hide("/ws/other/.env", "default: .env"), hide("/ws/app/sub/.env", "default: .env")}, cwd: "/ws/app", wantNone: true},
		{name: "not a .env rule", masks: []fsrules.Mask{hide("/ws/k.pem", "default: *.pem"), hide("/ws/.env", "default: .env (hard link of /x/.env)"),
			{Path: "/ws/.env", Kind: fsrules.ReadOnly, Rule: "default: .env"}, {Path: "/ws/.env", Kind: fsrules.Hide, Dir: true, Rule: "default: .env"}}, cwd: "/ws", wantNone: true},
		{name: "outside the workspace", masks: []fsrules.Mask{hide("/.env", "default: .env")}, cwd: "/ws", wantNone: true},
	} {
		got := dotenvNote(c.masks, "/ws", c.cwd)
		if c.wantNone {
			if got != "" {
				t.Errorf("%s: said %q", c.name, got)
			}
			continue
		}
		if !strings.HasPrefix(got, dotenvNotePrefix+c.want) || !strings.Contains(got, "\"Permission denied\"") || !strings.Contains(got, c.lift) || !strings.Contains(got, "`env` NAME") {
			t.Errorf("%s:\n got %q\nwant it to start %q and hold %q", c.name, got, dotenvNotePrefix+c.want, c.lift)
		}
	}
}
