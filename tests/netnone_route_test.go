//go:build linux

package tests

import (
	"strings"
	"testing"
)

// TestNetNoneRoutesExact: --net none's sandbox has exactly the routes of a
// fresh namespace's loopback plus jail's fake range on lo (the local route
// that sends a connect to a name jail's DNS handed out to the refusal
// listeners), made with the same attributes the netlink library gave it
// (type local, proto boot, scope host, table local): init now sends that
// request itself (nsnet's addLocalRoute) and on its own thread. Nothing
// else, in any table, for either family.
func TestNetNoneRoutesExact(t *testing.T) {
	r := sh(t, runOpts{env: refusalEnv(t)}, `ip -d -4 route show table all; ip -d -6 route show table all; ip -d -4 rule; ip -6 rule`, "--net", "none")
	mustCode(t, r, 0)
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		got = append(got, strings.Join(strings.Fields(l), " "))
	}
	want := []string{
		"local 127.0.0.0/8 dev lo table local proto kernel scope host src 127.0.0.1",
		"local 127.0.0.1 dev lo table local proto kernel scope host src 127.0.0.1",
		"broadcast 127.255.255.255 dev lo table local proto kernel scope link src 127.0.0.1",
		"local 198.18.0.0/15 dev lo table local proto boot scope host",
		"local ::1 dev lo table local proto kernel scope global metric 0 pref medium",
		"0: from all lookup local proto kernel",
		"32766: from all lookup main proto kernel",
		"32767: from all lookup default proto kernel",
		"0: from all lookup local",
		"32766: from all lookup main",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("routes and rules under --net none:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
