package fsrules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/dircache"
)

// planLines renders what a plan decides (masks, absent paths, notes) as
// lines relative to base, for comparing two plans.
func planLines(base string, p Plan) []string {
	out := summary(base, p.Masks)
	for _, a := range p.Absent {
		out = append(out, "absent "+strings.TrimPrefix(a.Path, base)+" "+strings.ReplaceAll(a.Rule, base, ""))
	}
	for _, n := range p.Notes {
		out = append(out, "note "+strings.ReplaceAll(n, base, ""))
	}
	return out
}

// TestHomeNamesSameAsWithout: the home loops' names, built once a plan
// and left out from the home's own listing (homeNames), give the plan
// the loops gave asking surelyMissing (and without it, lstat) for every
// name: for homes with dotfile symlinks into the workspace, a protected
// file hard-linked into it, a writable root inside the home (another
// base below it), the home itself writable, a home that is a symlink
// and one that does not exist.
func TestHomeNamesSameAsWithout(t *testing.T) {
	cases := []struct {
		name string
		make func(t *testing.T, base, ws, home string) Input
		want []string // lines the plan must have (the case tests something)
	}{
		{"dotfile symlinks and a hard link", func(t *testing.T, base, ws, home string) Input {
			mk(t, ws, "dotfiles/bashrc", "dotfiles/config/git/config", "notes.txt", "plain")
			mk(t, home, ".profile", ".local/share/x", ".ssh/config", ".config/other/x")
			must(t, os.Symlink(filepath.Join(ws, "dotfiles/bashrc"), filepath.Join(home, ".bashrc")))
			must(t, os.Symlink(filepath.Join(ws, "dotfiles/config/git"), filepath.Join(home, ".config/git")))
			must(t, os.Link(filepath.Join(home, ".profile"), filepath.Join(ws, "notes.txt.2")))
			return Input{Workspace: ws, Home: home, Writable: []string{ws}}
		}, []string{"read-only ws/dotfiles/bashrc", "read-only ws/dotfiles/config/git/", "read-only ws/notes.txt.2"}},
		{"writable root inside the home", func(t *testing.T, base, ws, home string) Input {
			mk(t, home, ".config/app/settings.json", ".config/gh/", ".bashrc", ".local/bin/tool")
			return Input{Workspace: ws, Home: home, Writable: []string{ws, filepath.Join(home, ".config/app")}}
		}, nil},
		{"workspace inside the home", func(t *testing.T, base, ws, home string) Input {
			mk(t, home, "proj/.env", "proj/.bashrc", ".bashrc", ".ssh/id_ed25519")
			w := filepath.Join(home, "proj")
			return Input{Workspace: w, Home: home, Writable: []string{w}}
		}, nil},
		{"home writable", func(t *testing.T, base, ws, home string) Input {
			mk(t, home, ".bashrc", ".config/fish/config.fish", ".local/share/x")
			return Input{Workspace: ws, Home: home, Writable: []string{ws, home}}
		}, nil},
		{"two homes, one a symlink, one missing", func(t *testing.T, base, ws, home string) Input {
			mk(t, home, ".bashrc", ".docker/config.json")
			link := filepath.Join(base, "homelink")
			must(t, os.Symlink(home, link))
			return Input{Workspace: ws, Home: link, Homes: []string{filepath.Join(base, "nohome"), home}, Writable: []string{ws}}
		}, nil},
		{"home a file", func(t *testing.T, base, ws, home string) Input {
			must(t, os.WriteFile(filepath.Join(base, "homefile"), []byte("x"), 0o644))
			return Input{Workspace: ws, Home: filepath.Join(base, "homefile"), Homes: []string{home}, Writable: []string{ws}}
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := tmp(t)
			ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
			mk(t, ws, "./")
			mk(t, home, "./")
			in := c.make(t, base, ws, home)
			got, err := Expand(in)
			must(t, err)
			noShortcut = true
			want, err := Expand(in)
			noShortcut = false
			must(t, err)
			eq(t, "plan", planLines(base, got), planLines(base, want))
			for _, w := range c.want {
				if !contains(planLines(base, got), w) {
					t.Errorf("plan lacks %q: %q", w, planLines(base, got))
				}
			}
		})
	}
}

// TestHomeChangeSeenNextPlan: what the home loops find is the home as it
// is at each plan, with the directory cache kept across the starts: a
// dotfile symlink into the workspace made after a start (a new name at the
// home's top), a new protected top-level directory (~/.ssh/) with a key
// hard-linked into the workspace are each seen by the next plan. (The
// home loops keep nothing between plans; the record they read across
// starts, checkHomeTrees', has its own tests of changed mounts and
// directories: homelinks_cache_linux_test.go.) The home's listings
// (surelyMissing's) are the directory cache's from the second start on:
// each change is made with the directory's mtime put back, as an agent
// would, and must be seen all the same (the ctime, which no one sets).
func TestHomeChangeSeenNextPlan(t *testing.T) {
	base, state := tmp(t), tmp(t)
	ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
	mk(t, ws, "dotfiles/bashrc", "plain")
	mk(t, home, ".profile", ".config/other/x")
	time.Sleep(dircache.Margin + 100*time.Millisecond)
	in := Input{Workspace: ws, Home: home, Writable: []string{ws}}
	plan := func() []string {
		t.Helper()
		dc, err := dircache.Open(state)
		must(t, err)
		in.Dirs = dc
		p, err := Expand(in)
		must(t, err)
		must(t, dc.Save())
		return summary(ws, p.Masks)
	}
	for i := range 2 { // the second start answered from the cache
		if ms := plan(); contains(ms, "read-only dotfiles/bashrc") {
			t.Fatalf("start %d: dotfiles/bashrc protected before ~/.bashrc points at it: %q", i, ms)
		}
	}
	// The next start can answer the home's listing from the cache, or the
	// changes below prove nothing about it.
	dc, err := dircache.Open(state)
	must(t, err)
	if n := dc.Records(namesView + " " + creds()); n == 0 {
		t.Fatalf("no listing of the home kept in the directory cache (view %q)", namesView)
	}
	keepMtime(t, home, func() {
		must(t, os.Symlink(filepath.Join(ws, "dotfiles/bashrc"), filepath.Join(home, ".bashrc")))
	})
	if ms := plan(); !contains(ms, "read-only dotfiles/bashrc") {
		t.Errorf("new symlink ~/.bashrc -> ws/dotfiles/bashrc not seen: masks %q", ms)
	}
	time.Sleep(dircache.Margin + 100*time.Millisecond) // the home's listing kept again
	plan()
	keepMtime(t, home, func() { mk(t, home, ".ssh/id_ed25519") })
	must(t, os.Link(filepath.Join(home, ".ssh/id_ed25519"), filepath.Join(ws, "key.txt")))
	if ms := plan(); !contains(ms, "hide key.txt") {
		t.Errorf("new ~/.ssh/ with its key linked to ws/key.txt not seen: masks %q", ms)
	}
}
