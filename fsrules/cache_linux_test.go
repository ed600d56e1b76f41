package fsrules

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/dircache"
)

// TestExpandCachedEqualsFresh: after each change an agent (or the host)
// can make between two runs, a walk answered by the directory cache of the
// run before plans exactly what a walk that reads every directory plans,
// and the protection in question is there. Each change is one of the
// things a directory's ctime does or does not show: an entry planted and
// the directory's mtime put back (utimes(2) sets the mtime, never the
// ctime), a chmod 311 with the mtime put back (the skipped access check), a
// subtree renamed into a place where other rules apply (the children's own
// ctimes and inodes do not change: the record is the path's), and a second
// hard link of a protected file. The cached walk must have answered some
// directories from the cache, or it proves nothing.
func TestExpandCachedEqualsFresh(t *testing.T) {
	deny := []string{"**/y/**/*.txt"}
	cases := []struct {
		name   string
		tree   []string
		change func(t *testing.T, ws string)
		want   string // a path that must be protected after the change
	}{
		{"plant, mtime put back", []string{"a/x.go", "a/b/y.go"}, func(t *testing.T, ws string) {
			keepMtime(t, filepath.Join(ws, "a"), func() { mk(t, ws, "a/.env") })
		}, "a/.env"},
		{"chmod 311, mtime put back", []string{"noread/.env", "noread/z.go", "noread/deep/id_rsa"}, func(t *testing.T, ws string) {
			p := filepath.Join(ws, "noread")
			keepMtime(t, p, func() { must(t, os.Chmod(p, 0o311)) })
			t.Cleanup(func() { os.Chmod(p, 0o755) })
		}, "noread/.env"},
		{"subtree renamed under other rules", []string{"x/sub/f.txt", "x/sub/g.go", "y/keep.go"}, func(t *testing.T, ws string) {
			must(t, os.Rename(filepath.Join(ws, "x"), filepath.Join(ws, "y", "x")))
		}, "y/x/sub/f.txt"},
		{"hard link of a secret, mtime put back", []string{".env", "a/x.go"}, func(t *testing.T, ws string) {
			keepMtime(t, filepath.Join(ws, "a"), func() { must(t, os.Link(filepath.Join(ws, ".env"), filepath.Join(ws, "a/notes.go"))) })
		}, "a/notes.go"},
	}
	wss := make([]string, len(cases))
	for i, c := range cases {
		wss[i] = tmp(t)
		mk(t, wss[i], append(c.tree, "still/deep/z.go")...) // a subtree no change touches
	}
	// The cache keeps no record of a directory changed within the last
	// second (dircache.Margin).
	time.Sleep(dircache.Margin + 100*time.Millisecond)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws, state := wss[i], tmp(t)
			in := Input{Workspace: ws, Writable: []string{ws}, Deny: deny}
			run := func() (Plan, int) {
				dc, err := dircache.Open(state)
				must(t, err)
				in.Dirs = dc
				p, err := Expand(in)
				must(t, err)
				must(t, dc.Save())
				hits, _ := dc.Stats()
				return p, hits
			}
			run()
			if _, hits := run(); hits == 0 {
				t.Fatal("the second walk answered nothing from the cache: the test proves nothing")
			}
			c.change(t, ws)
			cached, hits := run()
			if hits == 0 {
				t.Fatal("the walk after the change answered nothing from the cache: the test proves nothing")
			}
			in.Dirs = nil
			fresh, err := Expand(in)
			must(t, err)
			got, _ := json.MarshalIndent(cached, "", " ")
			want, _ := json.MarshalIndent(fresh, "", " ")
			if string(got) != string(want) {
				t.Errorf("the cached walk plans\n%s\na fresh walk\n%s", got, want)
			}
			if !protected(ws, cached.Masks, c.want) {
				t.Errorf("%s is not protected after the change: %v", c.want, summary(ws, cached.Masks))
			}
		})
	}
}

// protected: rel or a directory above it is masked.
func protected(ws string, ms []Mask, rel string) bool {
	for p := filepath.Join(ws, rel); p != ws && p != "/"; p = filepath.Dir(p) {
		for _, m := range ms {
			if m.Path == p {
				return true
			}
		}
	}
	return false
}

// keepMtime runs change and sets dir's mtime (and atime) back to what they
// were: what an agent does to hide a change from an mtime check.
func keepMtime(t *testing.T, dir string, change func()) {
	t.Helper()
	var st unix.Stat_t
	must(t, unix.Lstat(dir, &st))
	change()
	must(t, unix.UtimesNanoAt(unix.AT_FDCWD, dir, []unix.Timespec{st.Atim, st.Mtim}, unix.AT_SYMLINK_NOFOLLOW))
}

// TestExpandCacheCreds: a cached answer stands for an access check passed
// with the credentials of the run that kept it: with other credentials
// (another group list, say) the walk checks and reads every directory.
func TestExpandCacheCreds(t *testing.T) {
	ws, state := tmp(t), tmp(t)
	mk(t, ws, "a/b/c.go", "d/e.go")
	time.Sleep(dircache.Margin + 100*time.Millisecond)
	in := Input{Workspace: ws, Writable: []string{ws}}
	old := creds
	t.Cleanup(func() { creds = old })
	for i, c := range []struct {
		creds string
		hits  bool
	}{{"A", false}, {"A", true}, {"B", false}} {
		creds = func() string { return c.creds }
		dc, err := dircache.Open(state)
		must(t, err)
		in.Dirs = dc
		_, err = Expand(in)
		must(t, err)
		must(t, dc.Save())
		if hits, _ := dc.Stats(); (hits > 0) != c.hits {
			t.Errorf("walk %d with credentials %s: %d directories from the cache, want any: %t", i, c.creds, hits, c.hits)
		}
	}
}
