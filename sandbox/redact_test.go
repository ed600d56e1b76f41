package sandbox

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/policy"
)

func TestRedactor(t *testing.T) {
	p := policy.Default()
	p.Env = []string{"TOKEN", "SHORT"}
	p.SetEnv = []string{"KEY=Abc-Secret-1", "LONGKEY=Abc-Secret-1-and-more", "ON=1", "GONE=overridden-value"}
	env := []string{"PATH=/bin", "TOKEN=tok_ABCDEF", "SHORT=ab", "KEY=Abc-Secret-1", "LONGKEY=Abc-Secret-1-and-more", "ON=1"}
	x := newRedactor(&p, env)
	tests := []struct{ in, want string }{
		{"curl -H tok_ABCDEF", "curl -H [redacted $TOKEN]"},
		{"tok_abcdef.exfil.example", "[redacted $TOKEN].exfil.example"}, // DNS lower-cases
		{"x Abc-Secret-1-and-more y", "x [redacted $LONGKEY] y"},        // longest first
		{"Abc-Secret-1Abc-Secret-1", "[redacted $KEY][redacted $KEY]"},
		{"ab 1 on", "ab 1 on"},                   // too short to search for
		{"overridden-value", "[redacted $GONE]"}, // a --setenv value even when not passed on
		{"/bin/true", "/bin/true"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := x.str(tt.in); got != tt.want {
			t.Errorf("str(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	argv := []string{"jail", "--setenv", "KEY=Abc-Secret-1", "-setenv=ON=1", "--env", "TOKEN", "-w", "/x/tok_ABCDEF", "--", "sh", "-c", "echo tok_ABCDEF --setenv X=y"}
	want := []string{"jail", "--setenv", "KEY=[redacted]", "-setenv=ON=[redacted]", "--env", "TOKEN", "-w", "/x/[redacted $TOKEN]", "--", "sh", "-c", "echo [redacted $TOKEN] --setenv X=y"}
	if got := x.argv(argv); !slices.Equal(got, want) {
		t.Errorf("argv:\n got %q\nwant %q", got, want)
	}
	ev := x.event(audit.Exec{Path: "/tmp/tok_ABCDEF", Argv: []string{"a", "Abc-Secret-1"}, Cwd: "/w/tok_ABCDEF"}).(audit.Exec)
	if strings.Contains(ev.Path+ev.Cwd+strings.Join(ev.Argv, " "), "Secret") || strings.Contains(ev.Path, "tok_") {
		t.Errorf("exec event not redacted: %+v", ev)
	}
	q := x.event(audit.Quarantine{Path: "/w/tok_ABCDEF/.git", Reason: "makes git use /x/tok_ABCDEF", Stored: "/q/001-tok_ABCDEF", Left: "/w/tok_ABCDEF/.jail-q"}).(audit.Quarantine)
	if strings.Contains(q.Path+q.Reason+q.Stored+q.Left, "tok_") {
		t.Errorf("quarantine event not redacted: %+v", q)
	}
	plan := &Plan{Env: env, Workspace: "/w/tok_ABCDEF"}
	b, _ := json.Marshal(x.startPolicy(&p, plan, nil))
	for _, v := range []string{"tok_ABCDEF", "Abc-Secret", "ON=1", "SHORT=ab", "overridden"} {
		if strings.Contains(string(b), v) {
			t.Errorf("start policy carries %q: %s", v, b)
		}
	}
	for _, n := range []string{`"KEY"`, `"TOKEN"`, `"SHORT"`, `"ON"`} {
		if !strings.Contains(string(b), n) {
			t.Errorf("start policy lost the name %s: %s", n, b)
		}
	}
	var none *redactor
	if none.str("x") != "x" || none.event(audit.Exit{Error: "e"}).(audit.Exit).Error != "e" {
		t.Error("a nil redactor must pass everything")
	}
}
