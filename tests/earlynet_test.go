//go:build linux

package tests

import (
	"strings"
	"testing"
	"time"
)

// TestNetServersAnswerFirstInstruction: the network's servers (the
// sandbox's DNS and its refusal listeners under --net none) start just
// after the supervisor's go, while the agent starts. A query and a connect
// that are the agent's very first instructions are still answered, by the
// refusal, at once: they wait in the sockets' queues, never for a timeout
// and never unanswered.
func TestNetServersAnswerFirstInstruction(t *testing.T) {
	prog := `import socket, sys
try:
    a = socket.getaddrinfo("` + refusedHost + `", 443, type=socket.SOCK_STREAM)[0][4]
except OSError as e:
    print("dns error", e); sys.exit(3)
s = socket.socket(socket.AF_INET6 if ":" in a[0] else socket.AF_INET)
s.settimeout(10)
try:
    s.connect(a)
    s.sendall(b"\x16\x03\x01\x00\x05hello")
    print("answered", len(s.recv(100)))
except OSError as e:
    print("connect error", e)
`
	for i := range 3 {
		start := time.Now()
		r := run(t, runOpts{env: refusalEnv(t)}, "--net", "none", "--", "/usr/bin/python3", "-c", prog)
		took := time.Since(start)
		if r.code == 3 || strings.Contains(r.stdout, "dns error") {
			t.Fatalf("run %d: the first query was not answered: %q; stderr:\n%s", i, r.stdout, r.stderr)
		}
		if took > 5*time.Second {
			t.Errorf("run %d took %v: the first query or connect waited for a timeout", i, took)
		}
		if countNotices(r.stderr, refusedHost+":443") < 1 {
			t.Errorf("run %d: no refusal notice for %s (stdout %q); stderr:\n%s", i, refusedHost, r.stdout, r.stderr)
		}
	}
}
