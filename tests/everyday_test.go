//go:build linux

package tests

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Everyday tools (issue 11): what ordinary development work needs inside a
// sandbox, and that none of it opens a wall. A test server on the sandbox's
// own loopback works under the default --net none, but nothing crosses
// between that loopback and the host's; git works from a subfolder of a
// repository (the workspace is the top level) with the user's identity and
// nothing else of ~/.gitconfig; a -w/-r symlink works at its own path; a
// command installed in a hidden place ($HOME) runs.

// everydayShimEnv makes the test binary (TestMain) act as a program inside
// the sandbox: "httptest" runs an httptest server and fetches from it, as a
// `go test` of an HTTP handler does; "serve" listens on 127.0.0.1 and
// answers every connection with a token until stdin closes; "dial ADDR..."
// connects to each address and says what happened.
const everydayShimEnv = "JAIL_TEST_EVERYDAY_SHIM"

func everydayShim() {
	mode := os.Getenv(everydayShimEnv)
	switch {
	case mode == "httptest":
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "pong")
		}))
		resp, err := http.Get(srv.URL)
		if err != nil {
			fmt.Printf("HTTPTEST FAIL %v\n", err)
			os.Exit(1)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		srv.Close()
		fmt.Printf("HTTPTEST %s\n", b)
		os.Exit(0)
	case strings.HasPrefix(mode, "serve "):
		token := strings.TrimPrefix(mode, "serve ")
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Printf("LISTEN FAIL %v\n", err)
			os.Exit(1)
		}
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				io.WriteString(c, token+"\n")
				c.Close()
			}
		}()
		// The server answers inside, so a refusal from the host is the wall,
		// not a server that never came up.
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			fmt.Printf("SELF FAIL %v\n", err)
			os.Exit(1)
		}
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if strings.TrimSpace(line) != token {
			fmt.Printf("SELF FAIL %q\n", line)
			os.Exit(1)
		}
		fmt.Printf("READY %d\n", ln.Addr().(*net.TCPAddr).Port)
		io.Copy(io.Discard, os.Stdin) // until the test closes stdin
		os.Exit(0)
	case mode == "fanotify":
		fanotifyShim() // fanotify_test.go
		os.Exit(0)
	case mode == "sockfilter":
		sockFilterShim() // sockfilter_test.go
		os.Exit(0)
	case strings.HasPrefix(mode, "dial "):
		for _, a := range strings.Fields(strings.TrimPrefix(mode, "dial ")) {
			c, err := net.DialTimeout("tcp", a, 2*time.Second)
			if err != nil {
				var errno syscall.Errno
				if errors.As(err, &errno) {
					fmt.Printf("DIAL %s ERR %d\n", a, int(errno))
				} else {
					fmt.Printf("DIAL %s ERR %v\n", a, err)
				}
				continue
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			fmt.Printf("DIAL %s CONNECTED %q\n", a, strings.TrimSpace(line))
		}
		os.Exit(0)
	}
	fmt.Fprintf(os.Stderr, "shim: unknown mode %q\n", mode)
	os.Exit(2)
}

// everydaySelf returns the flags that run this test binary as the shim in
// mode inside a sandbox (the binary may live in a hidden place such as /tmp).
func everydaySelf(t *testing.T, mode string) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, _ = filepath.EvalSymlinks(exe)
	return []string{"-r", exe, "--setenv", everydayShimEnv + "=" + mode, "--", exe}
}

// The test server a `go test` of an HTTP handler starts (httptest on
// 127.0.0.1) works under the default --net none: it was refused with
// "bind: permission denied" by Landlock's TCP rule.
func TestEverydayHTTPTestServer(t *testing.T) {
	r := run(t, runOpts{}, everydaySelf(t, "httptest")...)
	if r.code != 0 || !strings.Contains(r.stdout, "HTTPTEST pong") {
		t.Fatalf("httptest under --net none: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	// The flag that forbids it still does, at the listen: Go (1.24+)
	// listens with MPTCP, which Landlock's TCP rules do not check, so the
	// server used to listen and only the client's plain-TCP connect was
	// refused (review14a); seccomp now refuses MPTCP and Go falls back to
	// TCP, which Landlock refuses.
	r = run(t, runOpts{}, append([]string{"--no-local-tcp"}, everydaySelf(t, "httptest")...)...)
	if r.code == 0 || !strings.Contains(r.stderr, "failed to listen") || !strings.Contains(r.stderr, "permission denied") {
		t.Fatalf("--no-local-tcp: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// Adversarial: the sandbox's loopback is its own. A server inside cannot be
// reached from the host's 127.0.0.1, and the host's loopback services (and
// its other addresses) cannot be reached from inside; in degraded mode,
// where there is no network namespace and 127.0.0.1 is the host's, TCP
// stays refused.
func TestEverydayLoopbackIsolated(t *testing.T) {
	// A host service that answers with a token.
	hostTok := fmt.Sprintf("host-%d", time.Now().UnixNano())
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hl.Close()
	go func() {
		for {
			c, err := hl.Accept()
			if err != nil {
				return
			}
			io.WriteString(c, hostTok+"\n")
			c.Close()
		}
	}()
	any, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer any.Close()
	go func() {
		for {
			c, err := any.Accept()
			if err != nil {
				return
			}
			io.WriteString(c, hostTok+"\n")
			c.Close()
		}
	}()
	targets := []string{hl.Addr().String(), fmt.Sprintf("127.0.0.1:%d", any.Addr().(*net.TCPAddr).Port)}
	if ip := hostIPv4(); ip != "" {
		targets = append(targets, fmt.Sprintf("%s:%d", ip, any.Addr().(*net.TCPAddr).Port))
	}
	// Control: the host itself reaches each target.
	for _, a := range targets {
		c, err := net.DialTimeout("tcp", a, 2*time.Second)
		if err != nil {
			t.Fatalf("control: host cannot reach its own %s: %v", a, err)
		}
		c.Close()
	}
	dial := strings.Join(targets, " ")
	for _, mode := range [][]string{nil, {"--x-degraded"}} {
		r := run(t, runOpts{}, append(mode, everydaySelf(t, "dial "+dial)...)...)
		mustCode(t, r, 0)
		if strings.Contains(r.stdout, "CONNECTED") || strings.Contains(r.stdout, hostTok) ||
			strings.Count(r.stdout, " ERR ") != len(targets) {
			t.Fatalf("%v: the host's services were reached from inside:\n%s\nstderr: %s", mode, r.stdout, r.stderr)
		}
	}

	// A server inside is not the host's 127.0.0.1:PORT.
	token := fmt.Sprintf("inside-%d", time.Now().UnixNano())
	args := append([]string{}, everydaySelf(t, "serve "+token)...)
	cmd := exec.Command(jail(t), args...)
	cmd.Dir = workspace(t)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
		}
	}()
	lines := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		lines <- l
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(30 * time.Second):
		t.Fatalf("the server inside never came up; stderr: %s", stderr.String())
	}
	var port int
	if _, err := fmt.Sscanf(line, "READY %d", &port); err != nil {
		t.Fatalf("server inside: %q (stderr: %s)", line, stderr.String())
	}
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 2*time.Second)
	if err == nil {
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		got, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if strings.Contains(got, token) {
			t.Fatalf("the host reached the sandbox's loopback server on port %d", port)
		}
	}
}

// hostIPv4 is one non-loopback IPv4 address of the host, or "".
func hostIPv4() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	return ""
}

func everydayNeed(t *testing.T, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		if inCI() {
			t.Fatalf("%s is needed: %v", tool, err)
		}
		t.Skipf("no %s", tool)
	}
	return p
}

// everydayHome makes a fresh HOME for one jail run (never the real one),
// beside the test process's own, and returns it with its environment.
func everydayHome(t *testing.T) (string, []string) {
	t.Helper()
	h, err := os.MkdirTemp(testHome, "home-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(h, 0o755)
	t.Cleanup(func() { os.RemoveAll(h) })
	h, _ = filepath.EvalSymlinks(h)
	return h, []string{"HOME=" + h, "XDG_CONFIG_HOME=" + filepath.Join(h, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(h, ".local", "state")}
}

func everydayRepo(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{
		{"init", "-q"},
		{"-c", "user.name=Host", "-c", "user.email=host@example.com", "commit", "-q", "--allow-empty", "-m", "init"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

func everydayGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Started in a subfolder of a git work tree, jail makes the top level the
// workspace (and says so), so git finds the repository and `git commit`
// works; the agent still starts in the subfolder. The top level gets the
// workspace's rights and no more: .git/config and .git/hooks stay
// read-only. --workspace overrides.
func TestEverydayGitSubfolder(t *testing.T) {
	everydayNeed(t, "git")
	top := workspace(t)
	everydayRepo(t, top)
	sub := filepath.Join(top, "pkg", "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(top, "pkg"), 0o777)
	os.Chmod(sub, 0o777)
	script := `set -e
pwd
echo hello > new.txt
git add new.txt
git -c user.name=Agent -c user.email=agent@example.com commit -q -m "from a subfolder"
echo COMMITTED
if echo x >> ../../.git/config 2>/dev/null; then echo CONFIG-WRITTEN; fi
if touch ../../.git/hooks/pre-commit 2>/dev/null; then echo HOOK-WRITTEN; fi
`
	r := sh(t, runOpts{dir: sub}, script)
	if r.code != 0 || !strings.Contains(r.stdout, "COMMITTED") {
		t.Fatalf("git commit from a subfolder: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if !strings.HasPrefix(r.stdout, sub+"\n") {
		t.Fatalf("the agent did not start in the subfolder: %q", r.stdout)
	}
	if strings.Contains(r.stdout, "WRITTEN") {
		t.Fatalf("the top level gave more rights inside .git: %s", r.stdout)
	}
	if !strings.Contains(r.stderr, top) || !strings.Contains(r.stderr, "workspace") {
		t.Fatalf("no note names the top level as the workspace:\n%s", r.stderr)
	}
	if got := everydayGit(t, top, "log", "-1", "--format=%s"); got != "from a subfolder" {
		t.Fatalf("the host's last commit: %q", got)
	}
	// Said once for the same top level and subfolder, not at every start
	// (it was, a line users learnt to skip); --dry-run still says it.
	r = sh(t, runOpts{dir: sub}, `true`)
	mustCode(t, r, 0)
	if strings.Contains(r.stderr, "jail: workspace: ") {
		t.Errorf("the workspace note again at the second start:\n%s", r.stderr)
	}
	r = run(t, runOpts{dir: sub}, "--dry-run", "--", "true")
	if !strings.Contains(r.stdout+r.stderr, "workspace: "+top+", the top level") {
		t.Errorf("--dry-run does not name the top level as the workspace:\n%s%s", r.stdout, r.stderr)
	}
	// --workspace overrides: the subfolder alone, the top level read-only.
	r = sh(t, runOpts{dir: sub}, `touch ../../outside; echo done`, "--workspace", sub)
	mustCode(t, r, 0)
	if _, err := os.Lstat(filepath.Join(top, "outside")); err == nil {
		t.Fatalf("--workspace %s still made the top level writable: %s", sub, r.stdout)
	}
}

// The git identity passes by default, read on the host from a symlinked
// ~/.gitconfig (dotfiles) or ~/.config/git/config, and nothing else of
// those files does: no credential helper, no include, no file.
func TestEverydayGitIdentity(t *testing.T) {
	everydayNeed(t, "git")
	for _, layout := range []string{"symlinked ~/.gitconfig", "~/.config/git/config"} {
		t.Run(layout, func(t *testing.T) {
			home, env := everydayHome(t)
			inc := filepath.Join(home, "dotfiles", "extra.inc")
			body := "[user]\n\tname = Dot Files\n\temail = dot@example.com\n" +
				"[credential]\n\thelper = store --file " + filepath.Join(home, "dotfiles", "creds") + "\n" +
				"[include]\n\tpath = " + inc + "\n"
			os.MkdirAll(filepath.Join(home, "dotfiles"), 0o755)
			os.WriteFile(inc, []byte("[url \"https://secret-token@example.com/\"]\n\tinsteadOf = https://example.com/\n"), 0o644)
			if layout == "~/.config/git/config" {
				os.MkdirAll(filepath.Join(home, ".config", "git"), 0o755)
				os.WriteFile(filepath.Join(home, ".config", "git", "config"), []byte(body), 0o644)
			} else {
				os.WriteFile(filepath.Join(home, "dotfiles", "gitconfig"), []byte(body), 0o644)
				if err := os.Symlink("dotfiles/gitconfig", filepath.Join(home, ".gitconfig")); err != nil {
					t.Fatal(err)
				}
			}
			ws := workspace(t)
			everydayRepo(t, ws)
			script := `git commit -q --allow-empty -m inside && git log -1 --format='%an <%ae> / %cn <%ce>'
echo "helper=[$(git config --get credential.helper)]"
echo "url=[$(git config --get-regexp '^url\.' )]"
env | grep -i -e secret -e creds -e include && echo LEAKED-ENV
ls -A ~
`
			r := sh(t, runOpts{dir: ws, env: env}, script)
			want := "Dot Files <dot@example.com> / Dot Files <dot@example.com>"
			if r.code != 0 || !strings.Contains(r.stdout, want) {
				t.Fatalf("identity: exit %d, want %q\nstdout: %s\nstderr: %s", r.code, want, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, "helper=[]") || !strings.Contains(r.stdout, "url=[]") || strings.Contains(r.stdout, "LEAKED") ||
				strings.Contains(r.stdout, ".gitconfig") || strings.Contains(r.stdout, "dotfiles") {
				t.Fatalf("more than the identity passed:\n%s", r.stdout)
			}
		})
	}
}

// -w and -r of a symlink work at the link's own path (a symlink into the
// workspace's sibling, one in $HOME pointing elsewhere in $HOME), not only
// at its target's.
func TestEverydaySymlinkedPaths(t *testing.T) {
	home, env := everydayHome(t)
	target := filepath.Join(home, "real", "data")
	os.MkdirAll(target, 0o777)
	os.Chmod(filepath.Join(home, "real"), 0o755)
	os.Chmod(target, 0o777)
	os.WriteFile(filepath.Join(home, "real", "conf"), []byte("CONF\n"), 0o644)
	os.Symlink("real/data", filepath.Join(home, "data"))
	os.MkdirAll(filepath.Join(home, ".config"), 0o755)
	os.Symlink("../real/conf", filepath.Join(home, ".config", "tool.conf"))
	script := `echo W > ~/data/f && echo WROTE
cat ~/.config/tool.conf
readlink ~/data
`
	r := sh(t, runOpts{env: env}, script, "-w", "~/data", "-r", filepath.Join(home, ".config", "tool.conf"))
	if r.code != 0 || !strings.Contains(r.stdout, "WROTE") || !strings.Contains(r.stdout, "CONF") || !strings.Contains(r.stdout, "real/data") {
		t.Fatalf("symlinked -w/-r: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(target, "f")); string(b) != "W\n" {
		t.Fatalf("the write did not reach the link's target: %q", b)
	}
	// The link is only a link: the rest of $HOME stays hidden.
	r = sh(t, runOpts{env: env}, `ls ~/real/conf 2>/dev/null && echo SEEN; ls -A ~/.config`, "-r", "~/data")
	if strings.Contains(r.stdout, "SEEN") || strings.Contains(r.stdout, "tool.conf") {
		t.Fatalf("more of $HOME became visible: %s", r.stdout)
	}
}

// A command installed under $HOME (hidden inside) runs: Claude Code's
// native installer (a symlink in a symlinked ~/.local/bin into
// ~/.local/share/...), and an npm global under nvm (a #! script whose
// interpreter lives in ~/.nvm). Its install tree becomes visible read-only,
// with a note; secrets in it stay masked, and a command in a secret place
// (~/.ssh) is refused, never exposed.
func TestEverydayCommandInHome(t *testing.T) {
	home, env := everydayHome(t)
	mk := func(rel, body string, mode os.FileMode) string {
		p := filepath.Join(home, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link := func(target, rel string) {
		p := filepath.Join(home, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	// Native installer, ~/.local/bin a symlink into dotfiles.
	mk(".local/share/tool/versions/1.2.3", "#!/bin/sh\necho TOOL-OK \"$0\"\ncat \"$(dirname \"$(readlink -f \"$0\")\")/../assets/msg\"\n", 0o755)
	mk(".local/share/tool/assets/msg", "ASSET-OK\n", 0o644)
	mk(".local/share/tool/versions/key.pem", "SECRET-PEM\n", 0o644)
	link("../../.local/share/tool/versions/1.2.3", "dotfiles/bin/tool")
	link("../dotfiles/bin", ".local/bin")
	mk(".local/share/other/private.txt", "OTHER-PRIVATE\n", 0o644)
	// nvm: node and an npm global script using it by #!/usr/bin/env.
	nvm := ".nvm/versions/node/v22.0.0"
	mk(nvm+"/bin/fakenode", "#!/bin/sh\necho NODE-OK\nexec /bin/sh \"$@\"\n", 0o755)
	mk(nvm+"/lib/node_modules/agent/cli.js", "#!/usr/bin/env fakenode\necho AGENT-OK\n", 0o755)
	link("../lib/node_modules/agent/cli.js", nvm+"/bin/agent")
	// A command in a secret place.
	mk(".ssh/bin/sneaky", "#!/bin/sh\necho SNEAKY-RAN\n", 0o755)
	mk(".ssh/id_ed25519", "SSH-KEY\n", 0o600)

	path := strings.Join([]string{filepath.Join(home, ".local/bin"), filepath.Join(home, nvm, "bin"), filepath.Join(home, ".ssh/bin"), "/usr/local/bin:/usr/bin:/bin"}, ":")
	env = append(env, "PATH="+path)

	r := run(t, runOpts{env: env}, "--", "tool")
	if r.code != 0 || !strings.Contains(r.stdout, "TOOL-OK "+filepath.Join(home, ".local/bin/tool")) || !strings.Contains(r.stdout, "ASSET-OK") {
		t.Fatalf("a command under a symlinked ~/.local/bin: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, filepath.Join(home, ".local/share/tool")) {
		t.Fatalf("no note names what was made visible:\n%s", r.stderr)
	}
	// Read-only, secrets masked, nothing beside the install tree.
	r = run(t, runOpts{env: env}, "--", "/bin/sh", "-c", `
echo x > ~/.local/share/tool/assets/msg 2>/dev/null && echo WRITTEN
cat ~/.local/share/tool/versions/key.pem 2>/dev/null
cat ~/.local/share/other/private.txt 2>/dev/null
tool >/dev/null && echo SH-TOOL-OK`)
	if strings.Contains(r.stdout, "WRITTEN") || strings.Contains(r.stdout, "SECRET-PEM") || strings.Contains(r.stdout, "OTHER-PRIVATE") {
		t.Fatalf("the install tree gave more than a read-only view:\n%s\nstderr: %s", r.stdout, r.stderr)
	}

	r = run(t, runOpts{env: env}, "--", "agent")
	if r.code != 0 || !strings.Contains(r.stdout, "NODE-OK") || !strings.Contains(r.stdout, "AGENT-OK") {
		t.Fatalf("an npm global under nvm: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}

	r = run(t, runOpts{env: env}, "--", "sneaky")
	if r.code == 0 || strings.Contains(r.stdout, "SNEAKY-RAN") {
		t.Fatalf("a command in ~/.ssh was exposed: exit %d\nstdout: %s", r.code, r.stdout)
	}
	if !strings.Contains(r.stderr, ".ssh") {
		t.Fatalf("the refusal does not say why:\n%s", r.stderr)
	}
}

// `go test ./...` needs the module cache, which lives in the hidden $HOME:
// jail says so and names the fix, where the module needs it.
func TestEverydayGoModCacheNote(t *testing.T) {
	home, env := everydayHome(t)
	os.MkdirAll(filepath.Join(home, "go", "pkg", "mod", "cache"), 0o755)
	ws := workspace(t)
	bin := filepath.Join(ws, "bin")
	os.MkdirAll(bin, 0o755)
	os.WriteFile(filepath.Join(bin, "go"), []byte("#!/bin/sh\necho FAKE-GO\n"), 0o755)
	env = append(env, "PATH="+bin+":/usr/bin:/bin")
	r := run(t, runOpts{dir: ws, env: env}, "--", "go", "test", "./...")
	mustCode(t, r, 0)
	if !strings.Contains(r.stderr, filepath.Join(home, "go", "pkg", "mod")) || !strings.Contains(r.stderr, "--read "+filepath.Join(home, "go", "pkg", "mod")) {
		t.Fatalf("no note names the hidden module cache and its fix:\n%s", r.stderr)
	}
	// A module of no dependencies needs no cache: nothing said (it was
	// said before every run of its tests, found noise in a trial).
	os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module ex.com/m\n\ngo 1.22\n"), 0o644)
	r = run(t, runOpts{dir: ws, env: env}, "--", "go", "test", "./...")
	mustCode(t, r, 0)
	if strings.Contains(r.stderr, "module cache") {
		t.Fatalf("a note on the module cache for a module that requires nothing:\n%s", r.stderr)
	}
	os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module ex.com/m\n\ngo 1.22\n\nrequire golang.org/x/sys v0.1.0\n"), 0o644)
	r = run(t, runOpts{dir: ws, env: env}, "--", "go", "test", "./...")
	if !strings.Contains(r.stderr, "--read "+filepath.Join(home, "go", "pkg", "mod")) {
		t.Fatalf("no note for a module that requires one:\n%s", r.stderr)
	}
}

// A remote that is a repository on this machine (a bare repository in the
// home, a mirror beside it) fails inside with git's own words, which do
// not point at jail: "does not appear to be a git repository" where the
// sandbox hides it, "unable to create temporary object directory" for a
// push where it is read-only (session 52, trying git push as a user
// would). The first start names the remote and the option; following the
// note, the push works and the remote's hooks and config stay read-only.
func TestEverydayGitLocalRemote(t *testing.T) {
	everydayNeed(t, "git")
	home, env := everydayHome(t)
	up := filepath.Join(home, "up.git")
	everydayGit(t, home, "init", "-q", "--bare", up)
	mirror := filepath.Join(besideHome(t, "mirror-"), "m.git")
	everydayGit(t, home, "init", "-q", "--bare", mirror)
	ws := workspace(t)
	everydayRepo(t, ws)
	everydayGit(t, ws, "remote", "add", "origin", up)
	everydayGit(t, ws, "remote", "add", "mirror", mirror)
	o := runOpts{dir: ws, env: env}

	hidden := "jail: git remote origin (~/up.git) is hidden inside, so git cannot fetch from it (\"does not appear to be a git repository\"): --read ~/up.git lets git fetch, --write ~/up.git push too"
	readOnly := "jail: git remote mirror (" + mirror + ") is read-only inside, so a push to it fails (\"unable to create temporary object directory\"): --write " + mirror + " lets git push"
	r := sh(t, o, `git fetch -q origin 2>&1; echo fetch=$?; git push -q mirror HEAD:main 2>&1; echo push=$?`)
	if !strings.Contains(r.stdout, "fetch=128") || !strings.Contains(r.stdout, "push=1") {
		t.Fatalf("git inside reached a hidden or read-only remote:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, hidden) || !strings.Contains(r.stderr, readOnly) {
		t.Fatalf("the first start does not name the remotes:\nwant %q\nand  %q\nstderr: %s", hidden, readOnly, r.stderr)
	}
	r = sh(t, o, `true`)
	if strings.Contains(r.stderr, "git remote ") {
		t.Errorf("the note is said at every start:\n%s", r.stderr)
	}

	r = sh(t, o, `git -c user.name=A -c user.email=a@example.com commit -q --allow-empty -m pushed &&
git push -q origin HEAD:main && git push -q mirror HEAD:main && echo PUSHED
for f in ~/up.git/hooks/post-receive ~/up.git/config `+mirror+`/hooks/pre-receive `+mirror+`/config; do
	(echo evil >> "$f") 2>/dev/null && echo "WROTE $f"
done; true`, "--write", up, "--write", mirror)
	if r.code != 0 || !strings.Contains(r.stdout, "PUSHED") || strings.Contains(r.stdout, "WROTE") {
		t.Fatalf("--write of the remotes: exit %d, want the push and no hook or config written\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	for _, repo := range []string{up, mirror} {
		if got := everydayGit(t, home, "--git-dir", repo, "log", "-1", "--format=%s", "main"); got != "pushed" {
			t.Errorf("%s's main after the push: %q", repo, got)
		}
	}
}

// A variable passed by name whose value is a path the sandbox hides, as
// `--env SSH_AUTH_SOCK` passes the ssh agent's socket under /tmp or /run
// (session 52: ssh-add inside said "Error connecting to agent: No such
// file or directory", jail nothing): the first start names the variable,
// the path and the --read that shows it; following it, the command
// reaches the socket.
func TestEverydayEnvPathNote(t *testing.T) {
	everydayNeed(t, "python3")
	home, env := everydayHome(t)
	sock := filepath.Join(home, "agent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HELLO-FROM-AGENT\n"))
			c.Close()
		}
	}()
	env = append(env, "AGENT_SOCK="+sock)
	o := runOpts{dir: workspace(t), env: env}
	script := `python3 -c 'import os,socket; s=socket.socket(socket.AF_UNIX); s.connect(os.environ["AGENT_SOCK"]); print(s.recv(64).decode().strip())'`
	r := sh(t, o, script, "--env", "AGENT_SOCK")
	note := "jail: --env AGENT_SOCK passes ~/agent.sock, which is hidden inside: --read ~/agent.sock shows it (a socket: the command can then ask anything of what listens there)"
	if r.code == 0 || !strings.Contains(r.stderr, note) {
		t.Fatalf("a hidden socket passed by name: exit %d, want a failure and the note %q\nstderr: %s", r.code, note, r.stderr)
	}
	r = sh(t, o, script, "--env", "AGENT_SOCK", "--read", sock)
	if r.code != 0 || !strings.Contains(r.stdout, "HELLO-FROM-AGENT") {
		t.Fatalf("--read of the socket: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "--env AGENT_SOCK") {
		t.Errorf("a note for a socket shown:\n%s", r.stderr)
	}
}

// sshKeygen makes an ed25519 key pair without a passphrase at path.
func sshKeygen(t *testing.T, path, comment string) {
	t.Helper()
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
}

// startSSHAgent starts an ssh-agent of the test's own on the host,
// listening at sock, stopped at the test's end, and adds keys to it in
// that order (retried until the agent listens). It returns the host
// environment that names it.
func startSSHAgent(t *testing.T, sock string, keys ...string) []string {
	t.Helper()
	agent := exec.Command("ssh-agent", "-D", "-a", sock)
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agent.Process.Kill(); agent.Wait() })
	env := append(os.Environ(), "SSH_AUTH_SOCK="+sock)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		add := exec.Command("ssh-add", append([]string{"-q"}, keys...)...)
		add.Env = env
		out, err := add.CombinedOutput()
		if err == nil {
			return env
		}
		if time.Now().After(deadline) {
			t.Fatalf("ssh-add on the host: %v\n%s", err, out)
		}
	}
}

// --ssh-agent is git over ssh (session 52: an agent's `git push` to an
// ssh remote was refused port 22, the advice was --allow-domain, and with
// it ssh had no key and no known host). ssh inside reaches the user's
// real agent (here one whose socket is in ~/.ssh, a place hidden whole)
// through jail's relay: it lists the keys and signs with them, started by
// root too (the agent answers only its own uid; the sandbox is nobody);
// removing, adding and locking keys never reach the agent, are said, and
// every request is in the trail. known_hosts is a read-only copy; the
// keys and the rest of ~/.ssh stay hidden. No agent fails the start,
// naming the option; a refusal of port 22 without one names it.
func TestEverydaySSHAgent(t *testing.T) {
	everydayNeed(t, "ssh-agent")
	home, env := everydayHome(t)
	ssh := filepath.Join(home, ".ssh")
	if err := os.MkdirAll(ssh, 0o700); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(ssh, "id_ed25519")
	sshKeygen(t, key, "jailtest-key")
	os.WriteFile(filepath.Join(ssh, "known_hosts"), []byte("github.com ssh-ed25519 AAAAKNOWN\n"), 0o644)
	os.WriteFile(filepath.Join(ssh, "config"), []byte("Host gh\n  HostName github.com\n"), 0o644)
	sock := filepath.Join(ssh, "agent.sock")
	hostAgent := startSSHAgent(t, sock, key)
	ws := workspace(t)
	pub, _ := os.ReadFile(key + ".pub")
	os.WriteFile(filepath.Join(ws, "key.pub"), pub, 0o644)
	os.WriteFile(filepath.Join(ws, "data"), []byte("signed data\n"), 0o644)
	o := runOpts{dir: ws, env: env}

	r := sh(t, o, `true`, "--ssh-agent")
	if r.code != 125 || !strings.Contains(r.stderr, "--ssh-agent") || !strings.Contains(r.stderr, "SSH_AUTH_SOCK is not set") {
		t.Fatalf("--ssh-agent without an agent: exit %d, want 125 naming the option\nstderr: %s", r.code, r.stderr)
	}

	o.env = append(env, "SSH_AUTH_SOCK="+sock)
	// Passed by hand, the agent's socket is hidden (here in ~/.ssh, where
	// a --read of it is refused): the note names the option.
	r = sh(t, o, `ssh-add -l`, "--env", "SSH_AUTH_SOCK")
	if want := "jail: --env SSH_AUTH_SOCK passes ~/.ssh/agent.sock, which is hidden inside: --ssh-agent lets ssh inside sign with your agent"; r.code == 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("--env SSH_AUTH_SOCK: exit %d, want a failure and %q\nstderr: %s", r.code, want, r.stderr)
	}
	script := `echo "SOCK=$SSH_AUTH_SOCK"
ssh-add -l
ssh-keygen -Y sign -f key.pub -n file data 2>/dev/null && echo SIGNED
ssh-add -D 2>/dev/null && echo REMOVED
ssh-keygen -q -t ed25519 -N "" -f /tmp/k && ssh-add /tmp/k 2>/dev/null && echo ADDED
cat ~/.ssh/known_hosts
(echo evil >> ~/.ssh/known_hosts) 2>/dev/null && echo KNOWN-HOSTS-WRITTEN
cat ~/.ssh/id_ed25519 ~/.ssh/config 2>/dev/null
true`
	r = sh(t, o, script, "--ssh-agent")
	if r.code != 0 || !strings.Contains(r.stdout, "SOCK=/run/ssh-agent.sock") || !strings.Contains(r.stdout, "jailtest-key (ED25519)") ||
		!strings.Contains(r.stdout, "SIGNED") || !strings.Contains(r.stdout, "AAAAKNOWN") || !strings.Contains(r.stdout, "HostName github.com") {
		t.Fatalf("--ssh-agent: exit %d, want the keys listed, a signature, known_hosts and the ssh config read\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	for _, bad := range []string{"REMOVED", "ADDED", "WRITTEN", "PRIVATE KEY"} {
		if strings.Contains(r.stdout, bad) {
			t.Errorf("--ssh-agent gave more than listing and signing (%s):\n%s", bad, r.stdout)
		}
	}
	for _, req := range []string{"REMOVE_ALL_IDENTITIES", "ADD_IDENTITY"} {
		if want := "jail: refused the ssh agent request " + req; !strings.Contains(r.stderr, want) {
			t.Errorf("no notice %q\nstderr: %s", want, r.stderr)
		}
	}
	list := exec.Command("ssh-add", "-l")
	list.Env = hostAgent
	if out, _ := list.CombinedOutput(); strings.Count(string(out), "\n") != 1 || !strings.Contains(string(out), "jailtest-key") {
		t.Errorf("the host's agent after the run:\n%s", out)
	}
	if got, _ := os.ReadFile(filepath.Join(ssh, "known_hosts")); string(got) != "github.com ssh-ed25519 AAAAKNOWN\n" {
		t.Errorf("the host's known_hosts changed: %q", got)
	}
	trails, _ := filepath.Glob(filepath.Join(home, ".local/state/jail/audit/*.jsonl"))
	seen := map[string]string{}
	for _, tr := range trails {
		for _, ev := range eventsOf(trailEvents(t, tr), "agent") {
			req, _ := ev["request"].(string)
			dec, _ := ev["decision"].(string)
			seen[req] = dec
			if req == "SIGN_REQUEST" && !strings.HasPrefix(fmt.Sprint(ev["key"]), "SHA256:") {
				t.Errorf("a signature's event names no key: %v", ev)
			}
		}
	}
	for req, dec := range map[string]string{"REQUEST_IDENTITIES": "allow", "SIGN_REQUEST": "allow", "REMOVE_ALL_IDENTITIES": "deny", "ADD_IDENTITY": "deny"} {
		if seen[req] != dec {
			t.Errorf("the trail's agent event for %s: %q, want %q (all: %v)", req, seen[req], dec, seen)
		}
	}

	// A refusal of port 22 names the option where the run has no agent.
	r = run(t, o, "--net", "none", "--", "bash", "-c", `exec 3<>/dev/tcp/github.com/22; true`)
	if want := "refused github.com:22 - add --allow-domain github.com and --ssh-agent"; !strings.Contains(r.stderr, want) {
		t.Errorf("a refusal of port 22 without an agent: want %q\nstderr: %s", want, r.stderr)
	}
}

// TestEverydaySSHConfig: the usual way to a second account, a Host alias
// in ~/.ssh/config (here in a file it includes) with IdentitiesOnly,
// works inside with --ssh-agent. ssh inside reads a copy of the user's
// config and of what it includes (the IdentityAgent, a socket
// of the host's, and ControlMaster, a control socket in a directory of
// the host's, dropped), finds the alias, picks the agent's key by the
// IdentityFile's public half, placed at the key's path (the private key
// stays hidden), checks the host key against the known-hosts file the
// config names, and logs in to a real sshd on the host's loopback
// (--allow-host-port) with the agent's signature. The sshd allows one
// key attempt: the agent's other key, offered first without
// IdentitiesOnly, would use it up. Seen failing on session 52's binary:
// "Can't open user config file".
//
// ssh reads ~ as the passwd entry's home; the test's HOME is another, so
// ssh is given the config's path and the config absolute paths (in use,
// HOME is the passwd home and ~/.ssh/config is read as it is).
func TestEverydaySSHConfig(t *testing.T) {
	everydayNeed(t, "ssh-agent")
	const sshd = "/usr/sbin/sshd"
	if _, err := os.Stat(sshd); err != nil {
		if inCI() {
			t.Fatalf("%s is needed (openssh-server): %v", sshd, err)
		}
		t.Skipf("no %s", sshd)
	}
	home, env := everydayHome(t)
	ssh := filepath.Join(home, ".ssh")
	os.MkdirAll(ssh, 0o700)
	srv := t.TempDir()
	sshKeygen(t, filepath.Join(srv, "hostkey"), "host")
	sshKeygen(t, filepath.Join(ssh, "id_work"), "work")
	sshKeygen(t, filepath.Join(ssh, "id_other"), "other")
	work, _ := os.ReadFile(filepath.Join(ssh, "id_work.pub"))
	os.WriteFile(filepath.Join(srv, "authorized_keys"), work, 0o644)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cfg := fmt.Sprintf("Port %d\nListenAddress 127.0.0.1\nHostKey %s/hostkey\nAuthorizedKeysFile %s/authorized_keys\nPidFile none\nUsePAM no\nStrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nMaxAuthTries 1\n", port, srv, srv)
	os.WriteFile(filepath.Join(srv, "sshd_config"), []byte(cfg), 0o644)
	daemon := exec.Command(sshd, "-D", "-e", "-f", filepath.Join(srv, "sshd_config"))
	if os.Getuid() == 0 {
		// As root sshd wants its privilege-separation directory: made in
		// a mount namespace of its own, never on the host.
		daemon = exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c",
			`mount -t tmpfs tmpfs /run && mkdir -m 755 /run/sshd && exec "$0" "$@"`, sshd, "-D", "-e", "-f", filepath.Join(srv, "sshd_config"))
	}
	var sshdLog strings.Builder
	daemon.Stderr = &sshdLog
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { daemon.Process.Kill(); daemon.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd did not listen: %s", sshdLog.String())
		}
	}
	sock := filepath.Join(ssh, "agent.sock")
	startSSHAgent(t, sock, filepath.Join(ssh, "id_other"), filepath.Join(ssh, "id_work"))
	hostKey, _ := os.ReadFile(filepath.Join(srv, "hostkey.pub"))
	f := strings.Fields(string(hostKey))
	os.WriteFile(filepath.Join(ssh, "known_hosts_work"), []byte(fmt.Sprintf("[host.jail.internal]:%d %s %s\n", port, f[0], f[1])), 0o644)
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	// The alias in a file of its own, included (config.d/*, as many set
	// up a second account).
	os.MkdirAll(filepath.Join(ssh, "config.d"), 0o700)
	os.WriteFile(filepath.Join(ssh, "config.d", "work"), []byte(fmt.Sprintf(`Host gh-work
  HostName host.jail.internal
  Port %d
  User %s
  IdentityFile %s/id_work
  IdentitiesOnly yes
  UserKnownHostsFile %s/known_hosts_work
  IdentityAgent %s/.1password/agent.sock
`, port, me.Username, ssh, ssh, home)), 0o644)
	// ControlPath in /tmp: a socket path under a test home (a long one in
	// CI) is past ssh's 108 bytes, which ssh refuses whatever the master.
	config := fmt.Sprintf(`Include %s/config.d/*
Host *
  ControlMaster auto
  ControlPersist 10m
  ControlPath /tmp/jail-test-cm-%%C
`, ssh)
	os.WriteFile(filepath.Join(ssh, "config"), []byte(config), 0o644)
	ws := workspace(t)
	o := runOpts{dir: ws, env: append(env, "SSH_AUTH_SOCK="+sock)}
	script := `ssh -F "$HOME/.ssh/config" -o BatchMode=yes gh-work echo hi from sshd; echo "rc=$?"
cat "$HOME/.ssh/id_work"`
	r := sh(t, o, script, "--ssh-agent", "--allow-host-port", strconv.Itoa(port))
	if !strings.Contains(r.stdout, "hi from sshd\nrc=0\n") {
		t.Fatalf("ssh to a Host alias with --ssh-agent: want a login\nstdout: %s\nstderr: %s\nsshd: %s", r.stdout, r.stderr, sshdLog.String())
	}
	if !strings.Contains(r.stdout, string(work)) || strings.Contains(r.stdout, "PRIVATE KEY") {
		t.Errorf("~/.ssh/id_work inside: want its public half, never the private key\nstdout: %s", r.stdout)
	}
	if got, _ := os.ReadFile(filepath.Join(ssh, "config")); string(got) != config {
		t.Errorf("the host's ssh config changed: %q", got)
	}
}

// TestEverydayGitHubToken: with the token passed (--env GH_TOKEN), git
// inside answers https://github.com's credential request with it, so a
// push over https no longer asks for a username no agent can type (the
// helper gh auth setup-git writes lives in the ~/.gitconfig jail keeps
// hidden); another host never gets it, and without the token git has no
// helper. Seen failing on session 52's binary: "could not read Username
// for 'https://github.com'".
func TestEverydayGitHubToken(t *testing.T) {
	_, env := everydayHome(t)
	ws := workspace(t)
	const token = "ghp_jailtest0123456789abcdef"
	o := runOpts{dir: ws, env: append(env, "GH_TOKEN="+token)}
	script := `export GIT_TERMINAL_PROMPT=0 GIT_ASKPASS= SSH_ASKPASS=
printf 'protocol=https\nhost=github.com\n\n' | git credential fill 2>&1; echo "github rc=$?"
printf 'protocol=https\nhost=example.com\n\n' | git credential fill 2>&1; echo "other rc=$?"
printf 'protocol=http\nhost=github.com\n\n' | git credential fill 2>&1; echo "plain rc=$?"`
	r := sh(t, o, script, "--env", "GH_TOKEN")
	if !strings.Contains(r.stdout, "password="+token+"\ngithub rc=0\n") {
		t.Errorf("git credential fill for github.com with --env GH_TOKEN: want the token\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
	}
	if strings.Count(r.stdout, token) != 1 || !strings.Contains(r.stdout, "other rc=128") || !strings.Contains(r.stdout, "plain rc=128") {
		t.Errorf("ATTACK WORKED? the token went to another host or over plain http:\n%s", r.stdout)
	}
	r = sh(t, runOpts{dir: ws, env: o.env}, script)
	if strings.Contains(r.stdout, token) || !strings.Contains(r.stdout, "github rc=128") {
		t.Errorf("without --env GH_TOKEN git has a token:\n%s", r.stdout)
	}
}

// TestEverydaySSHIdentityAgent: an agent the user's ssh finds through
// ~/.ssh/config (Host * IdentityAgent, as 1Password sets it up), with no
// SSH_AUTH_SOCK, is the one --ssh-agent relays: its keys are listed
// inside. Seen failing on session 52's binary: the start refused with
// "SSH_AUTH_SOCK is not set".
func TestEverydaySSHIdentityAgent(t *testing.T) {
	everydayNeed(t, "ssh-agent")
	home, env := everydayHome(t)
	ssh := filepath.Join(home, ".ssh")
	os.MkdirAll(ssh, 0o700)
	key := filepath.Join(ssh, "id_ed25519")
	sshKeygen(t, key, "identity-agent-key")
	sock := filepath.Join(home, "agent.sock")
	startSSHAgent(t, sock, key)
	os.WriteFile(filepath.Join(ssh, "config"), []byte("Host *\n  IdentityAgent \""+sock+"\"\n"), 0o644)
	r := sh(t, runOpts{dir: workspace(t), env: env}, `echo "SOCK=$SSH_AUTH_SOCK"; ssh-add -l`, "--ssh-agent")
	if r.code != 0 || !strings.Contains(r.stdout, "SOCK=/run/ssh-agent.sock") || !strings.Contains(r.stdout, "identity-agent-key (ED25519)") {
		t.Errorf("--ssh-agent with the config's IdentityAgent: exit %d, want its keys listed\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}
