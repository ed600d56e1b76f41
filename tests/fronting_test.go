//go:build linux

// End-to-end tests of issue 10, class 7: HTTP domain fronting on a
// kept-alive or pipelined connection, cleartext HTTP/2, and allowed names
// that the host resolves into the user's internal networks.
package tests

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// hostLog is an HTTP/1 origin on the host's loopback that records the Host
// of every request that reaches it and answers "hello HOST".
type hostLog struct {
	ln    net.Listener
	mu    sync.Mutex
	hosts []string
}

func newHostLog(t *testing.T) *hostLog {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &hostLog{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					s.mu.Lock()
					s.hosts = append(s.hosts, req.Host)
					s.mu.Unlock()
					io.Copy(io.Discard, req.Body)
					body := "hello " + req.Host
					fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return s
}

func (s *hostLog) port() int { return s.ln.Addr().(*net.TCPAddr).Port }

func (s *hostLog) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.hosts)
}

// frontPy sends an allowed request and then one for another Host, on the
// same connection, kept alive (mode keepalive: after reading the first
// answer) or pipelined (both in one write). Exit 0 = the other Host was
// answered: the attack worked.
const frontPy = `import socket,sys
host,port,evil,mode=sys.argv[1],int(sys.argv[2]),sys.argv[3],sys.argv[4]
s=socket.create_connection((host,port),timeout=5)
req=lambda h: b"GET / HTTP/1.1\r\nHost: %s\r\n\r\n"%h.encode()
if mode=="keepalive":
    s.sendall(req(host)); print(s.recv(65536).split(b"\r\n")[0])
    s.sendall(req(evil))
else:
    s.sendall(req(host)+req(evil))
d=b""
try:
    while True:
        c=s.recv(65536)
        if not c: break
        d+=c
except OSError as e: print("ERR",e)
sys.exit(0 if b"hello "+evil.encode() in d else 1)
`

// A second request on a plaintext connection to an allowed name may not
// claim another Host, kept alive or pipelined; cleartext HTTP/2 cannot
// smuggle an :authority either. The origin's own log proves what reached
// it; the trail records the refused Host.
func TestNetFrontingLaterRequest(t *testing.T) {
	srv := newHostLog(t)
	port := srv.port()
	evil := netEvil
	trail := filepath.Join(auditDir(t), "front.jsonl")
	flags := []string{"--allow-domain", fmt.Sprintf("%s:%d", netAPI, port), "--add-host", netAPI + ":127.0.0.1",
		"--allow-ip", fmt.Sprintf("127.0.0.1/32:%d", port), "--audit", trail}
	r := netRun(t, flags,
		netProbe{"plain", fmt.Sprintf("/usr/bin/curl -sS --noproxy '*' --max-time 10 %s | grep -q 'hello %s'", netURL(netAPI, port, "/"), netAPI)},
		netProbe{"keepalive", fmt.Sprintf("/usr/bin/python3 -c '%s' %s %d %s keepalive", frontPy, netAPI, port, evil)},
		netProbe{"pipeline", fmt.Sprintf("/usr/bin/python3 -c '%s' %s %d %s pipeline", frontPy, netAPI, port, evil)},
		netProbe{"h2c-upgrade", fmt.Sprintf("/usr/bin/curl -sS --noproxy '*' --max-time 10 --http2 %s", netURL(netAPI, port, "/"))},
		netProbe{"h2c-prior-knowledge", fmt.Sprintf("/usr/bin/curl -sS --noproxy '*' --max-time 10 --http2-prior-knowledge %s", netURL(netAPI, port, "/"))},
	)
	mustCode(t, r.result, 0)
	r.ok(t, "plain")
	blocked := fmt.Sprintf("%s:%d", netAPI, port)
	r.refused(t, "keepalive", blocked)
	r.refused(t, "pipeline", blocked)
	r.refused(t, "h2c-upgrade", blocked)
	r.refused(t, "h2c-prior-knowledge", blocked)
	for _, h := range srv.seen() {
		if stripPortE2E(h) != netAPI {
			t.Errorf("ATTACK WORKED: the origin received a request for Host %q (all: %q)", h, srv.seen())
		}
	}
	evs := auditLoad(t, trail)
	var denied []string
	for _, e := range auditOf(evs, "net") {
		if e.str("decision") == "deny" && e.str("name") == netAPI {
			denied = append(denied, e.str("reason"))
		}
	}
	found := false
	for _, reason := range denied {
		if strings.Contains(reason, `"`+evil+`"`) && strings.Contains(reason, "request 2") {
			found = true
		}
	}
	if !found {
		t.Errorf("the trail does not record the refused Host %q on request 2; deny reasons: %q", evil, denied)
	}
	if !slices.ContainsFunc(denied, func(s string) bool { return strings.Contains(s, "h2c") }) ||
		!slices.ContainsFunc(denied, func(s string) bool { return strings.Contains(s, "HTTP/2") }) {
		t.Errorf("the trail does not record the h2c refusals; deny reasons: %q", denied)
	}
}

func stripPortE2E(h string) string {
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		return h[:i]
	}
	return h
}

// viaJailDNS asks the sandbox's nameserver (jail's DNS, from resolv.conf)
// for NAME's A record, bypassing /etc/hosts, then sends GET / with Host
// NAME to the address it got on PORT. It prints REACHED-LABEL when the
// fixture answered. (Inside the sandbox /etc/hosts is the host's, here the
// launcher's file, so getaddrinfo would skip jail's DNS.)
const viaJailDNS = `import socket,struct,sys
name,port,label=sys.argv[1],int(sys.argv[2]),sys.argv[3]
ns=[l.split()[1] for l in open("/etc/resolv.conf") if l.startswith("nameserver")][0]
q=struct.pack(">HHHHHH",7,0x100,1,0,0,0)+b"".join(bytes([len(p)])+p.encode() for p in name.split("."))+b"\0"+struct.pack(">HH",1,1)
u=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); u.settimeout(3); u.sendto(q,(ns,53)); r=u.recv(512)
if struct.unpack(">H",r[6:8])[0]==0: print("NXDOMAIN",name); sys.exit(0)
ip=socket.inet_ntoa(r[-4:])
try:
    s=socket.create_connection((ip,port),timeout=5)
    s.sendall(b"GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"%name.encode())
    d=b""
    while True:
        c=s.recv(65536)
        if not c: break
        d+=c
    if b"JAILNET-OK" in d: print("REACHED-"+label)
except OSError as e: print(label,"refused:",e)
`

// A wildcard allow must not become a way into the user's internal network:
// names under it that the host resolves to RFC 1918, CGNAT (100.64/10) or
// ULA addresses are refused before any dial, and the refusal names the flag
// that would open them. As root the addresses are served by the fixture's
// network namespace, so the same run on the old code reached them; as an
// unprivileged user nothing listens there and nothing is ever dialled.
func TestNetPrivateRangesRefused(t *testing.T) {
	f := netFixture(t)
	a10, a192, a100 := "10.1.2.3", "192.168.254.7", "100.64.254.7"
	if f.root {
		a10 = f.remoteIP
		a192 = fmt.Sprintf("192.168.254.%d", f.sub)
		a100 = fmt.Sprintf("100.64.254.%d", f.sub)
		for _, a := range []string{a192, a100} {
			netIP(t, "-n", f.ns, "addr", "add", a+"/32", "dev", "lo")
			netIP(t, "route", "add", a+"/32", "via", f.remoteIP, "dev", f.hostIf)
			a := a
			t.Cleanup(func() { exec.Command("ip", "route", "del", a+"/32", "dev", f.hostIf).Run() })
		}
		for _, a := range []string{a10, a192, a100} {
			netControl(t, "the fixture at "+a, netHostCurl(t, netURL(a, f.http, "/")))
		}
	}
	names := map[string]string{
		"db.corp.jailtest.example":  a10,
		"nas.corp.jailtest.example": a192,
		"cg.corp.jailtest.example":  a100,
		"v6.corp.jailtest.example":  "fd77:99::2",
	}
	if f.root {
		names["v6.corp.jailtest.example"] = f.v6IP
	}
	var lines []string
	for n, a := range names {
		lines = append(lines, a+" "+n)
	}
	trail := filepath.Join(auditDir(t), "private.jsonl")
	var sc strings.Builder
	for _, n := range []string{"db", "nas", "cg", "v6"} {
		fmt.Fprintf(&sc, "/usr/bin/python3 -c '%s' %s.corp.jailtest.example %d %s\n", viaJailDNS, n, f.http, n)
	}
	args := []string{"--allow-domain", "*.corp.jailtest.example", "--audit", trail, "--", "/bin/sh", "-c", sc.String()}
	r := runWithHosts(t, lines, runOpts{}, args...)
	mustCode(t, r, 0)
	if strings.Contains(r.stdout, "REACHED") {
		t.Errorf("ATTACK WORKED: a wildcard name reached the internal network:\n%s", r.stdout)
	}
	evs := auditLoad(t, trail)
	for n, a := range names {
		var reason string
		for _, e := range auditOf(evs, "net") {
			if e.str("name") == n && e.str("decision") == "deny" {
				reason = e.str("reason")
			}
		}
		rule := a + "/32"
		if strings.Contains(a, ":") {
			rule = "[" + a + "/128]"
		}
		// The trail names the option by key; the user's notice spells it.
		if !strings.Contains(reason, "`allow-ip` "+rule) {
			t.Errorf("%s (%s): deny reason %q does not name `allow-ip` %s", n, a, reason, rule)
		}
		if !regexp.MustCompile(`(?m)^jail: refused ` + regexp.QuoteMeta(n) + `:\d+ \(.*allow it with --allow-ip ` + regexp.QuoteMeta(rule)).MatchString(r.stderr) {
			t.Errorf("%s: no 'jail: refused' line naming --allow-ip %s on stderr:\n%s", n, rule, r.stderr)
		}
	}
	if f.root {
		// The explicit choices open exactly what they name: --add-host pins
		// the name to the internal address, --allow-ip covers one.
		args := []string{"--allow-domain", "*.corp.jailtest.example", "--add-host", "db.corp.jailtest.example:" + a10,
			"--allow-ip", a192 + "/32", "--", "/bin/sh", "-c", sc.String()}
		r := runWithHosts(t, lines, runOpts{}, args...)
		mustCode(t, r, 0)
		if !strings.Contains(r.stdout, "REACHED-db") || !strings.Contains(r.stdout, "REACHED-nas") || strings.Contains(r.stdout, "REACHED-cg") {
			t.Errorf("--add-host/--allow-ip: want db and nas reached, cg refused; got:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		}
	}
}
