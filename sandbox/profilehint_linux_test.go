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
		d := netDenial(ev, hints)
		if got := strings.Contains(d.text, "`profile` tool"); got != c.want {
			t.Errorf("%s:%d: %q: profile named %v, want %v", c.name, c.port, d.text, got, c.want)
		}
		if strings.Contains(d.entry.Allow, "profile") || strings.Contains(d.entry.Reason, "profile") {
			t.Errorf("%s:%d: the sandbox's record names the profile: %+v", c.name, c.port, d.entry)
		}
		if plain := netDenial(ev, nil); strings.Contains(plain.text, "profile") {
			t.Errorf("%s:%d: without hints: %q", c.name, c.port, plain.text)
		}
	}
}
