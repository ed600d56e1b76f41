package config

import (
	"path/filepath"
	"strings"
)

// Enclosing is the trusted project file of the closest directory strictly
// above ws (the workspace jail chose, which has no project file of its
// own): by a record's path, else by a directory's identity (the project
// reached by another name, a bind mount of it), named by the path that
// reaches it from ws. The home and the directories above it are no
// project's (as CheckAbove). "" when there is none.
//
// Resolve applies that file to the run instead of refusing it (trustsub):
// the workspace is narrower than the project the user trusted the file for
// (a git submodule, a plain subdirectory, or a .git a command in the
// project's sandbox made), and the file's restrictions must hold there as
// they do in the project. The file is checked as the workspace's own
// would be (Check: bytes and, found by identity, the record's path).
func (t *TrustStore) Enclosing(ws, home string) (string, error) {
	if !filepath.IsAbs(t.Path) {
		return "", nil // no store: nothing was trusted
	}
	tf, err := t.load()
	if err != nil || len(tf.Files) == 0 {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(ws); err == nil {
		ws = r
	}
	best := tf.closestByPath(ws, "", home)
	// By identity, closest first: a nearer directory that is a trusted
	// project by another name wins over a farther one found by path.
	if f := tf.above(ws, "", home); f != "" && (best == "" || len(filepath.Dir(f)) > len(filepath.Dir(best))) {
		return f, nil
	}
	return best, nil
}

// Inner is the directory of the trusted project closest to cwd (resolved)
// that lies strictly inside ws (the git work tree jail chose) and holds
// cwd: by a record's path, else by identity. "" when there is none.
//
// Resolve makes it the workspace (trustsub): the user trusted its file for
// runs with that directory as the workspace (it was a work tree of its own,
// or the user passed --workspace), and a wider workspace would run without
// that file's restrictions -- which a command run there can bring about by
// emptying its .git (review14f). Narrowing never widens what a run can
// reach, and the directory's own file is then read and checked as any
// workspace's.
func (t *TrustStore) Inner(ws, cwd string) (string, error) {
	if !filepath.IsAbs(t.Path) || cwd == "" {
		return "", nil
	}
	if r, err := filepath.EvalSymlinks(ws); err == nil {
		ws = r
	}
	r, err := filepath.EvalSymlinks(cwd)
	if err != nil || !below(r, ws) {
		// No resolved current directory, or one at the workspace's top
		// (most starts): nothing between to narrow to, and the store
		// is not read.
		return "", nil
	}
	tf, err := t.load()
	if err != nil || len(tf.Files) == 0 {
		return "", err
	}
	best := ""
	for key := range tf.Files {
		dir := filepath.Dir(key)
		if below(dir, ws) && (r == dir || below(r, dir)) && len(dir) > len(best) {
			best = dir
		}
	}
	if f := tf.inside(ws, []string{r}); f != "" && len(filepath.Dir(f)) > len(best) {
		best = filepath.Dir(f)
	}
	return best, nil
}

// rebase makes the relative write, read and no-default-deny-at paths and deny globs of a
// project file applied to a workspace below its directory relative to that
// directory, as they are in a run of the project itself: "sub/secret.txt"
// of /p/.jail.toml is /p/sub/secret.txt whatever the workspace (relative to
// the narrower workspace it would name nothing, and its deny would be
// lost). Values already absolute, "~" ones and ones climbing out with ".."
// are left for the sandbox to judge as written.
func rebase(f *File, dir string) {
	for i := range f.Settings {
		s := &f.Settings[i]
		v := s.Value
		switch s.Option.Name {
		case "write", "read", "no-default-deny-at":
			if v != "" && !filepath.IsAbs(v) && !strings.HasPrefix(v, "~") {
				s.Value = filepath.Join(dir, v)
			}
		case "deny":
			fold := strings.HasPrefix(v, "(?i)")
			pat := strings.TrimPrefix(v, "(?i)")
			clean := filepath.Clean(pat)
			if pat == "" || filepath.IsAbs(pat) || strings.HasPrefix(pat, "~") || clean == ".." || strings.HasPrefix(clean, "../") {
				continue
			}
			abs := globEscape(dir) + "/" + pat
			if fold {
				abs = "(?i)" + abs
			}
			s.Value = abs
		}
	}
}

// globEscape escapes the glob characters of a literal directory (fsrules'
// syntax: '\' escapes), so that a project directory named "a[1]" anchors
// the pattern at itself.
func globEscape(s string) string {
	// By bytes: a directory's name need not be UTF-8, and ranging over
	// runes would write an invalid byte back as U+FFFD, anchoring the
	// deny at a directory that does not exist (FuzzRebaseDeny).
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`*?[]\`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
