package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The registry is in $XDG_RUNTIME_DIR/jail only when that directory is
// the user's and 0700; otherwise in the state directory; and either way a
// registry directory that is not private is refused, never used.
func TestRegistryDir(t *testing.T) {
	base := t.TempDir()
	state := filepath.Join(base, "state")
	tests := []struct {
		name    string
		runtime func(t *testing.T) string // XDG_RUNTIME_DIR
		want    string                    // the registry, relative to base
	}{
		{"private runtime dir", func(t *testing.T) string {
			d := filepath.Join(base, "rt1")
			os.Mkdir(d, 0o700)
			return d
		}, "rt1/jail"},
		{"unset", func(t *testing.T) string { return "" }, "state/jail/run"},
		{"relative", func(t *testing.T) string { return "rt1" }, "state/jail/run"},
		{"missing", func(t *testing.T) string { return filepath.Join(base, "nope") }, "state/jail/run"},
		{"open to others", func(t *testing.T) string {
			d := filepath.Join(base, "rt2")
			os.Mkdir(d, 0o755)
			os.Chmod(d, 0o755)
			return d
		}, "state/jail/run"},
		{"a symlink to a private dir", func(t *testing.T) string {
			os.Symlink(filepath.Join(base, "rt1"), filepath.Join(base, "rt3"))
			return filepath.Join(base, "rt3")
		}, "state/jail/run"},
		{"another user's", func(t *testing.T) string {
			if os.Getuid() != 0 {
				t.Skip("needs root to chown")
			}
			d := filepath.Join(base, "rt4")
			os.Mkdir(d, 0o700)
			os.Chown(d, 65534, 65534)
			return d
		}, "state/jail/run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", state)
			t.Setenv("XDG_RUNTIME_DIR", tt.runtime(t))
			got, err := registryDir()
			if err != nil || got != filepath.Join(base, tt.want) {
				t.Fatalf("registryDir = %q, %v; want %s", got, err, filepath.Join(base, tt.want))
			}
			d, err := ensureRegistry()
			if err != nil || d != got {
				t.Fatalf("ensureRegistry = %q, %v", d, err)
			}
			if fi, _ := os.Stat(d); fi.Mode().Perm() != 0o700 {
				t.Fatalf("%s is %v", d, fi.Mode())
			}
		})
	}
	// The registry itself loosened, or replaced by a symlink: refused by
	// writers and readers alike (fail closed).
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(base, "rt1"))
	reg := filepath.Join(base, "rt1", "jail")
	os.Chmod(reg, 0o733)
	if _, err := ensureRegistry(); err == nil || !strings.Contains(err.Error(), "open to others") {
		t.Fatalf("ensureRegistry on a 0733 registry: %v", err)
	}
	if _, err := List(); err == nil {
		t.Fatal("List read a registry open to others")
	}
	os.Remove(reg)
	os.Mkdir(filepath.Join(base, "elsewhere"), 0o700)
	os.Symlink(filepath.Join(base, "elsewhere"), reg)
	if _, err := ensureRegistry(); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("ensureRegistry through a symlink: %v", err)
	}
	os.Remove(reg)
	if es, err := List(); err != nil || len(es) != 0 {
		t.Fatalf("List with no registry yet: %v, %v", es, err)
	}
}

// A control socket that no record names and nobody listens on (its
// supervisor was killed between the two) is removed by the next listing;
// one that a live process serves stays.
func TestListRemovesDeadSockets(t *testing.T) {
	rt := filepath.Join(t.TempDir(), "rt")
	os.Mkdir(rt, 0o700)
	t.Setenv("XDG_RUNTIME_DIR", rt)
	reg, err := ensureRegistry()
	if err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(reg, "dead.sock")
	ln, err := net.Listen("unix", dead)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close() // the file stays, nobody listens
	young := filepath.Join(reg, "young.sock")
	ln3, err := net.Listen("unix", young)
	if err != nil {
		t.Fatal(err)
	}
	ln3.(*net.UnixListener).SetUnlinkOnClose(false)
	ln3.Close() // as a supervisor between its bind and its listen
	old := time.Now().Add(-2 * time.Minute)
	os.Chtimes(dead, old, old)
	live := filepath.Join(reg, "live.sock")
	ln2, err := net.Listen("unix", live)
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	if _, err := List(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dead); err == nil {
		t.Error("the dead socket stayed")
	}
	if _, err := os.Lstat(live); err != nil {
		t.Errorf("the live socket went: %v", err)
	}
	if _, err := os.Lstat(young); err != nil {
		t.Errorf("a socket made a moment ago went (a starting supervisor's): %v", err)
	}
}
