//go:build linux

package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// This file: the test process's own HOME. No test may touch the home of the
// user running it: every jail the tests start writes its default trail and
// its registry entry under $XDG_STATE_HOME, and the home tests plant files in
// ~/.ssh and ~/.aws. TestMain gives the process a fresh HOME and XDG_*_HOME
// before any test runs and removes it afterwards.
//
// Where the home lives matters. jail always hides /tmp, /var/tmp, /run,
// /root and /home, and hides $HOME by its own rule: a test home under /tmp
// (t.TempDir) would make every "the home is hidden" test pass whatever the
// home rule does. So the home is made where the host's read-only view shows
// it and only the home rule hides it: under $JAIL_TEST_HOME_BASE when set
// (.ci/run sets it), else in the package directory the test runs in (as
// `go test` does), else (a working directory in a hidden place) under /tmp,
// where testHomeVisible is false and the tests that depend on visibility say
// so (TestHiddenPlaces' control fails in CI, skips elsewhere).

var (
	// testHome is this process's HOME (symlinks resolved), mode 0755 along
	// its whole path so that the sandbox's user (host nobody when root runs
	// the tests) could read it if jail did not hide it.
	testHome string
	// testHomeVisible is false when testHome had to go under a place jail
	// hides anyway.
	testHomeVisible bool
	// hostEnv is the environment before TestMain changed it: `go build`
	// of the binary keeps its real caches.
	hostEnv []string
)

// hiddenPrefixes are the places jail hides whatever $HOME is (README, "What
// the agent gets"); a test home under one of them proves nothing.
var hiddenPrefixes = []string{"/tmp", "/var/tmp", "/run", "/root", "/home", "/dev/shm", "/mnt/wslg"}

func underHidden(p string) bool {
	for _, h := range hiddenPrefixes {
		if p == h || strings.HasPrefix(p, h+"/") {
			return true
		}
	}
	return false
}

func TestMain(m *testing.M) {
	if os.Getenv(notifyShimEnv) != "" {
		notifyShim() // degraded_test.go; execs jail, never returns
	}
	if os.Getenv(dnsShimEnv) != "" {
		dnsShim() // net_test.go; runs jail, never returns
	}
	os.Exit(withTestHome(m))
}

func withTestHome(m *testing.M) int {
	hostEnv = os.Environ()
	home, visible, err := makeTestHome()
	if err != nil {
		fmt.Fprintf(os.Stderr, "tests: cannot make a test HOME: %v (set JAIL_TEST_HOME_BASE to a writable directory outside /tmp, /home and /root)\n", err)
		return 2
	}
	defer os.RemoveAll(home)
	testHome, testHomeVisible = home, visible
	for k, v := range map[string]string{
		"HOME":            home,
		"XDG_STATE_HOME":  filepath.Join(home, ".local", "state"),
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_CACHE_HOME":  filepath.Join(home, ".cache"),
		"XDG_DATA_HOME":   filepath.Join(home, ".local", "share"),
		"XDG_RUNTIME_DIR": filepath.Join(home, ".runtime"),
	} {
		if err := os.MkdirAll(v, 0o755); err != nil {
			fmt.Fprintf(os.Stderr, "tests: %v\n", err)
			return 2
		}
		os.Setenv(k, v)
	}
	os.Chmod(filepath.Join(home, ".runtime"), 0o700) // as XDG requires
	return m.Run()
}

// makeTestHome creates the home (see the file comment for where).
func makeTestHome() (string, bool, error) {
	var bases []string
	if b := os.Getenv("JAIL_TEST_HOME_BASE"); b != "" {
		if !filepath.IsAbs(b) {
			return "", false, fmt.Errorf("JAIL_TEST_HOME_BASE=%q is not absolute", b)
		}
		bases = append(bases, b)
	} else if wd, err := os.Getwd(); err == nil {
		bases = append(bases, wd)
	}
	for _, base := range bases {
		if r, err := filepath.EvalSymlinks(base); err == nil {
			base = r
		}
		if underHidden(base) {
			continue
		}
		d, err := os.MkdirTemp(base, ".testhome-")
		if err != nil {
			if os.Getenv("JAIL_TEST_HOME_BASE") != "" {
				return "", false, err
			}
			continue
		}
		os.Chmod(d, 0o755)
		return d, true, nil
	}
	d, err := os.MkdirTemp("", "jail-testhome-")
	if err != nil {
		return "", false, err
	}
	os.Chmod(d, 0o755)
	d, _ = filepath.EvalSymlinks(d)
	return d, false, nil
}

// needVisibleHome stops a test whose claim is "the home rule hides it" when
// the test home lies where jail hides everything anyway.
func needVisibleHome(t testing.TB) {
	t.Helper()
	if testHomeVisible {
		return
	}
	msg := fmt.Sprintf("the test HOME %s is under a place jail always hides: set JAIL_TEST_HOME_BASE to a directory outside %v", testHome, hiddenPrefixes)
	if inCI() {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// hostDir makes a directory beside the test home: visible inside the sandbox
// through the host's read-only view (it is neither under /tmp nor $HOME),
// traversable by everyone, removed when the test ends.
func hostDir(t testing.TB) string {
	t.Helper()
	needVisibleHome(t)
	d, err := os.MkdirTemp(filepath.Dir(testHome), ".testhost-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(d, 0o755)
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}
