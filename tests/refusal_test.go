//go:build linux

// End-to-end tests of issue 12's refusals: a refused name fails at once and
// says so, in the client's own error and in exactly one jail notice, under
// --net none and with an allowlist; and the sandbox's own record of its
// denials ($JAIL_DENIALS) holds them and cannot be changed from inside.
//
// Nothing here needs a network: a refused name is answered by jail itself
// (its DNS, its listeners), and never dialled.
package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

const refusedHost = "refused.jailtest.example"

// refusalEnv keeps the tests away from the real HOME (jail's state
// directory, npm's cache and logs live under it).
func refusalEnv(t *testing.T) []string {
	home := t.TempDir()
	os.Chmod(home, 0o755)
	return []string{"HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state")}
}

// timed is a shell function that runs a command and prints
// "@@LABEL rc=N ms=N" and then its output.
const timed = `t() { l=$1; shift; s=$(date +%s%N); out=$("$@" 2>&1); rc=$?; e=$(date +%s%N); printf '@@%s rc=%d ms=%d\n%s\n' "$l" "$rc" "$(( (e-s)/1000000 ))" "$out"; }
`

type timedRes struct {
	rc  int
	ms  int
	out string
}

var timedLine = regexp.MustCompile(`^@@(\S+) rc=(\d+) ms=(\d+)$`)

func parseTimed(stdout string) map[string]timedRes {
	res := map[string]timedRes{}
	cur := ""
	for _, l := range strings.Split(stdout, "\n") {
		if m := timedLine.FindStringSubmatch(l); m != nil {
			cur = m[1]
			rc, _ := strconv.Atoi(m[2])
			ms, _ := strconv.Atoi(m[3])
			res[cur] = timedRes{rc: rc, ms: ms}
			continue
		}
		if cur != "" {
			r := res[cur]
			r.out += l + "\n"
			res[cur] = r
		}
	}
	return res
}

// countNotices counts jail's notices about target on stderr.
func countNotices(stderr, target string) int {
	n := 0
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "jail: refused "+target+" ") || l == "jail: refused "+target {
			n++
		}
	}
	return n
}

// failedFast checks that each labelled step ran, failed (a refused
// flow that succeeds is an attack that worked) and failed within 5 s.
func failedFast(t *testing.T, r result, res map[string]timedRes, labels ...string) {
	t.Helper()
	for _, label := range labels {
		got, ok := res[label]
		if !ok {
			t.Fatalf("%s did not run:\n%s", label, r.stdout)
		}
		if got.rc == 0 {
			t.Errorf("ATTACK WORKED: %s to a refused name succeeded: %s", label, got.out)
		}
		if got.ms > 5000 {
			t.Errorf("%s took %d ms, want under 5 s: %s", label, got.ms, got.out)
		}
	}
}

func refusalModes() []struct {
	name  string
	flags []string
} {
	return []struct {
		name  string
		flags []string
	}{
		{"none", nil},
		{"allow", []string{"--allow-domain", "allowed.jailtest.example"}},
	}
}

// TestRefusalCurl: curl to a refused name, over https and http, through the
// proxy jail names in *_PROXY and directly (--noproxy): each fails in under
// 5 s, plain http shows jail's 403 naming the host and the flag, and jail
// says "refused HOST:PORT - add --allow-domain HOST" exactly once per port
// however many attempts there were.
func TestRefusalCurl(t *testing.T) {
	for _, mode := range refusalModes() {
		t.Run(mode.name, func(t *testing.T) {
			script := timed + `
curl() { /usr/bin/curl -sS --max-time 60 "$@"; }
t https-proxy curl https://` + refusedHost + `/
t https-direct curl --noproxy '*' https://` + refusedHost + `/
t http-direct curl --noproxy '*' http://` + refusedHost + `/x
t http-proxy curl http://` + refusedHost + `/y
t dns getent hosts ` + refusedHost + `
exit 0`
			r := sh(t, runOpts{env: refusalEnv(t)}, script, mode.flags...)
			mustCode(t, r, 0)
			res := parseTimed(r.stdout)
			for label, want := range map[string]string{
				"https-proxy":  "403",
				"https-direct": "alert access denied",
				"http-direct":  `{"error":"jail: refused ` + refusedHost + `:80 - add --allow-domain ` + refusedHost + `"}`,
				"http-proxy":   `{"error":"jail: refused ` + refusedHost + `:80 - add --allow-domain ` + refusedHost + `"}`,
			} {
				got, ok := res[label]
				if !ok {
					t.Fatalf("%s did not run:\n%s", label, r.stdout)
				}
				if got.ms > 5000 {
					t.Errorf("%s took %d ms, want under 5 s", label, got.ms)
				}
				if !strings.Contains(got.out, want) {
					t.Errorf("%s said %q, want %q in it", label, strings.TrimSpace(got.out), want)
				}
				if strings.HasPrefix(label, "https") && got.rc == 0 {
					t.Errorf("ATTACK WORKED: %s succeeded", label)
				}
			}
			if !regexp.MustCompile(`^198\.19\.\d+\.\d+\s`).MatchString(res["dns"].out) {
				t.Errorf("the refused name resolved to %q, want a refusal address (198.19.0.0/16)", res["dns"].out)
			}
			for _, port := range []string{"443", "80"} {
				target := refusedHost + ":" + port
				if n := countNotices(r.stderr, target); n != 1 {
					t.Errorf("%d notices for %s, want exactly 1; stderr:\n%s", n, target, r.stderr)
				}
				if !strings.Contains(r.stderr, "jail: refused "+target+" - add --allow-domain "+refusedHost+"\n") {
					t.Errorf("no notice naming %s and the flag; stderr:\n%s", target, r.stderr)
				}
			}
		})
	}
}

// TestRefusalSSH: ssh, and git over ssh, to a refused name fail at once
// and jail says so, naming the flag, exactly once for the port. Under
// --net none (the default) port 22 had no listener of jail's: the
// connect to the refusal address was refused by the sandbox's own
// loopback, and `git push` over ssh said "Connection refused" with no
// word from jail (session 49, trying it as a user would), where the same
// push with an allowlist was said to be refused.
func TestRefusalSSH(t *testing.T) {
	for _, mode := range refusalModes() {
		t.Run(mode.name, func(t *testing.T) {
			script := timed + `
t ssh /usr/bin/ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o ConnectTimeout=20 git@` + refusedHost + ` true
t git /usr/bin/git ls-remote ssh://git@` + refusedHost + `/x.git
exit 0`
			r := sh(t, runOpts{env: refusalEnv(t)}, script, mode.flags...)
			mustCode(t, r, 0)
			res := parseTimed(r.stdout)
			failedFast(t, r, res, "ssh", "git")
			target := refusedHost + ":22"
			if n := countNotices(r.stderr, target); n != 1 {
				t.Errorf("%d notices for %s, want exactly 1; stderr:\n%s", n, target, r.stderr)
			}
			if !strings.Contains(r.stderr, "jail: refused "+target+" - add --allow-domain "+refusedHost+" and --ssh-agent (ssh signs with your agent's keys)\n") {
				t.Errorf("no notice naming %s and the flag; stderr:\n%s", target, r.stderr)
			}
		})
	}
}

// TestRefusalOtherPort: a connect no refusal listener of jail's hears
// is said all the same, once, naming the flag: under --net none (the
// default) a refused name's port other than 80, 443 and 22 was reset by
// the sandbox's own loopback ("Connection refused", which reads as a
// database that is down) without a word from jail (seen: a PostgreSQL-like
// client, ssh -p 2222, git://). With an allowlist the proxy says them (a
// connect there succeeds, to the proxy, which resets it: nothing comes
// back); said once either way. A loopback connect stays unsaid, and the
// denials record holds the refusals. A raw address fails at once either
// way (under --net none "Network is unreachable": the sandbox has no
// route).
//
// The client speaks as PostgreSQL's does (an SSLRequest: 8 binary bytes,
// never HTTP or TLS), which the proxy resets at once.
func TestRefusalOtherPort(t *testing.T) {
	for _, mode := range refusalModes() {
		t.Run(mode.name, func(t *testing.T) {
			script := timed + `
py() { /usr/bin/python3 -c "import socket,sys; s=socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=20); s.sendall(b'\\0\\0\\0\\x08\\x04\\xd2\\x16\\x2f'); sys.exit(0 if s.recv(1) else 1)" "$@"; }
t db1 py ` + refusedHost + ` 5432
t db2 py ` + refusedHost + ` 5432
t raw py 192.0.2.1 53
t local py 127.0.0.1 5432
t git /usr/bin/git ls-remote git://` + refusedHost + `/x.git
t denials sh -c 'for i in $(seq 100); do grep -q :9418 "$JAIL_DENIALS" && break; sleep 0.02; done; cat "$JAIL_DENIALS"'
exit 0`
			r := sh(t, runOpts{env: refusalEnv(t)}, script, mode.flags...)
			mustCode(t, r, 0)
			res := parseTimed(r.stdout)
			failedFast(t, r, res, "db1", "db2", "raw", "local", "git")
			for target, line := range map[string]string{
				refusedHost + ":5432": "jail: refused " + refusedHost + ":5432 - add --allow-domain " + refusedHost + "\n",
				refusedHost + ":9418": "jail: refused " + refusedHost + ":9418 - add --allow-domain " + refusedHost + "\n",
			} {
				if n := countNotices(r.stderr, target); n != 1 {
					t.Errorf("%d notices for %s, want exactly 1; stderr:\n%s", n, target, r.stderr)
				}
				if !strings.Contains(r.stderr, line) {
					t.Errorf("no notice %q; stderr:\n%s", strings.TrimSpace(line), r.stderr)
				}
			}
			if strings.Contains(r.stderr, "127.0.0.1") {
				t.Errorf("a loopback connect was said; stderr:\n%s", r.stderr)
			}
			denials := res["denials"].out
			for _, target := range []string{refusedHost + ":5432", refusedHost + ":9418"} {
				if !strings.Contains(denials, `"target":"`+target+`"`) {
					t.Errorf("the denials record lacks %s:\n%s", target, denials)
				}
			}
		})
	}
}

// TestRefusalSSHAlias: ssh to a Host alias of the user's ssh config
// (git@gh-work:org/repo.git), refused under --net none, names the
// alias's HostName as the domain to allow, beside --ssh-agent (which
// makes the alias known inside); it said "add --allow-domain gh-work", a
// name that exists nowhere but in the user's config.
func TestRefusalSSHAlias(t *testing.T) {
	env := refusalEnv(t)
	home := strings.TrimPrefix(env[0], "HOME=")
	os.MkdirAll(filepath.Join(home, ".ssh", "config.d"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "config"), []byte("Include config.d/*\n"), 0o644)
	os.WriteFile(filepath.Join(home, ".ssh", "config.d", "work"), []byte("Host gh-work\n  HostName "+refusedHost+"\n  User git\n"), 0o644)
	r := sh(t, runOpts{env: env}, `/usr/bin/ssh -o BatchMode=yes -o StrictHostKeyChecking=no git@gh-work true; exit 0`)
	mustCode(t, r, 0)
	want := "jail: refused gh-work:22 - add --ssh-agent and --allow-domain " + refusedHost + " (gh-work is a Host of your ~/.ssh/config, for " + refusedHost + ")\n"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("no notice %q; stderr:\n%s", strings.TrimSpace(want), r.stderr)
	}
}

// TestRefusalProxyClientError: a proxy-aware client that reports a refused
// tunnel by its status line (Python's urllib, whose http.client pip uses)
// names the refused host and the flag in its own error, at once.
func TestRefusalProxyClientError(t *testing.T) {
	for _, mode := range refusalModes() {
		t.Run(mode.name, func(t *testing.T) {
			script := timed + `
t urllib /usr/bin/python3 -c 'import urllib.request; urllib.request.urlopen("https://` + refusedHost + `/simple/six/", timeout=30)'
exit 0`
			r := sh(t, runOpts{env: refusalEnv(t)}, script, mode.flags...)
			mustCode(t, r, 0)
			got, ok := parseTimed(r.stdout)["urllib"]
			if !ok {
				t.Fatalf("urllib did not run:\n%s", r.stdout)
			}
			want := "Tunnel connection failed: 403 Forbidden (jail: refused " + refusedHost + ":443 - add --allow-domain " + refusedHost + ")"
			if got.rc == 0 || !strings.Contains(got.out, want) {
				t.Errorf("urllib: rc %d %q, want %q in it", got.rc, strings.TrimSpace(got.out), want)
			}
			if got.ms > 5000 {
				t.Errorf("urllib took %d ms, want under 5 s", got.ms)
			}
			if n := countNotices(r.stderr, refusedHost+":443"); n != 1 {
				t.Errorf("%d notices for %s:443, want exactly 1; stderr:\n%s", n, refusedHost, r.stderr)
			}
		})
	}
}

// TestRefusalNpm: `npm install` from an https:// registry (through the
// proxy jail names, as npm's default registry is reached; --net none) and from a plain-http registry reached
// directly (an allowlist) fails at once with jail's words in npm's own error, not after npm's
// minute of retries (which a reset, a TLS failure or a DNS failure gets).
// The time is counted beyond npm's own start (`npm --version` in the same
// sandbox), which alone takes seconds on a loaded machine.
func TestRefusalNpm(t *testing.T) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		if inCI() {
			t.Fatalf("npm is not installed (the CI image has it)")
		}
		t.Skip("npm is not installed")
	}
	// An https:// registry under --net none (through jail's proxy, as the
	// default one is), a plain-http one reached directly with an allowlist.
	cases := []struct {
		mode, label, cmd, target string
		flags                    []string
	}{
		{"none", "https", npm + " install --no-audit --no-fund --registry https://" + refusedHost + "/ is-odd", refusedHost + ":443", nil},
		{"allow", "http", "env -u HTTP_PROXY -u http_proxy -u HTTPS_PROXY -u https_proxy " + npm +
			" install --no-audit --no-fund --registry http://" + refusedHost + "/ is-odd", refusedHost + ":80", refusalModes()[1].flags},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			script := timed + `cd "$(mktemp -d)"
t version ` + npm + ` --version
t ` + c.label + ` ` + c.cmd + `
exit 0`
			r := sh(t, runOpts{env: refusalEnv(t), timeout: 3 * time.Minute}, script, c.flags...)
			mustCode(t, r, 0)
			res := parseTimed(r.stdout)
			base := res["version"]
			if base.rc != 0 {
				t.Fatalf("npm --version failed inside:\n%s", base.out)
			}
			for label, target := range map[string]string{c.label: c.target} {
				got, ok := res[label]
				if !ok {
					t.Fatalf("%s did not run:\n%s", label, r.stdout)
				}
				host := strings.Split(target, ":")[0]
				if got.rc == 0 {
					t.Errorf("npm install from %s succeeded", host)
				}
				if extra := got.ms - base.ms; extra > 5000 {
					t.Errorf("npm install from %s took %d ms (%d ms beyond npm's own start), want under 5 s:\n%s", host, got.ms, extra, got.out)
				}
				want := "jail: refused " + target + " - add --allow-domain " + host
				if !strings.Contains(got.out, "403") || !strings.Contains(got.out, want) {
					t.Errorf("npm's error does not carry jail's %q:\n%s", want, got.out)
				}
				if n := countNotices(r.stderr, target); n != 1 {
					t.Errorf("%d notices for %s, want exactly 1; stderr:\n%s", n, target, r.stderr)
				}
			}
		})
	}
}

// TestRefusalNetNoneStaysClosed: under --net none the refusal plumbing adds
// no way out: no route but the sandbox's own, and jail's proxy refuses a
// CONNECT to a raw address too. With --no-local-tcp, Landlock still refuses
// TCP to every port but jail's refusal listeners' and no listener can be
// bound (without it, TCP on the sandbox's own loopback is allowed, which
// TestEverydayLoopbackIsolated shows reaches nothing of the host's).
func TestRefusalNetNoneStaysClosed(t *testing.T) {
	script := timed + `
t routes sh -c "{ ip -4 route show table all; ip -6 route show table all; } | grep -v ' dev lo '; true"
t port9418 /usr/bin/python3 -c 'import socket; socket.create_connection(("` + refusedHost + `", 9418), timeout=5)'
t bind /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 8080))'
t connect-raw /usr/bin/curl -sS --max-time 10 -p http://198.51.100.7:443/
exit 0`
	r := sh(t, runOpts{env: refusalEnv(t)}, script, "--no-local-tcp")
	mustCode(t, r, 0)
	res := parseTimed(r.stdout)
	if routes := strings.TrimSpace(res["routes"].out); routes != "" {
		t.Errorf("routes other than the sandbox's own under --net none:\n%s", routes)
	}
	if res["port9418"].rc == 0 || !strings.Contains(res["port9418"].out, "Permission denied") && landlockABI(t) >= 4 {
		t.Errorf("connect to port 9418 under --net none: %q, want Landlock's EACCES", res["port9418"].out)
	}
	if res["bind"].rc == 0 {
		t.Errorf("ATTACK WORKED: bind under --net none")
	}
	if res["connect-raw"].rc == 0 || countNotices(r.stderr, "198.51.100.7:443") != 1 {
		t.Errorf("CONNECT to a raw address under --net none: rc %d %q; stderr:\n%s", res["connect-raw"].rc, res["connect-raw"].out, r.stderr)
	}
}

// landlockABI is the kernel's Landlock ABI as jail reports it.
func landlockABI(t *testing.T) int {
	out, _ := exec.Command(jail(t), "doctor").CombinedOutput()
	m := regexp.MustCompile(`(?m)^landlock\s+ABI (\d+)`).FindSubmatch(out)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

type denialLine struct {
	Time   time.Time `json:"time"`
	Kind   string    `json:"kind"`
	Target string    `json:"target"`
	Argv   []string  `json:"argv"`
	Reason string    `json:"reason"`
	Allow  string    `json:"allow"`
}

// TestDenialRecord: after a refused connect and a command refused by the
// guard rail, $JAIL_DENIALS holds one JSON line for each, readable the
// moment the client has failed, naming what was refused, why, and the flag
// (for the connect).
func TestDenialRecord(t *testing.T) {
	for _, mode := range refusalModes() {
		t.Run(mode.name, func(t *testing.T) {
			script := `echo "@@env $JAIL_DENIALS"
/bin/true jail-refused-marker; echo "@@exec rc=$?"
/usr/bin/curl -sS --noproxy '*' -o /dev/null http://` + refusedHost + `/
sed 's/^/@@rec /' "$JAIL_DENIALS"
exit 0`
			flags := append([]string{"--block-command", "^/bin/true jail-refused-marker"}, mode.flags...)
			r := sh(t, runOpts{env: refusalEnv(t)}, script, flags...)
			mustCode(t, r, 0)
			if !strings.Contains(r.stdout, "@@env /run/jail/denials.jsonl\n") {
				t.Errorf("JAIL_DENIALS is not /run/jail/denials.jsonl:\n%s", r.stdout)
			}
			if strings.Contains(r.stdout, "@@exec rc=0") {
				t.Fatalf("the guard rail did not refuse the command:\n%s", r.stdout)
			}
			var recs []denialLine
			for _, l := range strings.Split(r.stdout, "\n") {
				if line, ok := strings.CutPrefix(l, "@@rec "); ok {
					var d denialLine
					if err := json.Unmarshal([]byte(line), &d); err != nil {
						t.Fatalf("record line %q: %v", line, err)
					}
					recs = append(recs, d)
				}
			}
			if len(recs) != 2 {
				t.Fatalf("record has %d lines, want 2 (the exec, the connect):\n%s", len(recs), r.stdout)
			}
			ex, nt := recs[0], recs[1]
			if ex.Kind != "exec" || ex.Target != "/bin/true" || strings.Join(ex.Argv, " ") != "/bin/true jail-refused-marker" ||
				ex.Reason != "guard rail block-command:^/bin/true jail-refused-marker" || time.Since(ex.Time) > time.Minute {
				t.Errorf("exec line %+v", ex)
			}
			if nt.Kind != "net" || nt.Target != refusedHost+":80" || nt.Reason != "not in allowlist" || nt.Allow != "--allow-domain "+refusedHost {
				t.Errorf("net line %+v", nt)
			}
			if !strings.Contains(r.stderr, "jail: refused command /bin/true jail-refused-marker (guard rail block-command:^/bin/true jail-refused-marker)\n") {
				t.Errorf("no notice for the refused command:\n%s", r.stderr)
			}
		})
	}
}

// denialAttacks tries every way of changing a file we could think of, on
// $JAIL_DENIALS and, as the control, on a copy in /tmp (where each must work,
// or the test proves nothing). It prints "@@ok NAME" when the record resisted
// and the control gave way, "@@bad NAME: why" otherwise, then the record's
// digest before and after.
const denialAttacks = `import ctypes, errno, hashlib, mmap, os, shutil, sys
rec = os.environ["JAIL_DENIALS"]
d = os.path.dirname(rec)
def digest(): return hashlib.sha256(open(rec, "rb").read()).hexdigest()
before = digest()
print("@@before", before, os.path.getsize(rec))
libc = ctypes.CDLL(None, use_errno=True)
def setup_ctl():
    cd = "/tmp/ctl"
    shutil.rmtree(cd, ignore_errors=True)
    os.mkdir(cd)
    shutil.copy(rec, cd + "/denials.jsonl")
    os.chmod(cd + "/denials.jsonl", 0o644)
    return cd, cd + "/denials.jsonl"
def write(p): fd = os.open(p, os.O_WRONLY | os.O_APPEND); os.write(fd, b"{\"fake\":1}\n"); os.close(fd)
def rdwr(p): os.close(os.open(p, os.O_RDWR))
def trunc_open(p): os.close(os.open(p, os.O_WRONLY | os.O_TRUNC))
def truncate(p): os.truncate(p, 0)
def chmod(p): os.chmod(p, 0o666)
def chown(p): os.chown(p, os.getuid(), os.getgid())
def utime(p): os.utime(p, (0, 0))
def unlink(p): os.unlink(p)
def replace(p):
    o = os.path.join("/tmp", "other-" + os.path.basename(os.path.dirname(p)))
    open(o, "w").write("{\"fake\":1}\n"); os.rename(o, p)
def replace_in_dir(p):
    o = os.path.join(os.path.dirname(p), "other"); open(o, "w").write("x"); os.rename(o, p)
def move_away(p): os.rename(p, p + ".old")
def move_dir(p): os.rename(os.path.dirname(p), os.path.dirname(p) + "2")
def rmdir(p): shutil.rmtree(os.path.dirname(p))
def hardlink(p): os.link(p, os.path.join(os.path.dirname(p), "h"))
def symlink_in_dir(p): os.symlink("/tmp/x", os.path.join(os.path.dirname(p), "s"))
def reopen_fd(p):
    fd = os.open(p, os.O_RDONLY)
    try: os.close(os.open("/proc/self/fd/%d" % fd, os.O_WRONLY | os.O_APPEND))
    finally: os.close(fd)
def mmap_write(p):
    fd = os.open(p, os.O_RDWR if p.startswith("/tmp") else os.O_RDONLY)
    try:
        m = mmap.mmap(fd, 1, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE); m[0:1] = b"X"; m.close()
    finally: os.close(fd)
def xattr(p): os.setxattr(p, "user.jail", b"1")
def umount(p):
    if libc.umount2(os.path.dirname(p).encode(), 2) != 0:
        e = ctypes.get_errno(); raise OSError(e, os.strerror(e))
    raise OSError(0, "umount worked")  # never a control: no file changed
for name, f, control in [("append", write, True), ("open-rdwr", rdwr, True), ("open-trunc", trunc_open, True),
        ("truncate", truncate, True), ("chmod", chmod, True), ("chown", chown, True), ("utime", utime, True),
        ("unlink", unlink, True), ("replace-from-tmp", replace, True), ("replace-in-dir", replace_in_dir, True),
        ("move-away", move_away, True), ("move-dir", move_dir, True), ("rmdir", rmdir, True),
        ("hardlink", hardlink, True), ("symlink-in-dir", symlink_in_dir, True), ("reopen-proc-fd", reopen_fd, True),
        ("mmap-shared-write", mmap_write, True), ("setxattr", xattr, False), ("umount", umount, False)]:
    if control:
        cd, ctl = setup_ctl()
        try: f(ctl)
        except OSError as e:
            print("@@bad %s: the control failed too (%s), the test proves nothing" % (name, e)); continue
    try:
        f(rec)
        print("@@bad %s: it worked on the record" % name)
    except OSError as e:
        if name == "umount" and e.errno == 0:
            print("@@bad umount: it worked")
        else:
            print("@@ok %s (%s)" % (name, errno.errorcode.get(e.errno, e.errno)))
print("@@after", digest() if os.path.exists(rec) else "gone", os.path.getsize(rec) if os.path.exists(rec) else -1)
`

// TestDenialRecordImmutable: the agent cannot write, truncate, chmod,
// remove, rename, replace or remount its record, nor its directory, nor
// reopen it for writing through /proc, while each of these works on an
// ordinary copy; and the record still holds exactly what jail wrote.
func TestDenialRecordImmutable(t *testing.T) {
	script := `/usr/bin/curl -sS --noproxy '*' -o /dev/null http://` + refusedHost + `/
/usr/bin/python3 -c '` + denialAttacks + `'`
	r := sh(t, runOpts{env: refusalEnv(t)}, script)
	mustCode(t, r, 0)
	var before, after string
	oks := 0
	for _, l := range strings.Split(r.stdout, "\n") {
		switch {
		case strings.HasPrefix(l, "@@bad "):
			t.Errorf("ATTACK WORKED or test broken: %s", strings.TrimPrefix(l, "@@bad "))
		case strings.HasPrefix(l, "@@ok "):
			oks++
		case strings.HasPrefix(l, "@@before "):
			before = strings.TrimPrefix(l, "@@before ")
		case strings.HasPrefix(l, "@@after "):
			after = strings.TrimPrefix(l, "@@after ")
		}
	}
	if oks != 19 {
		t.Errorf("%d attacks resisted, want 19:\n%s\n%s", oks, r.stdout, r.stderr)
	}
	if before == "" || before != after || strings.HasSuffix(before, " 0") {
		t.Errorf("record before %q, after %q: want the same non-empty record", before, after)
	}
}
