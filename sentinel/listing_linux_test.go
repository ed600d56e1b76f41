package sentinel

import (
	"os"
	"path/filepath"
	"testing"
)

// The look for many absent paths under one directory lists it once
// (listNames) instead of an lstat per path. At start a listing answers
// "absent" only for a directory watched before it was listed: an absent
// path made right after the listing, before its own look, is an event of
// that watch and is found.
func TestAbsentCreatedAfterListing(t *testing.T) {
	h := newHarness(t)
	os.MkdirAll(filepath.Join(h.root, "sub"), 0o755)
	// Enough absent paths under the root and under sub for listings.
	var abs []Absent
	for _, n := range []string{".env", ".envrc", ".npmrc", ".pypirc", "sub/.env", "sub/.envrc", "sub/.npmrc", ".netrc", ".zshrc", "sub/.mise.toml"} {
		abs = append(abs, Absent{Path: filepath.Join(h.root, n), Rule: "test"})
	}
	made := map[string]bool{}
	afterList = func(dir string) {
		// The last absent path below the listed directory appears now.
		for i := len(abs) - 1; i >= 0; i-- {
			if filepath.Dir(abs[i].Path) == dir {
				if !made[abs[i].Path] {
					made[abs[i].Path] = true
					mkfile(t, abs[i].Path, "evil\n")
				}
				return
			}
		}
	}
	defer func() { afterList = nil }()
	s := h.start(t, Config{Absent: abs})
	if len(made) == 0 {
		t.Fatal("no listing was taken: the test proves nothing")
	}
	for p := range made {
		gone(t, p)
	}
	s.Close()
}

// A listing belongs to one look: the exit check lists afresh, and finds a
// path made after the start's listing while nothing watched (the watch was
// stopped).
func TestListingNotKeptAcrossLooks(t *testing.T) {
	h := newHarness(t)
	var abs []Absent
	for _, n := range []string{".env", ".envrc", ".npmrc", ".pypirc", ".netrc", ".zshrc", ".bashrc", ".profile"} {
		abs = append(abs, Absent{Path: filepath.Join(h.root, n), Rule: "test"})
	}
	s := h.start(t, Config{Absent: abs})
	s.Stop()
	target := abs[3].Path
	mkfile(t, target, "evil\n")
	s.CheckAbsent("exit")
	if _, err := os.Lstat(target); err == nil {
		t.Errorf("%s made after the start's look is still there after the exit check", target)
	}
	s.Close()
}
