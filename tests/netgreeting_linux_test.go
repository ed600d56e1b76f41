package tests

import (
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// A server that speaks first (SMTP, MySQL, FTP) through the egress proxy:
// its client sends nothing until the greeting, so every connection waited
// the proxy's first-byte wait (200 ms) before the proxy dialled. The proxy
// now learns the destination on the first connection and dials later ones
// at once (netproxy's serverfirst.go): connections after the first get the
// greeting in well under that wait.
func TestNetServerFirstGreeting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.WriteString(c, "220 greeting\r\n")
				io.Copy(io.Discard, c)
			}()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	const name = "smtp.jailtest.example"
	flags := []string{"--allow-domain", fmt.Sprintf("%s:%d", name, port), "--add-host", name + ":127.0.0.1",
		"--allow-ip", fmt.Sprintf("127.0.0.1/32:%d", port)}
	// bash's /dev/tcp: connect, read the greeting, close; the milliseconds
	// of each of six connections, on one line.
	script := fmt.Sprintf(`[ -x /bin/bash ] || exit 127; /bin/bash -c 'for i in 1 2 3 4 5 6; do s=$(date +%%s%%N); exec 3<>/dev/tcp/%s/%d || exit 1; IFS= read -r l <&3 || exit 1; exec 3<&-; e=$(date +%%s%%N); case "$l" in "220 greeting"*) ;; *) echo "bad greeting: $l"; exit 1;; esac; printf "ms=%%d " $(( (e - s) / 1000000 )); done'`, name, port)
	r := netRun(t, flags, netProbe{"greet", script})
	mustCode(t, r.result, 0)
	r.ok(t, "greet")
	var ms []int
	for _, f := range strings.Fields(r.out["greet"]) {
		if v, ok := strings.CutPrefix(f, "ms="); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("probe said %q", f)
			}
			ms = append(ms, n)
		}
	}
	if len(ms) != 6 {
		t.Fatalf("want six connections, got %v (%q)", ms, r.out["greet"])
	}
	if ms[0] < 150 {
		// The fixture is what it says: the first connection cannot know
		// and waits for the client as before.
		t.Errorf("first connection took %d ms: the proxy did not wait for the client's first bytes", ms[0])
	}
	later := append([]int(nil), ms[1:]...)
	sort.Ints(later)
	if later[len(later)/2] >= 100 {
		t.Errorf("connections after the first took %v ms (median %d): each waited for a client that speaks only after the server", ms[1:], later[len(later)/2])
	}
}
