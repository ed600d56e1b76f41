//go:build linux

package tests

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// Egress of exec'd commands goes through the sandbox's allowlist and into
// its trail, like the main command's (the test hosts are loopback or a
// network namespace of the test's own).
func TestSessionExecEgress(t *testing.T) {
	f := netFixture(t)
	netControl(t, "raw connect to "+f.rawIP, netHostCurl(t, netURL(f.rawIP, f.http, "/")))
	ws := workspace(t)
	name := "n" + strings.ReplaceAll(marker(), ".", "")
	flags := netFlags([]string{"--allow-domain", fmt.Sprintf("%s:%d", netAPI, f.http)}, f.pin(netAPI), f.ipFlags(f.http))
	startSession(t, ws, name, flags...)
	curl := func(url string) result {
		return sessJail(t, ws, "", "exec", name, "--", "/usr/bin/curl", "-sS", "--noproxy", "*", "--connect-timeout", "5", "--max-time", "10", url)
	}
	if r := curl(netURL(netAPI, f.http, "/")); r.code != 0 || !strings.Contains(r.stdout, netOK) {
		t.Fatalf("the allowed name through exec: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	// The proxy variables the main command gets (proxy-aware clients)
	// are an exec'd command's too (the gateway is each sandbox's own).
	main := sessJail(t, ws, "", append(append([]string{}, flags...), "--", "printenv", "HTTPS_PROXY")...)
	execd := sessJail(t, ws, "", "exec", name, "--", "printenv", "HTTPS_PROXY")
	if !strings.HasPrefix(main.stdout, "http://") || !strings.HasPrefix(execd.stdout, "http://") {
		t.Fatalf("HTTPS_PROXY: jail -- has %q, jail exec has %q", main.stdout, execd.stdout)
	}
	if r := curl(netURL(f.rawIP, f.http, "/")); r.code == 0 && strings.Contains(r.stdout, netOK) {
		t.Fatalf("a raw address through exec got through the allowlist: %q", r.stdout)
	}
	in := sessInspect(t, name)
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(in.Audit)
		var allowed, denied bool
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.Contains(l, `"type":"net"`) {
				continue
			}
			allowed = allowed || (strings.Contains(l, `"decision":"allow"`) && strings.Contains(l, `"name":"`+netAPI+`"`))
			denied = denied || (strings.Contains(l, `"decision":"deny"`) && strings.Contains(l, `"address":"`+f.rawIP+`"`))
		}
		if allowed && denied {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the trail lacks the exec'd commands' flows (allowed %v, denied %v):\n%s", allowed, denied, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
