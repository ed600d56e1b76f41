//go:build linux

// End-to-end tests of chaining through the host's proxy (issue 14): when
// jail's environment names HTTPS_PROXY/HTTP_PROXY/ALL_PROXY, the egress proxy
// sends the flows it allowed through it with CONNECT. The "corporate proxy"
// is a small CONNECT proxy in this test process on the host's loopback,
// which records what it was asked and connects every target to one local
// HTTPS server (names are resolved by the upstream proxy, not by jail, so no
// DNS is needed). The same test runs as root and unprivileged.
package tests

import (
	"bufio"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

type corpProxy struct {
	ln       net.Listener
	origin   string
	wantAuth string
	mu       sync.Mutex
	asked    []string // "CONNECT target auth"
}

func newCorpProxy(t *testing.T, origin, wantAuth string) *corpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &corpProxy{ln: ln, origin: origin, wantAuth: wantAuth}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return p
}

func (p *corpProxy) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	auth := req.Header.Get("Proxy-Authorization")
	p.mu.Lock()
	p.asked = append(p.asked, req.Method+" "+req.Host+" "+auth)
	p.mu.Unlock()
	if req.Method != http.MethodConnect || auth != p.wantAuth {
		io.WriteString(c, "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
		return
	}
	up, err := net.Dial("tcp", p.origin)
	if err != nil {
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		return
	}
	defer up.Close()
	io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	go func() { io.Copy(up, br); up.(*net.TCPConn).CloseWrite() }()
	io.Copy(c, up)
}

func (p *corpProxy) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.asked...)
}

// An allowed name reaches its server only through the upstream proxy, with
// the credentials from HTTPS_PROXY, whether the client goes to it directly or
// through the proxy jail names inside; refused destinations never reach the
// upstream proxy, and a refused name is answered by jail itself (issue 12); a NO_PROXY name is dialled directly (a control name
// pinned to the same address without NO_PROXY goes through the upstream);
// the credentials appear nowhere: not on stderr (-v), not in the trail.
func TestUpstreamProxyChain(t *testing.T) {
	hostIP, _ := netHostAddrs()
	if hostIP == "" {
		t.Fatal("this test needs a non-loopback IPv4 address on the host (the NO_PROXY destination)")
	}
	cert, err := netSelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(netHandler), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}}))
	t.Cleanup(func() { srv.Close() })
	oport := netPort(ln.Addr())

	const secret = "Pr0xy-s3cret"
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("ada:"+secret))
	cp := newCorpProxy(t, fmt.Sprintf("127.0.0.1:%d", oport), auth)
	proxyURL := "http://ada:" + url.QueryEscape(secret) + "@" + cp.ln.Addr().String()

	api := "api.jailtest.example"       // allowed, through the upstream
	direct := "direct.jailtest.example" // allowed, NO_PROXY, pinned to the host
	pinned := "pinned.jailtest.example" // allowed, pinned to the host, not in NO_PROXY
	evil := "evil.jailtest.example"     // not allowed
	trail := filepath.Join(t.TempDir(), "trail.jsonl")
	flags := []string{"-v", "--audit", trail,
		"--allow-domain", api + ":443", "--allow-domain", direct, "--allow-domain", pinned,
		"--add-host", direct + ":" + hostIP, "--add-host", pinned + ":" + hostIP,
		"--allow-ip", fmt.Sprintf("%s/32:%d", hostIP, oport)}
	curl := func(u string, extra ...string) string {
		return fmt.Sprintf("/usr/bin/curl -sS -k --noproxy '*' --connect-timeout 5 --max-time 10 %s '%s' | grep -q %s", strings.Join(extra, " "), u, netOK)
	}
	viaJail := func(u string) string { // through jail's own proxy, which *_PROXY names inside
		return fmt.Sprintf("/usr/bin/curl -sS -k --connect-timeout 5 --max-time 10 '%s' | grep -q %s", u, netOK)
	}
	probes := []netProbe{
		// The variables inside name jail's own proxy, never the host's.
		{"proxyenv", fmt.Sprintf(`[ -n "$HTTPS_PROXY" ] && ! env | grep -i '_proxy=' | grep -q -e ada -e '%s'`, cp.ln.Addr().String())},
		{"api", curl("https://" + api + "/")},
		{"api-via-jail", viaJail("https://" + api + "/")},
		{"evil-via-jail", viaJail("https://" + evil + "/")},
		{"evil", curl("https://" + evil + "/")},
		{"direct", curl(fmt.Sprintf("https://%s:%d/", direct, oport))},
		{"pinned", curl(fmt.Sprintf("https://%s:%d/", pinned, oport))},
		{"evil-dns", "getent hosts " + evil + " | grep -q '^198\\.19\\.'"}, // a refusal address
		{"raw", curl("https://93.184.216.34/")},
		{"fronting", curl("https://"+evil+"/", "--connect-to", evil+":443:"+api+":443")},
		{"port", curl("https://" + api + ":8443/")},
	}
	env := []string{"HTTPS_PROXY=" + proxyURL, "https_proxy=", "NO_PROXY=" + direct, "no_proxy="}
	res := netRunOpts(t, runOpts{env: env}, flags, probes...)
	r := res.result
	defer func() {
		if t.Failed() {
			t.Logf("upstream asked: %q\n%s", cp.requests(), res.dump())
		}
	}()
	mustCode(t, r, 0)
	res.ok(t, "proxyenv")
	res.ok(t, "api")
	res.ok(t, "api-via-jail")
	res.refused(t, "evil-via-jail", evil+":443")
	res.refused(t, "evil", evil+":443")
	if out := res.out["evil-via-jail"] + res.out["evil"]; !strings.Contains(out, "403") || !strings.Contains(out, "alert access denied") {
		t.Errorf("a refused name is not answered by jail (a 403 through its proxy, the TLS alert directly):\n%s", out)
	}
	res.ok(t, "direct")
	res.ok(t, "pinned")
	res.ok(t, "evil-dns")
	res.refused(t, "raw", "93.184.216.34:443")
	res.refused(t, "fronting", api+":443")
	res.refused(t, "port", api+":8443")

	// api twice: its transparent flow and its CONNECT to jail's proxy.
	want := map[string]int{
		"CONNECT " + api + ":443 " + auth:                    2,
		fmt.Sprintf("CONNECT %s:%d %s", hostIP, oport, auth): 1, // the pin, as the checked address
	}
	for _, a := range cp.requests() {
		if want[a] == 0 {
			t.Errorf("ATTACK REACHED THE UPSTREAM PROXY or a flow went the wrong way: it was asked %q", a)
		}
		want[a]--
	}
	for a, n := range want {
		if n > 0 {
			t.Errorf("the upstream proxy was asked %q %d times fewer than expected", a, n)
		}
	}
	if !strings.Contains(r.stderr, "chained through the host's proxy: TLS flows via http://"+cp.ln.Addr().String()+" (HTTPS_PROXY)") {
		t.Errorf("-v does not say which proxy carries the flows:\n%s", r.stderr)
	}
	b, err := os.ReadFile(trail)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"via":"http://`+cp.ln.Addr().String()+`"`) {
		t.Errorf("the trail's net events do not name the upstream proxy:\n%s", b)
	}
	for _, s := range []string{secret, url.QueryEscape(secret), strings.TrimPrefix(auth, "Basic ")} {
		if strings.Contains(string(b), s) || strings.Contains(r.stderr, s) || strings.Contains(r.stdout, s) {
			t.Errorf("the proxy credential %q leaked into the trail or jail's output", s)
		}
	}
	// A --dry-run shows the same, without credentials.
	d := run(t, runOpts{env: env}, append(flags[3:], "--dry-run", "--", "true")...)
	if !strings.Contains(d.stdout, "note       egress: allowed flows are chained") || strings.Contains(d.stdout, secret) {
		t.Errorf("--dry-run:\n%s", d.stdout)
	}
}

// A proxy variable jail cannot chain through is said on stderr every time
// (its flows are then dialled directly), never with its value.
func TestUpstreamProxyUnusable(t *testing.T) {
	r := run(t, runOpts{env: []string{"ALL_PROXY=socks5h://ada:hunter2hunter2@127.0.0.1:1080", "all_proxy="}},
		"--allow-domain", "api.jailtest.example", "--", "true")
	mustCode(t, r, 0)
	if !strings.Contains(r.stderr, "jail: egress: ALL_PROXY names a socks5h proxy, which jail cannot chain through") || strings.Contains(r.stderr, "hunter2") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
}
