package fsrules

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotGitFile is wrapped when a .git file is not "gitdir: PATH".
var ErrNotGitFile = errors.New(`not a "gitdir: PATH" file`)

// ParseGitFile parses the content of a .git file (a git worktree or a
// submodule checkout): "gitdir: PATH" and a newline. A relative PATH is
// returned as written (relative to the directory holding the file).
func ParseGitFile(data []byte) (string, error) {
	if len(data) > 4096 {
		return "", fmt.Errorf("%w: longer than 4096 bytes", ErrNotGitFile)
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	s := strings.TrimRight(string(line), "\r \t")
	rest, ok := strings.CutPrefix(s, "gitdir:")
	if !ok {
		return "", ErrNotGitFile
	}
	rest = strings.TrimLeft(rest, " \t")
	if rest == "" || strings.ContainsRune(rest, 0) {
		return "", fmt.Errorf("%w: empty or NUL in path", ErrNotGitFile)
	}
	return rest, nil
}

// readLine reads the first line of a small file.
func readLine(p string) (string, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return strings.TrimSpace(string(line)), nil
}

// worktree applies the rule "inside a git worktree whose .git is a file, the
// shared git dir is writable except hooks/ and config". The .git file is in a
// writable place, so an earlier agent could have forged it to point at, say,
// the home directory: jail trusts it only when git's own back-pointer agrees
// (COMMON/worktrees/NAME/gitdir names this .git file, COMMON/worktrees/NAME/
// commondir leads back to COMMON, and COMMON looks like a git directory).
func (w *walker) worktree(in Input) []string {
	dotgit := filepath.Join(in.Workspace, ".git")
	st, err := os.Lstat(dotgit)
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	note := func(format string, a ...any) []string {
		return []string{fmt.Sprintf("%s: "+format+"; its git directory stays read-only (git commit will fail; add it with `write` if you trust it)", append([]any{dotgit}, a...)...)}
	}
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return note("unreadable: %v", err)
	}
	gd, err := ParseGitFile(b)
	if err != nil {
		return note("%v", err)
	}
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(in.Workspace, gd)
	}
	gd, err = filepath.EvalSymlinks(gd)
	if err != nil {
		return note("gitdir %v", err)
	}
	c, err := readLine(filepath.Join(gd, "commondir"))
	if err != nil {
		return note("%s is not a worktree's git directory (no commondir; a submodule?)", gd)
	}
	if !filepath.IsAbs(c) {
		c = filepath.Join(gd, c)
	}
	common, err := filepath.EvalSymlinks(c)
	if err != nil {
		return note("commondir %v", err)
	}
	back, err := readLine(filepath.Join(gd, "gitdir"))
	if err != nil {
		return note("no back-pointer in %s: %v", gd, err)
	}
	if !filepath.IsAbs(back) {
		back = filepath.Join(gd, back)
	}
	wantBack, _ := filepath.EvalSymlinks(dotgit)
	if gotBack, err := filepath.EvalSymlinks(back); err != nil || gotBack != wantBack {
		return note("%s/gitdir points to %s, not to this worktree", gd, back)
	}
	if filepath.Dir(gd) != filepath.Join(common, "worktrees") {
		return note("%s is not under %s/worktrees", gd, common)
	}
	if fi, err := os.Stat(filepath.Join(common, "objects")); err != nil || !fi.IsDir() {
		return note("%s has no objects/: not a git directory", common)
	}
	w.extraWritable = append(w.extraWritable, common)
	var notes []string
	if !in.AllowGitConfig {
		for _, p := range []string{filepath.Join(common, "hooks"), filepath.Join(common, "config"),
			filepath.Join(common, "config.worktree"), filepath.Join(gd, "config.worktree")} {
			fi, err := os.Lstat(p)
			if err != nil {
				if filepath.Base(p) == "hooks" {
					notes = append(notes, fmt.Sprintf("%s does not exist, so it is not write-protected: the agent can create hooks there", p))
				}
				continue
			}
			w.add(Mask{Path: p, Kind: ReadOnly, Dir: fi.IsDir(), Rule: "default: git worktree " + filepath.Base(p)})
		}
	}
	return notes
}
