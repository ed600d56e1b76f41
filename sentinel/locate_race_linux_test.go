package sentinel

import (
	"os"
	"path/filepath"
	"testing"
)

// An absent path created after the sentinel looked for it but before its
// anchor is watched is found all the same: at start, for an anchor not
// watched yet (the look after the watch finds it) and for one that is
// (the watch's event finds it). Each starts with a fresh sentinel and
// creates the path from the hook between the look and the watch.
func TestAbsentCreatedBeforeWatch(t *testing.T) {
	for _, c := range []struct {
		name   string
		absent []string // the last is created
	}{
		{"anchor not watched yet", []string{".envrc"}},
		{"anchor watched already", []string{".env", ".envrc"}},
		{"deeper anchor not watched yet", []string{".env", "sub/.envrc"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			os.MkdirAll(filepath.Join(h.root, "sub"), 0o755)
			var abs []Absent
			for _, a := range c.absent {
				abs = append(abs, Absent{Path: filepath.Join(h.root, a), Rule: "test"})
			}
			target := abs[len(abs)-1].Path
			made := false
			afterLocate = func(p string) {
				if p == target && !made {
					made = true
					mkfile(t, p, "evil\n")
				}
			}
			defer func() { afterLocate = nil }()
			s := h.start(t, Config{Absent: abs})
			if !made {
				t.Fatal("the hook never ran: the test proves nothing")
			}
			gone(t, target)
			s.Finish()
		})
	}
}
