package sandbox

import (
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/fsrules"
)

func TestFixtureNote(t *testing.T) {
	hide := func(p, rule string) fsrules.Mask {
		return fsrules.Mask{Path: "/ws/" + p, Kind: fsrules.Hide, Rule: rule}
	}
	for _, c := range []struct {
		name  string
		masks []fsrules.Mask
		want  string // "" for no note; else words it must hold
	}{
		{"none", nil, ""},
		{"outside test data", []fsrules.Mask{hide(".env", "default: .env"), hide("keys/a.pem", "default: *.pem")}, ""},
		{"one key", []fsrules.Mask{hide("pkg/tls/testdata/server.key", "default: *.key")},
			"test data: hidden in /ws: pkg/tls/testdata/server.key (built-in *.key) under pkg/tls/testdata; if your tests read them, `no-default-deny-at` pkg/tls/testdata shows that tree"},
		{"the fullest tree first", []fsrules.Mask{
			hide("a/testdata/k.pem", "default: *.pem"),
			hide("src/test/resources/ks.jks", "default: *.jks"), hide("src/test/resources/t.p12", "default: *.p12"),
		}, "hidden in /ws: src/test/resources/ks.jks (built-in *.jks) and 1 more under src/test (and 1 more such tree); if your tests read them, `no-default-deny-at` src/test shows"},
		{"read-only, a user's deny, a link's", []fsrules.Mask{
			{Path: "/ws/test/.vscode", Kind: fsrules.ReadOnly, Dir: true, Rule: "default: .vscode/"},
			hide("test/secret.txt", "deny test/secret.txt"),
			hide("test/alias", "default: *.pem (via symlink /ws/x.pem)"),
			hide("test/other", "default: *.pem (hard link of /ws/k.pem)"),
		}, ""},
		{"no built-in's own hit", []fsrules.Mask{
			{Path: "/ws/tests/sub", Kind: fsrules.Hide, Dir: true, Rule: "default: unreadable directory"},
			{Path: "/ws/tests/proc", Kind: fsrules.Hide, Dir: true, Rule: "default: proc mounted in a visible tree"},
			hide("tests/x.key", "default: no-such-built-in"),
		}, ""},
		{"the test directory itself hidden", []fsrules.Mask{{Path: "/ws/tests", Kind: fsrules.Hide, Dir: true, Rule: "default: unreadable directory"}}, ""},
		{"a dependency's own test keys", []fsrules.Mask{
			hide("node_modules/agent/test/fixtures/snakeoil.key", "default: *.key"),
			hide("vendor/golang.org/x/net/testdata/k.pem", "default: *.pem"),
			hide(".venv/lib/python3.12/site-packages/x/tests/k.pem", "default: *.pem"),
			hide("test/node_modules/y/k.pem", "default: *.pem"),
		}, ""},
		{"another workspace", []fsrules.Mask{{Path: "/ws2/testdata/k.pem", Kind: fsrules.Hide, Rule: "default: *.pem"}}, ""},
	} {
		got := fixtureNote(c.masks, "/ws")
		if (got == "") != (c.want == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if got != "" && !shownNote(got) {
			t.Errorf("%s: the note is not said at start: %q", c.name, got)
		}
	}
}
