package hostpath

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// File is one file a command needs: where it is found (Path, perhaps a
// symlink), the file itself (Final) and the links on the way.
type File struct {
	Path  string `json:"path"`
	Final string `json:"final"`
	Links []Link `json:"links,omitempty"`
}

// Command is what running a command needs from the host: the file found on
// PATH, then each #! interpreter in turn (a script's, an interpreter
// script's...).
type Command struct {
	Files []File
}

// maxInterp bounds nested interpreters, as the kernel does
// (BINPRM_MAX_RECURSION is 4).
const maxInterp = 4

// FindCommand finds name as execvp would with PATH pathEnv (relative entries
// and a name with a slash are taken from cwd), and follows its #! line:
// "#!/usr/bin/env NAME" is looked up on the same PATH. It returns what was
// found; a name not found is an error wrapping os.ErrNotExist.
func FindCommand(name, pathEnv, cwd string) (*Command, error) {
	p, err := lookPath(name, pathEnv, cwd)
	if err != nil {
		return nil, err
	}
	cmd := &Command{}
	for i := 0; i <= maxInterp && p != ""; i++ {
		final, links, err := Resolve(p)
		if err != nil {
			return cmd, err
		}
		cmd.Files = append(cmd.Files, File{Path: p, Final: final, Links: links})
		interp, viaEnv := Interpreter(final)
		switch {
		case interp == "":
			p = ""
		case viaEnv:
			if p, err = lookPath(interp, pathEnv, cwd); err != nil {
				return cmd, nil // the script says so itself when it runs
			}
		default:
			p = interp
		}
	}
	return cmd, nil
}

func lookPath(name, pathEnv, cwd string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("find command: empty name: %w", os.ErrNotExist)
	}
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(cwd, name)
		}
		return filepath.Clean(name), nil
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("find command %s: %w", name, os.ErrNotExist)
}

// Interpreter reads the #! line of the file at p: the interpreter's path,
// or, for "#!/usr/bin/env [-S] NAME ...", NAME with viaEnv set. "" when p
// is no script.
func Interpreter(p string) (interp string, viaEnv bool) {
	f, err := os.Open(p)
	if err != nil {
		return "", false
	}
	defer f.Close()
	buf := make([]byte, 256) // the kernel reads at most 256 bytes (BINPRM_BUF_SIZE)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", false
	}
	line := buf[:n]
	if !bytes.HasPrefix(line, []byte("#!")) {
		return "", false
	}
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	fields := strings.Fields(string(line[2:]))
	if len(fields) == 0 {
		return "", false
	}
	if filepath.Base(fields[0]) != "env" {
		return fields[0], false
	}
	for _, a := range fields[1:] {
		switch {
		case a == "-S" || a == "--split-string":
			continue
		case strings.HasPrefix(a, "-S"):
			return strings.TrimPrefix(a, "-S"), true
		case strings.HasPrefix(a, "-"), strings.Contains(a, "="):
			continue // env's options and VAR=value assignments
		}
		return a, true
	}
	return "", false
}

// InstallTree is the directory a file found on PATH needs from its install,
// given the home and data directories under which each program has a
// directory of its own (~/.local/share/APP):
//   - a file in a bin (or version manager's shims) directory, or reached by a link in one whose parent
//     holds the file (npm's PREFIX/bin/x -> ../lib/node_modules/x/cli.js):
//     that parent, the prefix (nvm's ~/.nvm/versions/node/vX, a venv,
//     ~/.cargo), which holds its lib/;
//   - a file under a data directory: the program's own directory there
//     (~/.local/share/claude for ~/.local/share/claude/versions/X);
//   - otherwise the file's directory.
//
// broad lists directories too wide to show whole (the home, ~/.local,
// ~/.config...): a tree that is one of them or contains one is narrowed to
// the file's directory, and to the file alone if that is still too wide.
func InstallTree(f File, dataDirs, broad []string) string {
	final := f.Final
	dir := filepath.Dir(final)
	tree := dir
	prefix := ""
	for _, l := range f.Links {
		if ld := filepath.Dir(l.Path); filepath.Base(ld) == "bin" && strings.HasPrefix(final, filepath.Dir(ld)+"/") {
			prefix = filepath.Dir(ld)
		}
	}
	switch {
	case filepath.Base(dir) == "bin" || filepath.Base(dir) == "shims":
		// shims: pyenv, rbenv, nodenv, asdf; a shim runs the manager from
		// its root (~/.pyenv/libexec/pyenv), which also holds the versions.
		tree = filepath.Dir(dir)
	case prefix != "" && !tooBroad(prefix, broad):
		tree = prefix
	default:
		for _, d := range dataDirs {
			if d != "" && strings.HasPrefix(final, d+"/") {
				app := strings.SplitN(strings.TrimPrefix(final, d+"/"), "/", 2)[0]
				if app != filepath.Base(final) {
					tree = filepath.Join(d, app)
				}
				break
			}
		}
	}
	for _, t := range []string{tree, dir, final} {
		if !tooBroad(t, broad) {
			return t
		}
	}
	return final
}

func tooBroad(tree string, broad []string) bool {
	if tree == "/" {
		return true
	}
	for _, b := range broad {
		if b != "" && (tree == b || strings.HasPrefix(b, tree+"/")) {
			return true
		}
	}
	return false
}
