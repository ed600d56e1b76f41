// Package cachehint says when a toolchain's build cache inside the sandbox
// ends with the run, so that every run compiles again, and names the
// profile that keeps one. It decides from the sandbox's places (its mounts
// as the plan made them), its environment and what the run exec'd; it
// reads no file and imports no other jail package.
//
// Go is the tool here. Without a cache that lasts, `jail -- go test ./...`
// builds, at every run, every package it needs, the standard library's
// included (here, for the test of a package with one test: 125 packages,
// 23 s of wall time and 45 s of CPU, against half a second with the go
// profile's cache once warm), and nothing fails to say so: the tests pass,
// slowly, run after run. The caches of the other toolchains hold downloads
// (npm, pip, cargo's registry), which need the network, whose refusal
// names the flag already.
package cachehint

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// Place is one mount of the sandbox, as the hint needs it.
type Place struct {
	Path string
	// Writable: the sandbox can write there.
	Writable bool
	// Lasts: a host directory (the workspace, a write path, a cache of
	// jail's own), which outlives the run; an empty tmpfs does not.
	Lasts bool
}

// GoBuildCache is where the go command keeps its build cache in the
// environment env (KEY=VALUE): GOCACHE, else the rule of Go's
// os.UserCacheDir ($XDG_CACHE_HOME, else $HOME/.cache) with go-build
// below. ok is false where go keeps none (GOCACHE=off) or refuses to run
// with the one it would use (a relative GOCACHE, no HOME): nothing to say
// then.
func GoBuildCache(env []string) (dir string, ok bool) {
	if c, set := lookup(env, "GOCACHE"); set && c != "" {
		if c == "off" || !filepath.IsAbs(c) {
			return "", false
		}
		return filepath.Clean(c), true
	}
	if x, _ := lookup(env, "XDG_CACHE_HOME"); x != "" {
		if !filepath.IsAbs(x) {
			return "", false
		}
		return filepath.Join(x, "go-build"), true
	}
	if h, _ := lookup(env, "HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".cache", "go-build"), true
	}
	return "", false
}

// IsGoCompile reports whether an exec's program is the Go toolchain's
// compiler ($GOROOT/pkg/tool/GOOS_GOARCH/compile), which the go command
// runs once for each package its build cache lacks.
func IsGoCompile(prog string) bool {
	return path.Base(prog) == "compile" && strings.Contains(prog, "/pkg/tool/")
}

// GoBuilds reports whether argv is a go command that compiles (build,
// install, run, test, vet), for a run whose execs are not seen.
func GoBuilds(argv []string) bool {
	if len(argv) < 2 || path.Base(argv[0]) != "go" {
		return false
	}
	switch argv[1] {
	case "build", "install", "run", "test", "vet":
		return true
	}
	return false
}

// Fleeting reports whether dir lies in a place the sandbox writes and that
// ends with the run: the deepest place holding dir is writable and does
// not last. A dir no place holds is on the read-only host (the go command
// says so itself).
func Fleeting(dir string, places []Place) bool {
	best := -1
	for i, p := range places {
		// >=: of two mounts at one path the later one is on top (the
		// home's tmpfs, then --write ~ with --allow-writable-home).
		if under(dir, p.Path) && (best < 0 || len(p.Path) >= len(places[best].Path)) {
			best = i
		}
	}
	return best >= 0 && places[best].Writable && !places[best].Lasts
}

// GoNote is the line said at the end of a run whose go builds went to a
// cache that ended with it; compiles is how many packages it compiled (0:
// not seen), home the sandbox's HOME. The go profile keeps the cache where
// go looks by default (~/.cache/go-build); a cache the environment put
// elsewhere is kept with --cache.
func GoNote(dir, home string, compiles int) string {
	what, again := "go builds into a cache", "each run compiles again"
	switch {
	case compiles == 1:
		what, again = "go compiled 1 package into a build cache", "the next run compiles it again"
	case compiles > 1:
		what, again = fmt.Sprintf("go compiled %d packages into a build cache", compiles), "the next run compiles them again"
	}
	fix := "--profile go (-P go) keeps a build cache of jail's own from run to run"
	if home == "" || dir != filepath.Join(home, ".cache", "go-build") {
		fix = "--cache go-build:" + dir + " keeps a directory of jail's own there from run to run"
	}
	return fmt.Sprintf("%s that ends with this run (%s): %s; %s", what, dir, again, fix)
}

func lookup(env []string, name string) (string, bool) {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v, true // the first one, as getenv(3) and Go's os.Getenv see it
		}
	}
	return "", false
}

// under reports whether p is root or below it (both clean and absolute).
func under(p, root string) bool {
	if root == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == root || strings.HasPrefix(p, root+"/")
}
