package maskwatch

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// start watches paths under a fresh directory and returns the falls'
// channel.
func start(t *testing.T, paths ...Path) (*Watch, chan Fall) {
	t.Helper()
	ch := make(chan Fall, 16)
	w, err := Start(Config{Paths: paths, Fell: func(f Fall) { ch <- f }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.CloseLater()() })
	return w, ch
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func want(t *testing.T, ch chan Fall, path, how string) {
	t.Helper()
	select {
	case f := <-ch:
		if f.Path.Path != path || f.How != how {
			t.Fatalf("fall %s %q, want %s %q", f.Path.Path, f.How, path, how)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no fall reported for %s (%s)", path, how)
	}
}

func none(t *testing.T, ch chan Fall) {
	t.Helper()
	select {
	case f := <-ch:
		t.Fatalf("unexpected fall %s %q", f.Path.Path, f.How)
	case <-time.After(100 * time.Millisecond):
	}
}

// Each way the host takes a path's dentry away is reported once; what
// happens to other names, and a write in place (the same dentry: the
// mount stays), is not.
func TestFalls(t *testing.T) {
	d := t.TempDir()
	env, cfg, sock, sub := filepath.Join(d, ".env"), filepath.Join(d, "config"), filepath.Join(d, "s.sock"), filepath.Join(d, "sub")
	for _, p := range []string{env, cfg, sock} {
		write(t, p, "old")
	}
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	_, ch := start(t, Path{Path: env, Kind: "mask", Hides: true}, Path{Path: cfg, Kind: "read-only"}, Path{Path: sock, Kind: "mask", Hides: true},
		Path{Path: sub, Kind: "pin"}, Path{Path: filepath.Join(d, "missing"), Kind: "mask"})

	write(t, filepath.Join(d, "other"), "x")
	write(t, env, "in place") // same inode, same dentry
	if err := os.Remove(filepath.Join(d, "other")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(d, "missing"), "made later: was never covered")
	none(t, ch)

	// An editor's atomic save.
	write(t, env+".tmp", "NEW")
	if err := os.Rename(env+".tmp", env); err != nil {
		t.Fatal(err)
	}
	want(t, ch, env, "renamed over")
	// Once: the mask is gone already.
	write(t, env+".tmp", "NEWER")
	if err := os.Rename(env+".tmp", env); err != nil {
		t.Fatal(err)
	}
	none(t, ch)

	if err := os.Rename(cfg, cfg+".old"); err != nil {
		t.Fatal(err)
	}
	want(t, ch, cfg, "renamed away")

	// A mask's path removed shows nothing: said only when a new one
	// is there (a daemon binding its socket again).
	if err := os.Remove(sock); err != nil {
		t.Fatal(err)
	}
	none(t, ch)
	write(t, sock, "new")
	want(t, ch, sock, "created after its removal")

	if err := os.Rename(sub, sub+".old"); err != nil {
		t.Fatal(err)
	}
	want(t, ch, sub, "renamed away")
}

// After an overflow the paths are compared with what they were at start.
func TestOverflowRecheck(t *testing.T) {
	d := t.TempDir()
	a, b, c := filepath.Join(d, "a"), filepath.Join(d, "b"), filepath.Join(d, "c")
	write(t, a, "a")
	write(t, b, "b")
	write(t, c, "c")
	w, ch := start(t, Path{Path: a, Kind: "mask", Hides: true}, Path{Path: b, Kind: "mask", Hides: true}, Path{Path: c, Kind: "mask", Hides: true})
	w.Unwatch() // no event from here on: the replacement below is seen by the recheck only
	write(t, a+".tmp", "NEW")
	if err := os.Rename(a+".tmp", a); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(c); err != nil { // nothing there: nothing shown
		t.Fatal(err)
	}
	w.mu.Lock()
	w.recheck(time.Now())
	w.mu.Unlock()
	w.report()
	want(t, ch, a, "replaced")
	none(t, ch)
}

// Nothing to watch: no inotify instance, no error.
func TestNothing(t *testing.T) {
	w, err := Start(Config{Paths: []Path{{Path: "/nonexistent/x"}, {Path: "relative"}}})
	if err != nil {
		t.Fatal(err)
	}
	if n := w.Watches(); n != 0 {
		t.Fatalf("%d watches, want 0", n)
	}
	w.Unwatch()
	w.CloseLater()()
}

// overflow makes the watch's queue overflow: the loop is held (w.mu) while
// more events than the queue holds are made in dir; then change runs, and
// the loop goes on (the overflow's recheck sees what change did: its
// events were dropped).
func overflow(t *testing.T, w *Watch, dir string, change func()) {
	t.Helper()
	max := 16384
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			max = n
		}
	}
	w.mu.Lock()
	locked := true
	defer func() {
		if locked {
			w.mu.Unlock()
		}
	}()
	// A rename is two events (moved from, moved to).
	f, g := filepath.Join(dir, "flood"), filepath.Join(dir, "flood2")
	write(t, f, "")
	for i := 0; i < max/2+1000; i++ {
		if err := os.Rename(f, g); err != nil {
			t.Fatal(err)
		}
		f, g = g, f
	}
	change()
	locked = false
	w.mu.Unlock()
}

// A file the host deletes and makes again often gets the inode number it
// had (ext4 takes the first free one): after an overflow the comparison
// must not take it for the same file. On main's code (device and inode
// compared only) the new .env, made with the old inode number while the
// queue was full, was not reported.
func TestOverflowInodeReused(t *testing.T) {
	d := t.TempDir()
	env := filepath.Join(d, ".env")
	write(t, env, "SECRET=old")
	w, ch := start(t, Path{Path: env, Kind: "mask", Hides: true})
	var before unix.Stat_t
	if err := unix.Lstat(env, &before); err != nil {
		t.Fatal(err)
	}
	overflow(t, w, d, func() {
		// The user's `rm .env; echo ... > .env`: on ext4 the same inode
		// number (tried a few times; elsewhere a new number, reported
		// all the same).
		for i := 0; i < 20; i++ {
			if err := os.Remove(env); err != nil {
				t.Fatal(err)
			}
			write(t, env, "SECRET=NEW")
			var st unix.Stat_t
			if err := unix.Lstat(env, &st); err != nil {
				t.Fatal(err)
			}
			if st.Ino == before.Ino {
				t.Logf("inode %d reused", st.Ino)
				break
			}
		}
	})
	want(t, ch, env, "replaced")
}

// The agent owns its workspace: it can make the directory of a masked
// file unsearchable while the supervisor (the same uid) rechecks after an
// overflow it caused. A path that cannot be looked at is not taken for
// one that is gone: on main's code the replaced .env was then not
// reported (run as a user other than root; root searches any directory).
func TestOverflowUnsearchable(t *testing.T) {
	d := t.TempDir()
	sub := filepath.Join(d, "ws")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(sub, ".env")
	write(t, env, "SECRET=old")
	w, ch := start(t, Path{Path: env, Kind: "mask", Hides: true})
	overflow(t, w, sub, func() {
		write(t, env+".tmp", "SECRET=NEW")
		if err := os.Rename(env+".tmp", env); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(sub, 0); err != nil {
			t.Fatal(err)
		}
	})
	defer os.Chmod(sub, 0o755)
	want(t, ch, env, "replaced")
}

// A directory that cannot be watched (a host socket's in a directory the
// user may search but not read: EACCES) leaves its own paths out, named,
// and the others watched. On main's code one such directory made Start
// fail and nothing was watched (seen by hand as jailtest: a socket in a
// root-owned 0711 directory turned off the watch of the workspace's .env).
func TestUnwatchableDirLeftOut(t *testing.T) {
	d := t.TempDir()
	a, b := filepath.Join(d, "ws"), filepath.Join(d, "sockdir")
	for _, x := range []string{a, b} {
		if err := os.Mkdir(x, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env, sock := filepath.Join(a, ".env"), filepath.Join(b, "s.sock")
	write(t, env, "old")
	write(t, sock, "")
	saved := addWatch
	defer func() { addWatch = saved }()
	addWatch = func(fd int, p string, mask uint32) (int, error) {
		if p == b {
			return -1, unix.EACCES
		}
		return saved(fd, p, mask)
	}
	w, ch := start(t, Path{Path: env, Kind: "mask", Hides: true}, Path{Path: sock, Kind: "mask", Hides: true})
	un := w.Unwatched()
	if len(un) != 1 || un[0].Path.Path != sock {
		t.Fatalf("unwatched %v, want %s", un, sock)
	}
	if n := w.Watches(); n != 1 {
		t.Fatalf("%d watches, want 1", n)
	}
	write(t, env+".tmp", "NEW")
	if err := os.Rename(env+".tmp", env); err != nil {
		t.Fatal(err)
	}
	want(t, ch, env, "renamed over")
}

// The identities taken before init mounted (Identify, Config.Before) are
// the ones compared with once the watch is armed: a file put at a path in
// between (after init's mount took the mask off) is a fall; a path that
// did not change, or was written in place, is not; a path absent before
// is left out. Without Before the replaced file was taken for the masked
// one (Start's own identities): nothing was reported.
func TestBeforeIdentities(t *testing.T) {
	d := t.TempDir()
	env, cfg, kept, absent := filepath.Join(d, ".env"), filepath.Join(d, "config"), filepath.Join(d, "kept"), filepath.Join(d, "absent")
	for _, p := range []string{env, cfg, kept} {
		write(t, p, "old")
	}
	paths := []Path{{Path: env, Kind: "mask", Hides: true}, {Path: cfg, Kind: "read-only"}, {Path: kept, Kind: "mask", Hides: true},
		{Path: absent, Kind: "mask", Hides: true}}
	before := Identify(paths)
	// The host, while init mounts: a save of .env, config deleted, kept
	// written in place, absent made.
	write(t, env+".tmp", "NEW")
	if err := os.Rename(env+".tmp", env); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	write(t, kept, "in place")
	write(t, absent, "made")
	ch := make(chan Fall, 16)
	w, err := Start(Config{Paths: paths, Before: before, Fell: func(f Fall) { ch <- f }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.CloseLater()() })
	got := map[string]string{}
	for len(got) < 2 {
		select {
		case f := <-ch:
			got[f.Path.Path] = f.How
		case <-time.After(5 * time.Second):
			t.Fatalf("falls %v, want %s and %s replaced", got, env, cfg)
		}
	}
	if got[env] != "replaced" || got[cfg] != "replaced" {
		t.Fatalf("falls %v, want %s and %s replaced", got, env, cfg)
	}
	none(t, ch)
}
