package dircache

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// links is one run of Links: open, list dir's symlinks, save; it returns
// "name -> text" sorted and whether the cache answered.
func links(t *testing.T, state, dir string, ahead time.Duration) ([]string, bool) {
	t.Helper()
	c := open(t, state, ahead)
	var got []string
	if err := c.Links("v", dir, func(n, l string) { got = append(got, n+" -> "+l) }); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	hits, _ := c.Stats()
	return got, hits == 1
}

func mustLink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// retarget points the symlink p at target the way a package manager does
// (a new link renamed over it: the directory's entry changes, the name
// does not) and puts the directory's mtime and atime back, as `touch -d`
// could: a cache keyed by the mtime, or by the names alone, would answer
// with the old text.
func retarget(t *testing.T, p, target string) {
	t.Helper()
	dir := filepath.Dir(p)
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	tmp := p + ".new"
	mustLink(t, target, tmp)
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(dir, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if fi2, _ := os.Stat(dir); !fi2.ModTime().Equal(fi.ModTime()) {
		t.Fatalf("the mtime was not set back (the test is broken): %v", fi2.ModTime())
	}
}

// TestLinksSeesRetarget is the cache's security claim for symlinks: a
// symlink retargeted between two runs (in a PATH directory, or in
// /etc/alternatives) is seen with its new text by the second run, even
// with the directory's mtime put back. Only symlinks come back, with their
// texts, from a read and from the cache alike.
func TestLinksSeesRetarget(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	mustLink(t, "/opt/a/bin/tool", filepath.Join(dir, "tool"))
	mustLink(t, "python3.12", filepath.Join(dir, "python3"))
	mustWrite(t, filepath.Join(dir, "file"))
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	want := "python3 -> python3.12 tool -> /opt/a/bin/tool"
	got, hit := links(t, state, dir, time.Hour)
	if hit || strings.Join(got, " ") != want {
		t.Fatalf("first run: hit %v, %q; want a read with %q", hit, got, want)
	}
	got, hit = links(t, state, dir, time.Hour)
	if !hit || strings.Join(got, " ") != want {
		t.Fatalf("second run: hit %v, %q; want a hit with %q (the cache is not in use: the test below would prove nothing)", hit, got, want)
	}
	retarget(t, filepath.Join(dir, "tool"), "/srv/secret/bin/tool")
	got, hit = links(t, state, dir, time.Hour)
	if want := "python3 -> python3.12 tool -> /srv/secret/bin/tool"; hit || strings.Join(got, " ") != want {
		t.Fatalf("after the retarget: hit %v, %q; want a read with %q", hit, got, want)
	}
}

// TestLinksRecentNotKept: a directory changed within Margin of the read is
// not remembered: a second retarget within the same clock tick could leave
// its ctime as it was.
func TestLinksRecentNotKept(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	mustLink(t, "/opt/a", filepath.Join(dir, "x"))
	for i := 0; i < 2; i++ {
		if _, hit := links(t, state, dir, 0); hit {
			t.Fatal("a directory changed just now was answered from the cache")
		}
	}
}

// TestReadlinkThroughCache: Readlink answers as os.Readlink does, before and
// after a retarget (mtime put back): the text of a symlink, an error for a
// file, a directory or a missing name, and os.Readlink's answer for a path
// whose directory cannot be listed.
func TestReadlinkThroughCache(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	mustLink(t, "/etc/alternatives/x", filepath.Join(dir, "l"))
	mustWrite(t, filepath.Join(dir, "f"))
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	check := func(run int) {
		t.Helper()
		c := open(t, state, time.Hour)
		for _, n := range []string{"l", "f", "d", "missing", "d/nope"} {
			p := filepath.Join(dir, n)
			got, err := c.Readlink("v", p)
			want, werr := os.Readlink(p)
			if got != want || (err == nil) != (werr == nil) {
				t.Errorf("run %d: Readlink(%s) = %q, %v; os.Readlink: %q, %v", run, n, got, err, want, werr)
			}
		}
		if err := c.Save(); err != nil {
			t.Fatal(err)
		}
	}
	check(1)
	check(2)
	retarget(t, filepath.Join(dir, "l"), "/opt/other")
	check(3)
	var nilc *Cache
	if got, err := nilc.Readlink("v", filepath.Join(dir, "l")); err != nil || got != "/opt/other" {
		t.Errorf("nil cache: %q, %v", got, err)
	}
	if _, err := nilc.Readlink("v", filepath.Join(dir, "f")); err == nil || !errors.Is(err, os.ErrInvalid) && !strings.Contains(err.Error(), "invalid") {
		t.Errorf("nil cache, a file: %v", err)
	}
}

// TestLinksViewsApart: a links record does not answer ReadDir (its entries
// are the symlinks only) and a ReadDir record does not answer Links (it has
// no texts), even with the same view name.
func TestLinksViewsApart(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	mustLink(t, "/opt/a", filepath.Join(dir, "x"))
	mustWrite(t, filepath.Join(dir, "f"))
	c := open(t, state, time.Hour)
	c.ReadDir("v", dir, all)
	c.Save()
	got, hit := links(t, state, dir, time.Hour)
	if hit || strings.Join(got, " ") != "x -> /opt/a" {
		t.Fatalf("Links after ReadDir's record: hit %v, %q", hit, got)
	}
	c = open(t, state, time.Hour)
	ents, total, _, err := c.ReadDir("v", dir, all)
	if err != nil || total != 2 || len(ents) != 2 {
		t.Fatalf("ReadDir after Links' record: %v total %d err %v", names(ents), total, err)
	}
}

// TestLinksPassEndsAtSave: within a pass a directory's symlinks are
// listed once (however many are asked for); after Save, the next pass of
// the same Cache checks the directory again and sees a retarget.
func TestLinksPassEndsAtSave(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	mustLink(t, "/opt/a", filepath.Join(dir, "x"))
	mustLink(t, "/opt/b", filepath.Join(dir, "y"))
	links(t, state, dir, time.Hour) // kept
	c := open(t, state, time.Hour)
	for _, n := range []string{"x", "y", "x"} {
		if _, err := c.Readlink("v", filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	if hits, reads := c.Stats(); hits != 1 || reads != 0 {
		t.Fatalf("three links of one directory: %d hits and %d reads, want the directory once from the cache", hits, reads)
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	retarget(t, filepath.Join(dir, "x"), "/srv/other")
	if got, err := c.Readlink("v", filepath.Join(dir, "x")); err != nil || got != "/srv/other" {
		t.Fatalf("the next pass of the same cache: %q, %v; want /srv/other", got, err)
	}
}

// TestReadlinkUncacheableReadsOne: where a directory's record could not be
// kept (changed within Margin, as on a file system whose ctimes are not
// trusted), Readlink reads the one link (os.Readlink) instead of listing
// the whole directory (/etc/alternatives holds hundreds) for nothing, and
// answers as os.Readlink does.
func TestReadlinkUncacheableReadsOne(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	mustLink(t, "/etc/alternatives/x", filepath.Join(dir, "l"))
	mustLink(t, "/opt/y", filepath.Join(dir, "m"))
	c := open(t, state, 0) // the directory was changed just now
	for _, n := range []string{"l", "m", "l", "missing"} {
		p := filepath.Join(dir, n)
		got, err := c.Readlink("v", p)
		want, werr := os.Readlink(p)
		if got != want || (err == nil) != (werr == nil) {
			t.Errorf("Readlink(%s) = %q, %v; os.Readlink: %q, %v", n, got, err, want, werr)
		}
	}
	if hits, reads := c.Stats(); hits != 0 || reads != 0 {
		t.Errorf("%d hits, %d directory reads; want none (each link read alone)", hits, reads)
	}
}
