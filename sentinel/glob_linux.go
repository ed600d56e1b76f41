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
	anchor, hit, link := s.locate(g.Dir)
	if s.q.rootOf(g.Dir) == g.Dir {
		hit, link = g.Dir, false // a writable root itself (-w ~/.codex): locate walks below roots only
	}
	if hit != g.Dir || link {
		// Not there (or a symlink in its way, which the host's Codex
		// would follow: the named paths below it are absent paths and
		// move that link). Watch the way for it.
		if anchor != "" && s.watch(anchor) {
			s.globAnchor[i] = anchor
		}
		return
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
