//go:build linux

package tests

// A positive npm install through the allowlist (issue 11): a stand-in npm
// registry (a package document and a tarball this test makes) on a made-up
// host, named to npm only in the host's ~/.npmrc. The node profile takes
// the registry from npm's own configuration (package toolreg), allows its
// host and port, and hands the setting to npm inside (where .npmrc is
// masked); `npm install` then succeeds. Without the profile the same
// install is refused.

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	npmRegEnv  = "JAIL_NPMREG_FIXTURE_CHILD" // the registry server, in the fixture's netns
	npmRegHost = "registry.test"
	npmRegPkg  = "jail-probe"
	npmRegPort = 4873
)

func init() {
	if os.Getenv(npmRegEnv) == "" {
		return
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("[::]:%d", npmRegPort))
	if err != nil {
		fmt.Printf("ERROR %v\n", err)
		os.Exit(1)
	}
	go http.Serve(ln, npmRegHandler(npmRegPort))
	fmt.Println("READY")
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// npmRegTarball is the package: package/package.json and package/index.js.
func npmRegTarball() []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range map[string]string{
		"package/package.json": `{"name": "` + npmRegPkg + `", "version": "1.0.0", "main": "index.js"}`,
		"package/index.js":     "module.exports = 'from the stand-in registry';\n",
	} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), ModTime: time.Unix(0, 0)})
		tw.Write([]byte(body))
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// npmRegHandler serves the package document and the tarball.
func npmRegHandler(port int) http.Handler {
	tgz := npmRegTarball()
	s1 := sha1.Sum(tgz)
	s512 := sha512.Sum512(tgz)
	tarURL := fmt.Sprintf("http://%s:%d/%s/-/%s-1.0.0.tgz", npmRegHost, port, npmRegPkg, npmRegPkg)
	doc, _ := json.Marshal(map[string]any{
		"name":      npmRegPkg,
		"dist-tags": map[string]string{"latest": "1.0.0"},
		"versions": map[string]any{"1.0.0": map[string]any{
			"name": npmRegPkg, "version": "1.0.0", "main": "index.js",
			"dist": map[string]string{"tarball": tarURL, "shasum": hex.EncodeToString(s1[:]),
				"integrity": "sha512-" + base64.StdEncoding.EncodeToString(s512[:])},
		}},
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/" + npmRegPkg:
			w.Header().Set("Content-Type", "application/json")
			w.Write(doc)
		case "/" + npmRegPkg + "/-/" + npmRegPkg + "-1.0.0.tgz":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(tgz)
		default:
			http.NotFound(w, r)
		}
	})
}

// npmRegistry starts the stand-in registry and returns its address for
// --add-host and the flags the run needs besides. As root it runs in a
// network namespace of its own behind a veth (a real remote address, so
// only the domain rule can let the install through); unprivileged, on the
// host's loopback, which the sandbox reaches only with --allow-ip.
func npmRegistry(t *testing.T) (ip string, port int, extra []string) {
	t.Helper()
	if os.Geteuid() != 0 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port = netPort(ln.Addr())
		srv := &http.Server{Handler: npmRegHandler(port), ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
		return "127.0.0.1", port, []string{"--allow-ip", fmt.Sprintf("127.0.0.1/32:%d", port)}
	}
	f := &netFix{root: true}
	f.setupNetns(t) // the net tests' namespace; its own servers are unused here
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", f.ns, exe)
	cmd.Env = append(os.Environ(), npmRegEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the registry: %v", err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	line := make([]byte, 64)
	n, _ := stdout.Read(line)
	if !strings.HasPrefix(string(line[:n]), "READY") {
		t.Fatalf("the registry did not start: %q", line[:n])
	}
	return f.remoteIP, npmRegPort, nil
}

func TestNpmInstallThroughAllowlist(t *testing.T) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		if inCI() {
			t.Fatalf("npm is not installed (.ci/run installs it)")
		}
		t.Skip("npm is not installed")
	}
	ip, port, extra := npmRegistry(t)
	h := newProfHome(t)
	// The registry is named only in npm's own configuration on the host.
	if err := os.WriteFile(h.path("~/.npmrc"), []byte(fmt.Sprintf("registry=http://%s:%d/\n", npmRegHost, port)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(h.env, "npm_config_update_notifier=false")
	script := fmt.Sprintf(`cd %q && env -u HTTP_PROXY -u http_proxy -u HTTPS_PROXY -u https_proxy %s install --no-audit --no-fund --fetch-retries=0 %s && node -e 'console.log(require("%s"))'`,
		h.ws, npm, npmRegPkg, npmRegPkg)
	flags := append([]string{"--add-host", npmRegHost + ":" + ip}, extra...)

	r := sh(t, runOpts{dir: h.ws, env: env, timeout: 120 * time.Second}, script, append([]string{"--profile", "node"}, flags...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "from the stand-in registry") {
		t.Fatalf("npm install through the node profile: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(h.ws, "node_modules", npmRegPkg, "index.js")); err != nil {
		t.Errorf("the package is not in the workspace: %v", err)
	}
	// The control: the same install without the profile (the registry's
	// host is not allowed) fails.
	os.RemoveAll(filepath.Join(h.ws, "node_modules"))
	os.Remove(filepath.Join(h.ws, "package-lock.json"))
	os.Remove(filepath.Join(h.ws, "package.json"))
	script = strings.Replace(script, npm+" install", "npm_config_registry=http://"+npmRegHost+":"+fmt.Sprint(port)+"/ "+npm+" install", 1)
	ctl := append([]string{"--allow-domain", "unrelated.test"}, flags...)
	if os.Geteuid() != 0 {
		// Unprivileged, --allow-ip lets the loopback port through whatever
		// the name: the control is the root run's.
		return
	}
	r = sh(t, runOpts{dir: h.ws, env: env, timeout: 120 * time.Second}, script, ctl...)
	if r.code == 0 {
		t.Errorf("npm install without the node profile succeeded: the control does not discriminate\n%s", r.stdout)
	}
}
