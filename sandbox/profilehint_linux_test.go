package sandbox

import (
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/netproxy"
	"github.com/jail-sandbox/jail/policy"
)

// A refusal of a name the profile named like the command allows says so,
// to the user only; any other refusal is as before.
func TestNetDenialProfileHint(t *testing.T) {
	hints := []policy.ProfileHint{{Profile: "tool", Domains: []string{"api.tool.test", "*.cdn.tool.test", "other.test:8443"}}}
	for _, c := range []struct {
		name string
		port uint16
		hint string
		want bool
	}{
		{"api.tool.test", 443, "`allow-domain` api.tool.test", true},
		{"x.cdn.tool.test", 443, "`allow-domain` x.cdn.tool.test", true},
		{"other.test", 8443, "`allow-domain` other.test:8443", true},
		{"other.test", 443, "`allow-domain` other.test", false}, // the profile allows another port
		{"api.tool.test.evil", 443, "`allow-domain` api.tool.test.evil", false},
		{"api.tool.test", 443, "", false}, // no allow rule undoes it (deny-domain)
		{"", 443, "`allow-ip` 192.0.2.1/32:443", false},
	} {
		ev := netproxy.Event{Name: c.name, Port: c.port, Addr: "192.0.2.1", Reason: "not in allowlist", Hint: c.hint}
		d := netDenial(ev, hints, false, nil)
		if got := strings.Contains(d.text, "`profile` tool"); got != c.want {
			t.Errorf("%s:%d: %q: profile named %v, want %v", c.name, c.port, d.text, got, c.want)
		}
		if strings.Contains(d.entry.Allow, "profile") || strings.Contains(d.entry.Reason, "profile") {
			t.Errorf("%s:%d: the sandbox's record names the profile: %+v", c.name, c.port, d.entry)
		}
		if plain := netDenial(ev, nil, false, nil); strings.Contains(plain.text, "profile") {
			t.Errorf("%s:%d: without hints: %q", c.name, c.port, plain.text)
		}
	}
}

// A refusal of port 22 (git over ssh) names --ssh-agent beside the domain
// where the run passes no agent: the domain alone leads to "Permission
// denied (publickey)". Not where it does, nor for another port, a raw
// address or a refusal no option undoes.
func TestNetDenialSSHAgent(t *testing.T) {
	const want = " and `ssh-agent` (ssh signs with your agent's keys)"
	for _, c := range []struct {
		name  string
		port  uint16
		hint  string
		agent bool
		say   bool
	}{
		{"github.com", 22, "`allow-domain` github.com", false, true},
		{"github.com", 22, "`allow-domain` github.com", true, false},
		{"github.com", 443, "`allow-domain` github.com", false, false},
		{"", 22, "`allow-ip` 192.0.2.1/32:22", false, false},
		{"github.com", 22, "", false, false},
	} {
		ev := netproxy.Event{Name: c.name, Port: c.port, Addr: "192.0.2.1", Reason: "not in allowlist", Hint: c.hint}
		d := netDenial(ev, nil, c.agent, nil)
		if got := strings.HasSuffix(d.text, want); got != c.say {
			t.Errorf("%s:%d agent=%v: %q: names ssh-agent %v, want %v", c.name, c.port, c.agent, d.text, got, c.say)
		}
		if strings.Contains(d.entry.Allow, "ssh-agent") {
			t.Errorf("the sandbox's record names ssh-agent: %+v", d.entry)
		}
	}
	// A Host alias of the user's ssh config: the alias's HostName is the
	// domain to allow, beside --ssh-agent; not with the agent there (ssh
	// then knows the alias), nor for a name that is no alias.
	hosts := func(n string) string { return map[string]string{"gh-work": "github.com"}[n] }
	for _, c := range []struct {
		name  string
		agent bool
		want  string
	}{
		{"gh-work", false, "refused gh-work:22 - add `ssh-agent` and `allow-domain` github.com (gh-work is a Host of your ~/.ssh/config, for github.com)"},
		{"gh-work", true, "refused gh-work:22 - add `allow-domain` gh-work"},
		{"gitlab.com", false, "refused gitlab.com:22 - add `allow-domain` gitlab.com" + want},
	} {
		ev := netproxy.Event{Name: c.name, Port: 22, Reason: "not in allowlist", Hint: "`allow-domain` " + c.name}
		if d := netDenial(ev, nil, c.agent, hosts); d.text != c.want {
			t.Errorf("%s agent=%v: %q, want %q", c.name, c.agent, d.text, c.want)
		}
	}
}
