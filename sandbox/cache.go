package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/statedir"
)

// cacheMounts turns the cache option into binds: a directory of jail's own
// (statedir.CacheFrom, NAME/home/... or NAME/root/...) mounted writable at
// the path the tool expects, or with HostCaches the host's own directory.
// The directories are created unless dryRun. binds are the workspace and
// the read/write paths: a cache that is one of them or lies in a read-only
// one is refused; one inside a writable tree covers the host's directory
// there.
func cacheMounts(p *policy.Policy, env []string, home string, binds []ns.Mount) ([]ns.Mount, error) {
	if len(p.Cache) == 0 {
		return nil, nil
	}
	getenv := func(k string) string { return lookupEnv(env, k) }
	base, err := statedir.CacheFrom(getenv)
	if err != nil {
		return nil, &policy.FieldError{Key: "cache", Value: p.Cache[0], Reason: err.Error()}
	}
	var out []ns.Mount
	seen := map[string]bool{}
	// A profile's caches mostly share their parents (~/.claude's fifteen,
	// and their directories of jail's own): each parent is resolved once,
	// not once a cache (fifteen walks of eight elements each, an lstat
	// every element, were a tenth of the claude profile's plan).
	resolved := map[string]string{}
	resolveDir := func(dir string) string {
		r, ok := resolved[dir]
		if !ok {
			r = resolveExisting(dir)
			resolved[dir] = r
		}
		return r
	}
	for _, c := range p.Cache {
		name, path, err := policy.ParseCache(c)
		if err != nil {
			return nil, err
		}
		target, ok := cacheTarget(path, home)
		if !ok {
			return nil, &policy.FieldError{Key: "cache", Value: c, Reason: "no home directory ($HOME) to put it in"}
		}
		if seen[target] {
			continue // the first profile's cache wins
		}
		seen[target] = true
		// The cache's name (its directory of jail's own) comes from the
		// path as the profile gives it; where it is mounted, from where
		// the host's tool reaches it. Why: with a symlink on the way into
		// a writable tree (~/.claude -> dotfiles/claude, the run in
		// dotfiles), a cache at ~/.claude/projects covered a path of the
		// sandbox's home only, and the host's directory the link leads to
		// stayed writable through the tree: the agent wrote the host's
		// transcripts and backups (a host /rewind writes any file,
		// review18b). Mounted where the link leads, it covers that
		// directory, and the link inside leads to the cache.
		at := target
		// The directories above it only: a cache that is itself a link is
		// refused below, never followed.
		if r := filepath.Join(resolveDir(filepath.Dir(target)), filepath.Base(target)); r != target && inWritable(r, binds) {
			at = r
		}
		for _, b := range binds {
			switch {
			case at == b.Path:
				return nil, &policy.FieldError{Key: "cache", Value: c, Reason: fmt.Sprintf(
					"it is %s, which is already visible (%s): drop the cache, or that path", b.Path, b.Why)}
			case !strings.HasPrefix(at, b.Path+"/"):
			case b.Kind != ns.KindBind:
				return nil, &policy.FieldError{Key: "cache", Value: c, Reason: fmt.Sprintf(
					"it lies in %s, which is read-only (%s): drop the cache, or that path", b.Path, b.Why)}
			default:
				// Inside a writable tree (~/.codex/packages in -w ~/.codex):
				// the cache covers the host's directory there, so what the
				// agent installs never reaches it. The mount point is made
				// on the host when missing; one the agent turned into a
				// symlink (in a run without this cache) is refused rather
				// than followed. BuildPlan pins the directories above it.
				if fi, err := os.Lstat(at); err == nil && !fi.IsDir() {
					return nil, &policy.FieldError{Key: "cache", Value: c, Reason: fmt.Sprintf(
						"%s is not a directory (a symlink or a file): remove it, or drop the cache", at)}
				}
			}
		}
		var src string
		switch {
		case p.HostCaches:
			// The user's explicit choice: the host's own cache, writable.
			src = at
		case home != "" && strings.HasPrefix(target, home+"/"):
			src = filepath.Join(base, name, "home", strings.TrimPrefix(target, home+"/"))
		default:
			src = filepath.Join(base, name, "root", strings.TrimPrefix(target, "/"))
		}
		if !p.DryRun {
			// 0700: the cache holds what the agent built and fetched.
			if err := os.MkdirAll(src, 0o700); err != nil {
				return nil, &policy.FieldError{Key: "cache", Value: c, Reason: fmt.Sprintf("create %s: %v", src, err)}
			}
		}
		if r, err := evalUnder(src, resolveDir); err == nil {
			src = r
		}
		why := "cache " + name + " (jail's own, " + src + ")"
		if p.HostCaches {
			why = "cache " + name + " (the host's own: host-caches)"
		}
		m := ns.Mount{Kind: ns.KindBind, Path: at, Dir: true, FD: -1, Why: why}
		if src != at {
			m.Source = src
		}
		out = append(out, m)
	}
	return out, nil
}

// cacheTarget is where a cache's path is mounted: ~/ in home; false for
// ~/ without a home.
func cacheTarget(path, home string) (string, bool) {
	if strings.HasPrefix(path, "~/") {
		if home == "" {
			return "", false
		}
		return filepath.Join(home, path[2:]), true
	}
	return filepath.Clean(path), true
}

// evalUnder is filepath.EvalSymlinks(p) with p's directory resolved by
// resolveDir (resolveExisting's answer: the same as EvalSymlinks' for a
// directory that exists): the directory resolved, then its last element
// (a link there is resolved whole, by EvalSymlinks, from the start).
func evalUnder(p string, resolveDir func(string) string) (string, error) {
	dir, base := filepath.Split(p)
	if base == "" || base == "." || base == ".." {
		return filepath.EvalSymlinks(p)
	}
	joined := filepath.Join(resolveDir(filepath.Clean(dir)), base)
	fi, err := os.Lstat(joined)
	if err != nil || fi.Mode()&os.ModeSymlink != 0 {
		return filepath.EvalSymlinks(p)
	}
	return joined, nil
}

// inWritable says whether p lies inside (below) a writable bind of binds.
func inWritable(p string, binds []ns.Mount) bool {
	for _, b := range binds {
		if b.Kind == ns.KindBind && strings.HasPrefix(p, b.Path+"/") {
			return true
		}
	}
	return false
}
