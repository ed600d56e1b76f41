package sentinel

import (
	"os"
	"path/filepath"
	"slices"
)

// checkGlob moves every name in g.Dir that matches g's pattern and was not
// there at start; names limits the look to those (nil: the whole
// directory). A g.Dir missing, or with a symlink on the way, is watched
// through its nearest existing ancestor (a directory made there in the run
// is listed whole when it appears). s.mu is held.
func (s *Sentinel) checkGlob(i int, names []string, phase string) {
	g := &s.globs[i]
	for round := 0; ; round++ {
		anchor, hit, link := s.locate(g.Dir)
		if s.q.rootOf(g.Dir) == g.Dir {
			hit, link = g.Dir, false // a writable root itself (-w ~/.codex): locate walks below roots only
		}
		if hit == g.Dir && !link {
			break
		}
		// Not there (or a symlink in its way, which the host's Codex
		// would follow: the named paths below it are absent paths and
		// move that link). Watch the way for it.
		if anchor == "" || round == 64 { // each round goes one component deeper at most
			return
		}
		// Watched before locate looked (watches change only here and in
		// checkAbsent, under s.mu): anything made since it looked is an
		// event of that watch.
		watched := s.byPath[anchor] != 0
		if afterLocate != nil {
			afterLocate(g.Dir)
		}
		if !s.watch(anchor) {
			return
		}
		s.globAnchor[i] = anchor
		if watched || link {
			return
		}
		// A directory may have been made between locate and the watch
		// (mkdir -p a/b, then a file there): no event of this watch names
		// it, nor will one name what is made inside it. Look again.
		if a2, h2, _ := s.locate(g.Dir); h2 == "" && a2 == anchor {
			return
		}
	}
	if fi, err := os.Lstat(g.Dir); err != nil || !fi.IsDir() {
		return
	}
	if s.globAnchor[i] != g.Dir {
		// Newly watched: what appeared before the watch is listed below.
		names = nil
	}
	if s.watch(g.Dir) {
		s.globAnchor[i] = g.Dir
	}
	if names == nil {
		ents, _ := os.ReadDir(g.Dir)
		for _, e := range ents {
			names = append(names, e.Name())
		}
	}
	for _, n := range names {
		if n == "" || !g.matches(n) || slices.Contains(g.Had, n) {
			continue
		}
		p := filepath.Join(g.Dir, n)
		if !exists(p) {
			continue
		}
		why := g.Why
		if why == "" {
			why = "a new name matching a protected pattern (" + g.Pattern + ") that did not exist at start"
		}
		s.move(Item{Path: p, Rule: g.Rule, Reason: why}, phase)
	}
}
