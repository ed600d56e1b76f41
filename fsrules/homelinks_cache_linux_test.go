package fsrules

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/dircache"
)

// TestHomeLinksCacheEqualsFresh: a start that skips reading the home's
// protected directories (the record of an earlier start, homelinks.go)
// plans exactly what the full check plans, after each way a hard link
// between a protected file and a visible name can appear between two
// starts, with every directory's mtime put back (utimes(2) sets it, never
// the ctime): made from the visible side to an existing protected file
// (the protected directories do not change at all), made from the
// protected side, made in a directory renamed into the workspace, and
// made in a workspace the recording start did not show. The start before
// the change must have skipped the read, or the case proves nothing; so
// must a start with nothing changed.
func TestHomeLinksCacheEqualsFresh(t *testing.T) {
	type env struct{ base, home, ws, ws2, out string }
	cases := []struct {
		name   string
		change func(t *testing.T, e env)
		ws     func(e env) string // the workspace of the start after the change
		want   string             // must be masked, relative to base
	}{
		{"link from the visible side", func(t *testing.T, e env) {
			keepMtime(t, filepath.Join(e.ws, "a"), func() {
				must(t, os.Link(filepath.Join(e.home, ".ssh/many/f00150"), filepath.Join(e.ws, "a/notes.txt")))
			})
		}, func(e env) string { return e.ws }, "ws/a/notes.txt"},
		{"link from the visible side, deep in an unchanged tree's new dir", func(t *testing.T, e env) {
			keepMtime(t, filepath.Join(e.ws, "b/deep"), func() {
				must(t, os.Mkdir(filepath.Join(e.ws, "b/deep/n"), 0o755))
			})
			keepMtime(t, filepath.Join(e.ws, "b/deep/n"), func() {
				must(t, os.Link(filepath.Join(e.home, ".mozilla/p/f00003"), filepath.Join(e.ws, "b/deep/n/c.txt")))
			})
		}, func(e env) string { return e.ws }, "ws/b/deep/n/c.txt"},
		{"link from the visible side while another protected directory changed", func(t *testing.T, e env) {
			mk(t, e.home, ".mozilla/p/new")
			keepMtime(t, filepath.Join(e.ws, "a"), func() {
				must(t, os.Link(filepath.Join(e.home, ".ssh/many/f00150"), filepath.Join(e.ws, "a/notes.txt")))
			})
		}, func(e env) string { return e.ws }, "ws/a/notes.txt"},
		{"link between two protected directories of a visible home", func(t *testing.T, e env) {
			keepMtime(t, filepath.Join(e.home, ".local/bin"), func() {
				must(t, os.Link(filepath.Join(e.home, ".ssh/many/f00100"), filepath.Join(e.home, ".local/bin/k")))
			})
		}, func(e env) string { return e.home }, "home/.local/bin/k"},
		{"link from the protected side", func(t *testing.T, e env) {
			keepMtime(t, filepath.Join(e.home, ".ssh/many"), func() {
				must(t, os.Link(filepath.Join(e.ws, "a/x.go"), filepath.Join(e.home, ".ssh/many/stolen")))
			})
		}, func(e env) string { return e.ws }, "ws/a/x.go"},
		{"link in a directory renamed into the workspace", func(t *testing.T, e env) {
			must(t, os.Mkdir(filepath.Join(e.out, "sub"), 0o755))
			must(t, os.Link(filepath.Join(e.home, ".ssh/sub/key"), filepath.Join(e.out, "sub/k")))
			keepMtime(t, filepath.Join(e.ws, "b"), func() {
				must(t, os.Rename(filepath.Join(e.out, "sub"), filepath.Join(e.ws, "b/sub")))
			})
		}, func(e env) string { return e.ws }, "ws/b/sub/k"},
		{"link in a workspace the recording start did not show", func(t *testing.T, e env) {
			keepMtime(t, filepath.Join(e.ws2, "a"), func() {
				must(t, os.Link(filepath.Join(e.home, ".ssh/many/f00007"), filepath.Join(e.ws2, "a/k")))
			})
		}, func(e env) string { return e.ws2 }, "ws2/a/k"},
	}
	envs := make([]env, len(cases))
	for i := range cases {
		base := tmp(t)
		e := env{base, filepath.Join(base, "home"), filepath.Join(base, "ws"), filepath.Join(base, "ws2"), filepath.Join(base, "out")}
		manyFiles(t, filepath.Join(e.home, ".ssh/many"), 300)
		manyFiles(t, filepath.Join(e.home, ".mozilla/p"), 20)
		mk(t, e.home, ".ssh/sub/key", ".cache/x", ".local/bin/tool")
		for _, w := range []string{e.ws, e.ws2} {
			mk(t, w, "a/x.go", "b/deep/y.go", "b/deep/z/w.go", "c/d/e/f.go")
		}
		must(t, os.Mkdir(e.out, 0o755))
		envs[i] = e
	}
	// No record is made of a directory changed within dircache.Margin.
	time.Sleep(dircache.Margin + 100*time.Millisecond)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, state := envs[i], tmp(t)
			run := func(ws string) (Plan, bool) {
				dc, err := dircache.Open(state)
				must(t, err)
				before := homeTreeWalks.Load()
				p, err := Expand(Input{Workspace: ws, Home: e.home, Writable: []string{ws}, Dirs: dc})
				must(t, err)
				must(t, dc.Save())
				return p, homeTreeWalks.Load() != before
			}
			// The first start reads and records; one in another workspace
			// need not (the record is of the protected side: every visible
			// directory it has not seen unchanged is looked at).
			if _, walked := run(e.ws2); !walked {
				t.Fatal("the first start did not read the protected directories")
			}
			run(e.ws)
			if _, walked := run(e.ws); walked {
				t.Fatal("a start with nothing changed read the protected directories again: the test proves nothing")
			}
			if _, walked := run(e.ws2); walked {
				t.Fatal("a start in the other workspace, unchanged, read the protected directories: the test proves nothing")
			}
			c.change(t, e)
			ws := c.ws(e)
			cached, _ := run(ws)
			fresh, err := Expand(Input{Workspace: ws, Home: e.home, Writable: []string{ws}})
			must(t, err)
			got, _ := json.MarshalIndent(cached, "", " ")
			want, _ := json.MarshalIndent(fresh, "", " ")
			if string(got) != string(want) {
				t.Errorf("the start after the change plans\n%s\nthe full check\n%s", got, want)
			}
			if !protected(e.base, cached.Masks, c.want) {
				t.Errorf("%s is not protected after the change: %v", c.want, summary(e.base, cached.Masks))
			}
		})
	}
}

// TestHomeLinksStateFailsClosed: a record that is not what a full check
// wrote (cut short, of another layout) is ignored: the start reads the
// protected directories.
func TestHomeLinksStateFailsClosed(t *testing.T) {
	base, state := tmp(t), tmp(t)
	home, ws := filepath.Join(base, "home"), filepath.Join(base, "ws")
	manyFiles(t, filepath.Join(home, ".ssh/many"), 10)
	mk(t, ws, "a/x.go")
	time.Sleep(dircache.Margin + 100*time.Millisecond)
	in := Input{Workspace: ws, Home: home, Writable: []string{ws}}
	for i, c := range []struct {
		spoil  func(b []byte) []byte
		walked bool
	}{
		{nil, true}, {nil, false},
		{func(b []byte) []byte { return b[:len(b)-1] }, true},
		{func(b []byte) []byte { return append(b, 0) }, true},
		{func(b []byte) []byte { return nil }, true},
	} {
		dc, err := dircache.Open(state)
		must(t, err)
		if c.spoil != nil {
			name := homeStateName(in)
			b := dc.State(name)
			if b == nil {
				t.Fatalf("step %d: no record to spoil", i)
			}
			dc.SetState(name, c.spoil(append([]byte(nil), b...)))
		}
		in.Dirs = dc
		before := homeTreeWalks.Load()
		_, err = Expand(in)
		must(t, err)
		must(t, dc.Save())
		if walked := homeTreeWalks.Load() != before; walked != c.walked {
			t.Errorf("step %d: protected directories read: %t, want %t", i, walked, c.walked)
		}
	}
}

// TestHomeLinksHitsAfterRecord: a directory package dircache finds
// unchanged vouches only for the time before its ctime. A link made after
// the record's check, in a directory a later start read (and dircache
// kept), must be found by a start that uses that record: here the record
// is put back after the start that read the directory removed it (as a
// failed write would leave it).
func TestHomeLinksHitsAfterRecord(t *testing.T) {
	base, state := tmp(t), tmp(t)
	home, ws := filepath.Join(base, "home"), filepath.Join(base, "ws")
	manyFiles(t, filepath.Join(home, ".ssh/many"), 300)
	mk(t, ws, "a/x.go", "b/y.go")
	time.Sleep(dircache.Margin + 100*time.Millisecond)
	in := Input{Workspace: ws, Home: home, Writable: []string{ws}}
	name := homeStateName(in)
	run := func(rec []byte) (Plan, []byte, bool) {
		dc, err := dircache.Open(state)
		must(t, err)
		if rec != nil {
			dc.SetState(name, rec)
		}
		in.Dirs = dc
		before := homeTreeWalks.Load()
		p, err := Expand(in)
		must(t, err)
		must(t, dc.Save())
		return p, dc.State(name), homeTreeWalks.Load() != before
	}
	_, rec, _ := run(nil)
	if _, _, walked := run(nil); walked || rec == nil {
		t.Fatal("the record is not used: the test proves nothing")
	}
	keepMtime(t, filepath.Join(ws, "a"), func() {
		must(t, os.Link(filepath.Join(home, ".ssh/many/f00200"), filepath.Join(ws, "a/notes.txt")))
	})
	time.Sleep(dircache.Margin + 100*time.Millisecond) // ws/a may be kept by dircache now
	run(nil)
	p, _, _ := run(rec)
	if !protected(ws, p.Masks, "a/notes.txt") {
		t.Errorf("a/notes.txt is not protected with the old record put back: %v", summary(ws, p.Masks))
	}
	// The directory was answered by dircache in that start, or the test
	// proves nothing.
	dc, err := dircache.Open(state)
	must(t, err)
	in.Dirs = dc
	_, err = Expand(in)
	must(t, err)
	if hits, _ := dc.Stats(); hits == 0 {
		t.Fatal("dircache answered for no directory: the test proves nothing")
	}
}

// TestHomeLinksPerDirectory: a start reads again only the protected
// directory that changed since the last; the others are answered by their
// records.
func TestHomeLinksPerDirectory(t *testing.T) {
	base, state := tmp(t), tmp(t)
	home, ws := filepath.Join(base, "home"), filepath.Join(base, "ws")
	manyFiles(t, filepath.Join(home, ".ssh/many"), 300)
	manyFiles(t, filepath.Join(home, ".mozilla/p"), 20)
	mk(t, home, ".local/bin/tool")
	mk(t, ws, "a/x.go")
	time.Sleep(dircache.Margin + 100*time.Millisecond)
	run := func() int64 {
		dc, err := dircache.Open(state)
		must(t, err)
		before := homeTreeWalks.Load()
		_, err = Expand(Input{Workspace: ws, Home: home, Writable: []string{ws}, Dirs: dc})
		must(t, err)
		must(t, dc.Save())
		return homeTreeWalks.Load() - before
	}
	if n := run(); n < 3 {
		t.Fatalf("the first start read %d protected directories, want 3 or more", n)
	}
	if n := run(); n != 0 {
		t.Fatalf("a start with nothing changed read %d protected directories", n)
	}
	mk(t, home, ".mozilla/p/new")
	if n := run(); n != 1 {
		t.Errorf("after a change in ~/.mozilla/ a start read %d protected directories, want 1", n)
	}
}
