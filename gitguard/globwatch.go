package gitguard

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Glob is a hook manager's glob pattern relative to an observed directory:
// elements separated by '/', each matched as filepath.Match does (lefthook
// 2.2 expands `extends:` with afero.Glob, which matches the same way).
type Glob struct {
	Pattern string `json:"pattern"`
	Why     string `json:"why"`
}

// GlobAt is a Glob and the directory its pattern starts from (its fixed
// part), read whole by the exit check.
type GlobAt struct {
	Dir string `json:"dir"`
	Glob
}

// maxGlobDirs bounds the directories one glob's start-time expansion reads
// (a `*/*/*.yml` over a large tree): the rest is left to the exit check.
const maxGlobDirs = 256

// nearRoots reports whether d is in a root or above one: only there can
// the agent add a match (the rest of the file system is not walked).
func nearRoots(roots []string, d string) bool {
	for _, r := range roots {
		if under(d, r) || under(r, d) {
			return true
		}
	}
	return false
}

func addGlobs(to, from []Glob) []Glob {
	for _, g := range from {
		if !slices.Contains(to, g) {
			to = append(to, g)
		}
	}
	return to
}

// watchGlob observes pattern (relative, '/'-separated) from dir, the fixed
// part of a hook manager's glob that no read-only mount covers (the work
// tree's top, or a directory above it): a file the agent makes later that
// matches is run by the host's hook manager as one it names. Directories
// that match the pattern's leading elements now are observed for the rest
// (a new b/hooks.yml for */hooks.yml in an existing b/); the matches and
// the links on the way that exist now are known (the user's own).
func (s *scanner) watchGlob(dir, pattern, why string) {
	if !nearRoots(s.roots, dir) {
		return // nothing the agent can add to
	}
	s.g.Globs = append(s.g.Globs, GlobAt{Dir: dir, Glob: Glob{Pattern: pattern, Why: why}})
	n := 0
	var walk func(dir, pattern string)
	walk = func(dir, pattern string) {
		if n++; n > maxGlobDirs {
			return
		}
		if s.writable(dir) {
			s.g.observe(dir, Role{Kind: RoleGlob, Globs: []Glob{{Pattern: pattern, Why: why}}})
		}
		first, rest, more := strings.Cut(pattern, "/")
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			if ok, _ := filepath.Match(first, e.Name()); !ok {
				continue
			}
			p := filepath.Join(dir, e.Name())
			if s.writable(p) {
				s.know(p)
			}
			if !more {
				continue
			}
			if e.Type()&os.ModeSymlink != 0 {
				// The user's link: its target's matches are the ones
				// lefthook reads, judged there (where the sentinel can
				// move them without following a link).
				t, err := filepath.EvalSymlinks(p)
				if err != nil {
					continue
				}
				p = t
			}
			if fi, err := os.Stat(p); err == nil && fi.IsDir() && nearRoots(s.roots, p) {
				walk(p, rest)
			}
		}
	}
	walk(dir, pattern)
}

// globs judges the entries of observed directory dir (names: those that
// changed; nil: all) against the globs observed there: a new match leaves
// the tree, and so does a new link that a match's way passes (the agent's
// link to a directory of its own); a directory matching a leading element
// is judged for the rest now and observed from now on (at exit, read
// whole).
func (j *judge) globs(dir string, gs []Glob, names []string) {
	names, ok := listed(dir, names)
	if !ok {
		return
	}
	for _, gl := range gs {
		first, rest, more := strings.Cut(gl.Pattern, "/")
		for _, n := range names {
			if ok, _ := filepath.Match(first, n); !ok {
				continue
			}
			p := joinName(dir, n)
			fi, err := os.Lstat(p)
			if err != nil {
				continue
			}
			known := j.g.known(p, fi)
			switch {
			case !more && fi.IsDir():
				// Nothing lefthook can read as a config.
			case !more && !known:
				// Why: the host's lefthook merges every match into its
				// config and runs the commands it names (lefthook 2.2.1).
				j.add(Finding{Path: p, Rule: "git: hook manager glob",
					Reason: "it matches a glob: " + gl.Why + "; `allow-git-config` lets the agent add it"})
			case !more:
			case fi.Mode()&os.ModeSymlink != 0 && !known:
				j.add(Finding{Path: p, Rule: "git: hook manager glob",
					Reason: "a link on the way to a glob's matches: " + gl.Why + "; `allow-git-config` lets the agent add it"})
			default:
				d := p
				if fi.Mode()&os.ModeSymlink != 0 {
					if d, err = filepath.EvalSymlinks(p); err != nil {
						continue
					}
				}
				if st, err := os.Stat(d); err != nil || !st.IsDir() || !nearRoots(j.g.Roots, d) {
					continue
				}
				sub := []Glob{{Pattern: rest, Why: gl.Why}}
				if !j.final && j.g.inRoots(d) {
					j.observe(d, Role{Kind: RoleGlob, Globs: sub})
				}
				// Now, not at its first event: a directory moved in
				// holds its matches already.
				j.globs(d, sub, nil)
			}
		}
	}
}
