//go:build linux

// Package tests holds end-to-end and adversarial tests of the built jail
// binary. They run as whoever runs `go test` (root in CI) and again, from the
// same compiled test binary, as an unprivileged user (see .ci/run). Set
// JAIL_BIN to a built binary; otherwise the tests build one.
package tests

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	jailBin   string
	buildErr  error
)

// jail returns the path of the jail binary under test.
func jail(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if b := os.Getenv("JAIL_BIN"); b != "" {
			jailBin = b
			return
		}
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Dir(filepath.Dir(file))
		dir, err := os.MkdirTemp("", "jail-e2e-bin")
		if err != nil {
			buildErr = err
			return
		}
		os.Chmod(dir, 0o755)
		jailBin = filepath.Join(dir, "jail")
		cmd := exec.Command("go", "build", "-o", jailBin, "./cmd/jail")
		cmd.Dir = root
		cmd.Env = append(append([]string{}, hostEnv...), "CGO_ENABLED=0") // the user's own Go caches
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = err
			jailBin = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build jail: %v\n%s", buildErr, jailBin)
	}
	return jailBin
}

// inCI is true in CI, where security tests must never skip.
func inCI() bool { return os.Getenv("CI") != "" }

type result struct {
	code   int
	stdout string
	stderr string
}

type runOpts struct {
	dir     string
	env     []string
	stdin   string
	extra   []*os.File
	timeout time.Duration
}

// workspace makes a fresh workspace directory the current user owns.
func workspace(t testing.TB) string {
	t.Helper()
	d := t.TempDir()
	// t.TempDir's parent is 0700 for some Go versions when run as another
	// user: make the path traversable so idmapped/bind sources resolve.
	os.Chmod(filepath.Dir(d), 0o755)
	return d
}

// besideHome makes a fresh directory beside the test HOME, in the host's
// read-only tree: the sandbox sees it and cannot write it (a tool jail may
// ask on the host, a stand-in the sandbox runs). It skips the test where
// the test HOME is under a place jail hides anyway, which would hide this
// directory too.
func besideHome(t testing.TB, prefix string) string {
	t.Helper()
	if !testHomeVisible {
		t.Skipf("the test HOME %s is under a place jail hides anyway: a directory beside it would be hidden too", testHome)
	}
	d, err := os.MkdirTemp(filepath.Dir(testHome), prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	os.Chmod(d, 0o755)
	return d
}

func run(t testing.TB, o runOpts, args ...string) result {
	t.Helper()
	return runWith(t, o, jail(t), args...)
}

// runWith runs bin (jail, or a wrapper that execs it) with args.
func runWith(t testing.TB, o runOpts, bin string, args ...string) result {
	t.Helper()
	if o.timeout == 0 {
		o.timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = o.dir
	if cmd.Dir == "" {
		cmd.Dir = workspace(t)
	}
	// The host's proxy variables would make jail chain allowed flows
	// through that proxy (README: Corporate proxies): tests that want it
	// set them in o.env.
	for _, e := range os.Environ() {
		name, _, _ := strings.Cut(e, "=")
		switch strings.ToUpper(name) {
		case "HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY":
			continue
		}
		cmd.Env = append(cmd.Env, e)
	}
	cmd.Env = append(cmd.Env, o.env...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	cmd.Stdin = strings.NewReader(o.stdin)
	cmd.ExtraFiles = o.extra
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("run jail %v: %v", args, err)
		}
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	}
	return result{code: code, stdout: so.String(), stderr: se.String()}
}

// jailExecBg starts `jail exec NAME -- ARGV...` from ws, its output to a
// file, killed after limit; wait waits for it and returns its exit code
// and output (a wait that fails other than by the exit fails the test).
func jailExecBg(t *testing.T, ws, name string, limit time.Duration, argv ...string) (wait func() (int, []byte)) {
	t.Helper()
	outf, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { outf.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, jail(t), append([]string{"exec", name, "--"}, argv...)...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = ws, outf, outf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return func() (int, []byte) {
		t.Helper()
		code := exitCode(t, cmd.Wait())
		out, _ := os.ReadFile(outf.Name())
		return code, out
	}
}

// exitCode is a finished command's exit code from its Wait or Run error:
// 0 for none, the code of an exit; any other error fails the test.
func exitCode(t testing.TB, err error) int {
	t.Helper()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

// sh runs a shell script in a new sandbox with the given extra flags.
func sh(t testing.TB, o runOpts, script string, flags ...string) result {
	t.Helper()
	args := append(append([]string{}, flags...), "--", "/bin/sh", "-c", script)
	return run(t, o, args...)
}

func mustCode(t testing.TB, r result, want int) {
	t.Helper()
	if r.code != want {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
	}
}

// procsWith lists host pids whose command line contains marker.
func procsWith(marker string) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		if strings.Contains(string(b), marker) && !strings.Contains(string(b), "jail") {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

func waitNoProcs(t testing.TB, marker string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		p := procsWith(marker)
		if len(p) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes with marker %q survive: pids %v", marker, p)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer safe to read while a process writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
