//go:build linux

package tests

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	jailapi "github.com/jail-sandbox/jail"
)

// This file: the test process's own HOME. No test may touch the home of the
// user running it: every jail the tests start writes its default trail and
// its registry entry under $XDG_STATE_HOME, and the home tests plant files in
// ~/.ssh and ~/.aws. TestMain gives the process a fresh HOME and XDG_*_HOME
// before any test runs and removes it afterwards.
//
// Where the home lives matters. jail always hides /tmp, /var/tmp, /run,
// /root, /home and the data places (/opt, /srv, /mnt, top-level directories
// the system does not use such as /work), and hides $HOME by its own rule: a test home under /tmp
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
var hiddenPrefixes = []string{"/tmp", "/var/tmp", "/run", "/root", "/home", "/dev/shm", "/mnt/wslg",
	// Data places (sandbox/view.go): empty inside too.
	"/opt", "/srv", "/mnt", "/media", "/var/www", "/var/opt"}

// systemTop are the top-level directories jail shows (sandbox/view.go); any
// other one (/work, /data) is a data place, empty inside.
var systemTop = map[string]bool{
	"bin": true, "sbin": true, "lib": true, "lib32": true, "lib64": true, "libx32": true,
	"usr": true, "etc": true, "var": true, "boot": true, "dev": true, "proc": true, "sys": true,
	"snap": true, "nix": true, "gnu": true,
}

func underHidden(p string) bool {
	for _, h := range hiddenPrefixes {
		if p == h || strings.HasPrefix(p, h+"/") {
			return true
		}
	}
	top, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	return !systemTop[top]
}

func TestMain(m *testing.M) {
	// This binary embeds the Go API too (apiregistry_test.go): started as
	// a sandbox's supervisor or init it is that, and never returns.
	jailapi.Init()
	if os.Getenv(apiStartShimEnv) != "" {
		apiStartShim() // apiregistry_test.go; exits
	}
	if os.Getenv(notifyShimEnv) != "" {
		notifyShim() // degraded_test.go; execs jail, never returns
	}
	if os.Getenv(everydayShimEnv) != "" {
		everydayShim() // everyday_test.go; exits
	}
	if os.Getenv(dnsShimEnv) != "" {
		dnsShim() // net_test.go; runs jail, never returns
	}
	if os.Getenv(entryReleaseKillEnv) != "" {
		entryReleaseKillShim() // initentry_order_test.go; execs the entry
	}
	if strings.HasSuffix(os.Getenv(privateMountsEnv), ":setup") {
		privateMountsSetup() // execs this binary again, never returns
	}
	sideBySide()
	os.Exit(withTestHome(m))
}

// waitsOnDeadline marks a test that spends most of its time waiting out
// one of jail's own deadlines (a jail exec start's 15 s, twice; a control
// socket's 6 s) or a 1% CPU quota, its sandbox's processes stopped or
// throttled: such tests run side by side once the rest of the package has
// run, instead of one after another (about 100 s of each run of the
// package, of 530).
func waitsOnDeadline(t *testing.T) {
	t.Parallel()
}

// sideBySide lets every waitsOnDeadline test run at once: -parallel is
// GOMAXPROCS by default, two here, which would run them two by two. Only
// those tests are parallel; a -parallel given on the command line wins.
func sideBySide() {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", "8")
	}
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
	// The tests loosen and restore modes on their own paths: a restore
	// that reached above the test home once left /tmp without its sticky
	// bit. The host's directories the tests run under are as they were,
	// or the run fails.
	shared := []string{os.TempDir(), filepath.Dir(home)}
	before := make([]fs.FileMode, len(shared))
	for i, d := range shared {
		if fi, err := os.Stat(d); err == nil {
			before[i] = fi.Mode()
		}
	}
	code := m.Run()
	for i, d := range shared {
		if fi, err := os.Stat(d); err == nil && before[i] != 0 && fi.Mode() != before[i] {
			fmt.Fprintf(os.Stderr, "tests: %s was %v before the tests and is %v now: a test changed a host directory's mode (restored)\n", d, before[i], fi.Mode())
			os.Chmod(d, before[i]&(fs.ModePerm|fs.ModeSticky|fs.ModeSetgid|fs.ModeSetuid))
			code = 1
		}
	}
	return code
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

// privateMountsEnv runs one test again in a mount namespace of its own with
// a fresh, empty /tmp (inPrivateMounts): "NAME:setup" for the step that
// makes it, "NAME:run" for the test itself.
const privateMountsEnv = "JAIL_TEST_PRIVATE_MOUNTS"

// inPrivateMounts runs the calling test again, alone, in its own mount
// namespace (and, unprivileged, user namespace) whose /tmp is a fresh tmpfs,
// and fails unless that run passes. It returns true in that run, where the
// test body goes, and false in the caller. Tests that compare the host's
// mount table or /tmp before and after a run need it: on a shared machine
// other processes change both all the time, and in here only jail can.
func inPrivateMounts(t *testing.T) bool {
	t.Helper()
	if os.Getenv(privateMountsEnv) == t.Name()+":run" {
		return true
	}
	cmd := exec.Command("/proc/self/exe", "-test.run", "^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = []string{privateMountsEnv + "=" + t.Name() + ":setup", "TMPDIR=/tmp"}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, privateMountsEnv+"=") && !strings.HasPrefix(e, "TMPDIR=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	if os.Getuid() != 0 {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		cmd.SysProcAttr.GidMappingsEnableSetgroups = false
		cmd.SysProcAttr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
	}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("%s in a private mount namespace: %v\n%s", t.Name(), err, out)
	}
	return false
}

// privateMountsSetup makes / private (nothing here reaches the host), mounts
// a fresh tmpfs on /tmp, gives up the capabilities it needed for that, and
// execs the test binary for the test named in privateMountsEnv.
func privateMountsSetup() {
	fail := func(err error) {
		fmt.Fprintf(os.Stderr, "private mounts: %v\n", err)
		os.Exit(120)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		fail(err)
	}
	// A JAIL_BIN under /tmp is about to be covered: keep it open across the
	// exec and name it by its descriptor.
	jailBinEnv := ""
	if b := os.Getenv("JAIL_BIN"); b != "" && (b == "/tmp" || strings.HasPrefix(b, "/tmp/")) {
		fd, err := unix.Open(b, unix.O_RDONLY, 0) // no O_CLOEXEC: it must survive the exec
		if err != nil {
			fail(err)
		}
		jailBinEnv = fmt.Sprintf("JAIL_BIN=/proc/self/fd/%d", fd)
	}
	if err := unix.Mount("jail-test-tmp", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		fail(err)
	}
	// Ambient capabilities are per thread; exec from this one drops them.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		fail(err)
	}
	name := strings.TrimSuffix(os.Getenv(privateMountsEnv), ":setup")
	env := []string{privateMountsEnv + "=" + name + ":run"}
	if jailBinEnv != "" {
		env = append(env, jailBinEnv)
	}
	for _, e := range os.Environ() {
		// The first of two equal names would win.
		if !strings.HasPrefix(e, privateMountsEnv+"=") && (jailBinEnv == "" || !strings.HasPrefix(e, "JAIL_BIN=")) {
			env = append(env, e)
		}
	}
	fail(syscall.Exec("/proc/self/exe", os.Args, env))
}
