package initbin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// setProgram makes data the embedded program for one test: a real
// executable (/bin/true's bytes) unless the test needs other bytes.
func setProgram(t *testing.T, data []byte) string {
	t.Helper()
	oldP, oldS, oldTop := program, sum, chainTop
	h := sha256.Sum256(data)
	program, sum = data, hex.EncodeToString(h[:])+"\n"
	t.Cleanup(func() { program, sum, chainTop = oldP, oldS, oldTop })
	name, ok := fileName()
	if !ok {
		t.Fatal("no file name for the test program")
	}
	return name
}

// open is Open with its extraction run at once, as the supervisor runs it
// after init's start.
func open(dir string) (*os.File, string) {
	f, how, extract := Open(dir)
	if extract != nil {
		how += "; " + extract()
	}
	return f, how
}

func trueBytes(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stateDir is a fresh state directory below a temporary base whose own
// parents the chain check does not climb (chainTop: /tmp may be 0777).
func stateDir(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	real, err := filepath.EvalSymlinks(base)
	if err != nil {
		t.Fatal(err)
	}
	chainTop = real
	return filepath.Join(real, "state", "jail")
}

// runFD execs f the way ns.Begin does (fd 3 of the child, as
// /proc/self/fd/3) and returns its exit error.
func runFD(f *os.File) error {
	cmd := exec.Command("/proc/self/fd/3")
	cmd.ExtraFiles = []*os.File{f}
	return cmd.Run()
}

// mustBeCopy opens dir's copy (after a run that extracted it) and checks
// that it is exec'd and holds the program's bytes.
func mustBeCopy(t *testing.T, dir, name string) {
	t.Helper()
	f, how := open(dir)
	if f == nil {
		t.Fatalf("the copy is not used after its extraction: %s", how)
	}
	defer f.Close()
	if !strings.Contains(how, "the lean init "+filepath.Join(dir, name)) {
		t.Errorf("how = %q", how)
	}
	got, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil || !bytes.Equal(got, program) {
		t.Fatalf("the copy's bytes differ from the program (%v)", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Mode&0o7777 != 0o755 || st.Nlink != 1 {
		t.Fatalf("the copy: mode %#o, %d links (%v)", st.Mode&0o7777, st.Nlink, err)
	}
	if err := runFD(f); err != nil {
		t.Fatalf("exec of the copy by its descriptor: %v", err)
	}
}

func TestOpenExtractsOnceThenExecs(t *testing.T) {
	name := setProgram(t, trueBytes(t))
	dir := stateDir(t)
	f, how := open(dir)
	if f != nil {
		f.Close()
		t.Fatalf("the run that extracts execs the copy it just wrote: %s", how)
	}
	if !strings.HasPrefix(how, Own) || !strings.Contains(how, "extracted the lean init") {
		t.Fatalf("how = %q", how)
	}
	st, err := os.Stat(dir)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("the state directory was not made 0700: %v %v", st.Mode(), err)
	}
	mustBeCopy(t, dir, name)
	mustBeCopy(t, dir, name) // and again: not rewritten
}

func TestOpenWithoutProgram(t *testing.T) {
	oldP, oldS := program, sum
	program, sum = nil, ""
	defer func() { program, sum = oldP, oldS }()
	dir := stateDir(t)
	if f, how := open(dir); f != nil || !strings.Contains(how, "built without the lean init") {
		t.Fatalf("Open without a program: %v, %q", f, how)
	}
	if Embedded() {
		t.Fatal("Embedded without a program")
	}
}

// A copy that fails any check is refused (never exec'd: Open returns no
// descriptor) and replaced by a whole one, which the next run execs.
func TestOpenRefusesTamperedCopy(t *testing.T) {
	good := trueBytes(t)
	cases := []struct {
		name   string
		root   bool // needs root (chown)
		tamper func(t *testing.T, path string)
	}{
		{"group-writable", false, func(t *testing.T, p string) { must(t, os.Chmod(p, 0o775)) }},
		{"world-writable", false, func(t *testing.T, p string) { must(t, os.Chmod(p, 0o757)) }},
		{"setuid", false, func(t *testing.T, p string) { must(t, unix.Chmod(p, 0o4755)) }},
		{"not executable by others", false, func(t *testing.T, p string) { must(t, os.Chmod(p, 0o750)) }},
		{"truncated", false, func(t *testing.T, p string) { must(t, os.Truncate(p, int64(len(good)/2))) }},
		{"appended to", false, func(t *testing.T, p string) {
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			must(t, err)
			_, err = f.WriteString("#")
			must(t, err)
			must(t, f.Close())
		}},
		{"replaced, same size, another owner", true, func(t *testing.T, p string) {
			must(t, os.Remove(p))
			must(t, os.WriteFile(p, bytes.Repeat([]byte{'x'}, len(good)), 0o755))
			must(t, os.Chmod(p, 0o755))
			must(t, os.Chown(p, 12345, 12345))
		}},
		{"a symlink to a good copy", false, func(t *testing.T, p string) {
			other := filepath.Join(filepath.Dir(p), "elsewhere")
			must(t, os.Rename(p, other))
			must(t, os.Symlink(other, p))
		}},
		{"a second hard link", false, func(t *testing.T, p string) {
			must(t, os.Link(p, filepath.Join(filepath.Dir(p), "second")))
		}},
		{"a FIFO", false, func(t *testing.T, p string) {
			must(t, os.Remove(p))
			must(t, unix.Mkfifo(p, 0o755))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.root && os.Geteuid() != 0 {
				// chown needs root; as an ordinary user
				// TestOpenRefusesOtherOwner holds the same check.
				return
			}
			name := setProgram(t, good)
			dir := stateDir(t)
			if f, _ := open(dir); f != nil {
				t.Fatal("first Open execs")
			}
			path := filepath.Join(dir, name)
			c.tamper(t, path)
			f, how := open(dir)
			if f != nil {
				f.Close()
				t.Fatalf("ATTACK WORKED: a %s copy is exec'd: %s", c.name, how)
			}
			if !strings.Contains(how, "refused the lean init") || !strings.Contains(how, "extracted") {
				t.Errorf("how = %q", how)
			}
			mustBeCopy(t, dir, name)
			left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*"))
			if len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

// A copy that is not the euid's is refused, as an ordinary user too (the
// euid the check wants is faked: chown needs root).
func TestOpenRefusesOtherOwner(t *testing.T) {
	name := setProgram(t, trueBytes(t))
	dir := stateDir(t)
	if f, _ := open(dir); f != nil {
		t.Fatal("first Open execs")
	}
	real := geteuid
	defer func() { geteuid = real }()
	geteuid = func() int { return real() + 1 }
	f, how := open(dir)
	if f != nil {
		f.Close()
		t.Fatalf("ATTACK WORKED: a copy of another uid is exec'd: %s", how)
	}
	// Here the state directory is another's too: nothing is replaced.
	if !strings.HasPrefix(how, Own) {
		t.Errorf("how = %q", how)
	}
	// And the file alone (the real directory check):
	d, err := openDirReal(dir)
	must(t, err)
	defer unix.Close(d)
	if f, err := openChecked(d, name, filepath.Join(dir, name)); err == nil || !strings.Contains(err.Error(), "owned by uid") {
		if f != nil {
			f.Close()
		}
		t.Fatalf("ATTACK WORKED: openChecked of another uid's copy: %v", err)
	}
}

func openDirReal(dir string) (int, error) {
	return unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// A directory at the copy's name cannot be replaced: refused, and jail's
// own binary is init (no error, no exec of anything else).
func TestOpenDirectoryAtName(t *testing.T) {
	name := setProgram(t, trueBytes(t))
	dir := stateDir(t)
	must(t, os.MkdirAll(filepath.Join(dir, name), 0o755))
	f, how := open(dir)
	if f != nil {
		f.Close()
		t.Fatalf("a directory is exec'd: %s", how)
	}
	if !strings.HasPrefix(how, Own) || !strings.Contains(how, "not a regular file") {
		t.Errorf("how = %q", how)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// A file planted under the next build's name (before the upgrade that
// brings that build) is refused when that build runs, and replaced.
func TestOpenPlantedUnderNextName(t *testing.T) {
	v1 := trueBytes(t)
	setProgram(t, v1)
	dir := stateDir(t)
	open(dir) // v1's copy
	v2 := append(append([]byte{}, v1...), 0)
	name2 := setProgram(t, v2)
	chainTop = filepath.Dir(filepath.Dir(dir))
	planted := filepath.Join(dir, name2)
	// What an agent could write with its own uid, were the state directory
	// reachable: the right size, its own mode.
	must(t, os.WriteFile(planted, bytes.Repeat([]byte{'x'}, len(v2)), 0o644))
	f, how := open(dir)
	if f != nil {
		f.Close()
		t.Fatalf("ATTACK WORKED: the planted file is exec'd: %s", how)
	}
	if !strings.Contains(how, "refused") {
		t.Errorf("how = %q", how)
	}
	got, _ := os.ReadFile(planted)
	if !bytes.Equal(got, v2) {
		t.Fatal("the planted file was not replaced by the program")
	}
	// v1's copy went with the extraction of v2's (one copy kept).
	if m, _ := filepath.Glob(filepath.Join(dir, "init-*")); len(m) != 1 {
		t.Errorf("copies left after the extraction: %v", m)
	}
}

// The state directory, and every directory above it, must be writable by
// no one but its owner (root or the euid), or sticky: else anyone could
// move another file under the copy's path. Refused: jail's own binary.
func TestOpenUntrustedDirectories(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(t *testing.T, base string) string // returns the state dir
		refuse bool
	}{
		{"state directory group-writable", func(t *testing.T, b string) string {
			d := filepath.Join(b, "s", "jail")
			must(t, os.MkdirAll(d, 0o700))
			must(t, os.Chmod(d, 0o770))
			return d
		}, true},
		{"parent writable by all, not sticky", func(t *testing.T, b string) string {
			must(t, os.Mkdir(filepath.Join(b, "ww"), 0o700))
			must(t, os.Chmod(filepath.Join(b, "ww"), 0o777))
			return filepath.Join(b, "ww", "state", "jail")
		}, true},
		{"grandparent group-writable", func(t *testing.T, b string) string {
			must(t, os.Mkdir(filepath.Join(b, "gw"), 0o700))
			must(t, os.Chmod(filepath.Join(b, "gw"), 0o770))
			return filepath.Join(b, "gw", "home", "state", "jail")
		}, true},
		{"parent writable by all, sticky", func(t *testing.T, b string) string {
			must(t, os.Mkdir(filepath.Join(b, "st"), 0o700))
			must(t, unix.Chmod(filepath.Join(b, "st"), 0o1777))
			return filepath.Join(b, "st", "state", "jail")
		}, false},
		{"parent a symlink to a directory writable by all", func(t *testing.T, b string) string {
			must(t, os.Mkdir(filepath.Join(b, "ww"), 0o700))
			must(t, os.Chmod(filepath.Join(b, "ww"), 0o777))
			must(t, os.Mkdir(filepath.Join(b, "ww", "real"), 0o700))
			must(t, os.Symlink(filepath.Join(b, "ww", "real"), filepath.Join(b, "link")))
			return filepath.Join(b, "link", "jail")
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			setProgram(t, trueBytes(t))
			base := t.TempDir()
			real, _ := filepath.EvalSymlinks(base)
			chainTop = real
			dir := c.setup(t, real)
			open(dir) // extracts, when trusted
			f, how := open(dir)
			if f != nil {
				f.Close()
			}
			if c.refuse && f != nil {
				t.Fatalf("ATTACK WORKED: the copy in an untrusted directory is exec'd: %s", how)
			}
			if !c.refuse && f == nil {
				t.Fatalf("refused: %s", how)
			}
			if c.refuse {
				if m, _ := filepath.Glob(filepath.Join(dir, "init-*")); len(m) > 0 {
					t.Errorf("a copy was written into an untrusted directory: %v", m)
				}
			}
		})
	}
}

// Concurrent first runs each rename a whole copy: afterwards one copy,
// whole, no temporary file, and never a descriptor to a partial file.
func TestOpenConcurrentFirstRuns(t *testing.T) {
	name := setProgram(t, trueBytes(t))
	dir := stateDir(t)
	must(t, os.MkdirAll(dir, 0o700))
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, how := open(dir)
			if f == nil {
				return
			}
			defer f.Close()
			var st unix.Stat_t
			if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Size != int64(len(program)) {
				errs <- fmt.Errorf("a partial copy was handed out: %s (%d bytes)", how, st.Size)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "init-*")); len(m) != 1 {
		t.Errorf("entries after concurrent first runs: %v", m)
	}
	mustBeCopy(t, dir, name)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
