package agentcfg

import (
	"path/filepath"
	"sort"
	"strings"
)

// Root is one path the sandbox can write.
type Root struct {
	Path string
	Dir  bool
}

// Target is one guarded file on the host.
type Target struct {
	File File `json:"file"`
	// Path is absolute and was symlink-free when the plan was made.
	Path string `json:"path"`
	// Root is the writable root that holds Path (Path itself when InPlace).
	Root string `json:"root"`
	// InPlace: Path is itself a bind mount in the sandbox (-w FILE), so the
	// agent cannot rename over it and jail must not either (the sandbox
	// would keep the old inode): it is rewritten in place.
	InPlace bool `json:"in_place,omitempty"`
}

// Targets lists the files to guard: Home-scoped files of the table that lie
// in a writable root, and Project-scoped ones in every writable directory.
// Paths are absolute and clean; home may be empty. The result is sorted and
// has one target per path.
func Targets(home string, roots []Root, files []File) []Target {
	byPath := map[string]Target{}
	resolved := map[string]string{} // a directory's resolved path ("": none)
	// add guards p if a writable root holds it; false if none does.
	add := func(f File, p string) bool {
		if _, dup := byPath[p]; dup {
			return true
		}
		best := Root{}
		for _, r := range roots {
			if (p == r.Path || strings.HasPrefix(p, r.Path+"/")) && len(r.Path) > len(best.Path) {
				best = r
			}
		}
		switch {
		case best.Path == "":
			return false // not writable inside: nothing to guard
		case best.Path == p && !best.Dir:
			byPath[p] = Target{File: f, Path: p, Root: p, InPlace: true}
		case best.Path == p:
			// a directory where the file should be
		default:
			byPath[p] = Target{File: f, Path: p, Root: best.Path}
		}
		return true
	}
	for _, f := range files {
		switch f.Scope {
		case Home:
			if home != "" {
				p := filepath.Join(home, f.Path)
				if !add(f, p) {
					// Why: roots are resolved paths. With ~/.claude a
					// symlink to ~/dotfiles/claude, `-w ~/.claude` is the
					// root ~/dotfiles/claude, which holds no path spelled
					// ~/.claude/...: the host's agent reads its settings
					// through the symlink, from that root, and the agent's
					// hooks written there stayed after the run (review17d).
					// The file is guarded where it lies.
					if rp, ok := resolvedDir(p, resolved); ok {
						add(f, rp)
					}
				}
			}
		case Project:
			for _, r := range roots {
				// A hidden directory (an agent's own state, ~/.claude,
				// ~/.codex, a cache) is not a project.
				if r.Dir && !strings.HasPrefix(filepath.Base(r.Path), ".") {
					add(f, filepath.Join(r.Path, f.Path))
				}
			}
		}
	}
	out := make([]Target, 0, len(byPath))
	for _, t := range byPath {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// resolvedDir is p with its directory's symlinks resolved (the file's own
// name kept: a symlink there is guarded as one), when that differs from p.
// seen caches each directory's resolution: the table's files share a few
// directories (~/.claude, ~/.codex), and this runs at every start.
func resolvedDir(p string, seen map[string]string) (string, bool) {
	d := filepath.Dir(p)
	dir, ok := seen[d]
	if !ok {
		dir, _ = filepath.EvalSymlinks(d) // "" if it fails: absent, nothing to guard
		seen[d] = dir
	}
	if dir == "" {
		return "", false
	}
	rp := filepath.Join(dir, filepath.Base(p))
	return rp, rp != p
}
