// Package hosttool lets jail run the host's own programs on its own behalf
// (git, for the identity a commit inside uses; npm, go and python, for a
// toolchain profile's registries) without a sandbox choosing what runs.
//
// Those programs run on the host, outside any sandbox, at a later start
// or at a run's end. They are found on the user's PATH, and a PATH often
// names a directory the sandbox can write: an activated virtual
// environment in the workspace (.venv/bin first), direnv's PATH_add of a
// project's bin or node_modules/.bin, a --write path. What the agent puts
// there under the name jail runs (git; node, which npm's `#!/usr/bin/env
// node` looks up on PATH; bash, for a version manager's shim) would run
// as the user, or as root, at the next start: a way out of the sandbox
// that needs no escape. The loader's and shells' start-up variables
// (LD_PRELOAD, LD_LIBRARY_PATH, BASH_ENV, NODE_OPTIONS) can name such a
// place the same way.
//
// LookPath finds a program on a PATH without the directories the sandbox
// can write, and Env gives the environment to run it with: PATH and
// LD_LIBRARY_PATH without those directories and without relative entries
// (relative to wherever the program runs, the workspace for git), and no
// variable that makes a program load a file it names. What the sandbox
// can write is the caller's to say (this run's writable trees, and those
// of earlier runs: a venv planted in another project's run is on the
// same PATH). The package imports no other jail package.
package hosttool

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Writable reports whether a sandbox (this run's, or an earlier run's)
// can write path, or create files in it if it is a directory. A path
// that does not exist yet counts when the sandbox could create it.
type Writable func(path string) bool

// ErrNotFound is returned by LookPath when no file the sandbox cannot
// write is found.
var ErrNotFound = errors.New("not found on a PATH directory the sandbox cannot write")

// dropped are the variables that make a program, its loader or its
// shell load a file they name: nothing jail asks a tool needs them, and
// each can name a file the sandbox wrote.
var dropped = map[string]bool{
	"LD_PRELOAD":    true, // the dynamic loader: libraries loaded into every program
	"LD_AUDIT":      true, // the dynamic loader: auditing libraries, loaded first
	"BASH_ENV":      true, // sourced by every non-interactive bash (a shim's #!)
	"ENV":           true, // sourced by sh and bash --posix
	"NODE_OPTIONS":  true, // --require, --import, --loader: code node loads first
	"PYTHONPATH":    true, // modules found before the standard library's
	"PYTHONSTARTUP": true,
	"PERL5OPT":      true, // -M: a module perl loads first
	"PERL5LIB":      true,
	"RUBYOPT":       true, // -r: a file ruby loads first
}

// lists are the variables holding directories searched in order: their
// writable and relative entries are dropped.
var lists = map[string]bool{
	"PATH":            true,
	"LD_LIBRARY_PATH": true,
	"GIT_EXEC_PATH":   true, // git's own commands (git-*) come from it first
}

// Env returns environ fit to run a host program on jail's behalf: the
// entries of PATH, LD_LIBRARY_PATH and GIT_EXEC_PATH that are relative
// or writable removed (the variable left out when none is left), and the
// variables that name code to load left out.
func Env(environ []string, w Writable) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || dropped[k] {
			continue
		}
		if lists[k] {
			dirs := Dirs(v, w)
			if len(dirs) == 0 {
				// Left out, not empty: an empty PATH is the current
				// directory to execvp (and an empty entry of the
				// loader's list too); unset, each takes its default.
				continue
			}
			kv = k + "=" + strings.Join(dirs, ":")
		}
		out = append(out, kv)
	}
	return out
}

// Dirs returns the entries of a colon-separated list of directories that
// are absolute and that the sandbox cannot write, in order. An empty or
// relative entry is a directory relative to where the program runs.
func Dirs(list string, w Writable) []string {
	var out []string
	for _, d := range filepath.SplitList(list) {
		if !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		if w(d) {
			continue
		}
		if real, err := filepath.EvalSymlinks(d); err == nil && w(real) {
			continue // a link to a writable place
		}
		out = append(out, d)
	}
	return out
}

// LookPath finds name as exec.LookPath would, on the PATH of environ,
// in the directories Dirs keeps, and skips a file the sandbox can write
// (a link in a read-only directory to one in the workspace). A name with
// a slash is not looked up: it is refused (jail runs tools by name).
func LookPath(name string, environ []string, w Writable) (string, error) {
	if name == "" || strings.Contains(name, "/") {
		return "", &fs.PathError{Op: "lookpath", Path: name, Err: fs.ErrInvalid}
	}
	path := ""
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v // the last one wins, as in the process the tool gets
		}
	}
	for _, d := range Dirs(path, w) {
		p := filepath.Join(d, name)
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			continue
		}
		if w(p) {
			continue
		}
		if real, err := filepath.EvalSymlinks(p); err != nil || w(real) {
			continue
		}
		return p, nil
	}
	return "", &fs.PathError{Op: "lookpath", Path: name, Err: ErrNotFound}
}
