package sandbox

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/landlock"
	"github.com/jail-sandbox/jail/ns"
)

// TestHistoryPacksDegraded: without mounts, git's packs in a writable tree
// are said once, as a count, not path by path (a repository has many); a
// git control file is still named.
func TestHistoryPacksDegraded(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(d, "ws")
	pack := filepath.Join(ws, ".git/objects/pack")
	mounts := []ns.Mount{
		{Kind: ns.KindBind, Path: ws, Dir: true},
		{Kind: ns.KindReadOnly, Path: filepath.Join(ws, ".git/config"), Why: "git: config"},
		{Kind: ns.KindReadOnly, Path: filepath.Join(pack, "pack-a.idx"), Why: whyHistory},
		{Kind: ns.KindReadOnly, Path: filepath.Join(pack, "pack-a.pack"), Why: whyHistory},
	}
	_, lost, err := degradedRules(mounts, landlock.Rules{}, filepath.Join(d, "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(ws, ".git/config"), "(git history: 2 pack files)"}
	if !slices.Equal(lost, want) {
		t.Errorf("lost %q, want %q", lost, want)
	}
}

// TestHistoryPacksNotWatched: a pack's read-only bind is not among the
// mounts whose fall is said (a gc on the host deletes packs; the fallen
// bind hands the agent nothing), a git control file's is.
func TestHistoryPacksNotWatched(t *testing.T) {
	ws := "/w"
	pl := &Plan{Writable: []string{ws}, Mounts: []ns.Mount{
		{Kind: ns.KindReadOnly, Path: ws + "/.git/config", Why: "git: config"},
		{Kind: ns.KindReadOnly, Path: ws + "/.git/objects/pack/pack-a.pack", Why: whyHistory},
	}}
	var got []string
	for _, p := range watchedMasks(pl) {
		got = append(got, p.Path)
	}
	if strings.Join(got, " ") != ws+"/.git/config" {
		t.Errorf("watched %q", got)
	}
}
