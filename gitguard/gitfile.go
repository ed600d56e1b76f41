package gitguard

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNotGitFile is wrapped when a .git file is not one git would follow.
var ErrNotGitFile = errors.New(`not a "gitdir: PATH" file`)

// ErrCommondir is wrapped when a commondir file is not one git would read.
var ErrCommondir = errors.New("bad commondir file")

// maxSmall bounds .git files and commondir files (git reads any size).
const maxSmall = 64 << 10

// ParseGitFile parses a .git file exactly as git 2.39's read_gitfile_gently
// does: the content must start with "gitdir: " (one space), every trailing
// '\n' and '\r' is dropped, and the rest, byte for byte (spaces, tabs, even
// inner newlines), is the path; relative to the directory holding the file
// when not absolute. A NUL (git would cut the path there) or a size over
// 64 KiB is refused: then jail does not know which directory git would use.
func ParseGitFile(data []byte) (string, error) {
	if len(data) > maxSmall {
		return "", fmt.Errorf("%w: larger than %d bytes", ErrNotGitFile, maxSmall)
	}
	rest, ok := bytes.CutPrefix(data, []byte("gitdir: "))
	if !ok {
		return "", ErrNotGitFile
	}
	rest = bytes.TrimRight(rest, "\r\n")
	if len(rest) == 0 || bytes.IndexByte(rest, 0) >= 0 {
		return "", fmt.Errorf("%w: empty or NUL in the path", ErrNotGitFile)
	}
	return string(rest), nil
}

// ParseCommondir parses a commondir file as get_common_dir_noenv does: the
// whole content without its trailing '\n' and '\r' is the path, relative to
// the git dir holding the file when not absolute. Empty (git dies), NUL or
// over 64 KiB is refused.
func ParseCommondir(data []byte) (string, error) {
	if len(data) > maxSmall {
		return "", fmt.Errorf("%w: larger than %d bytes", ErrCommondir, maxSmall)
	}
	rest := bytes.TrimRight(data, "\r\n")
	if len(rest) == 0 || bytes.IndexByte(rest, 0) >= 0 {
		return "", fmt.Errorf("%w: empty or NUL in the path", ErrCommondir)
	}
	return string(rest), nil
}

// readSmall reads a regular file of at most maxSmall bytes without following
// a final symlink.
func readSmall(p string) ([]byte, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", p)
	}
	if fi.Size() > maxSmall {
		return nil, fmt.Errorf("%s: larger than %d bytes", p, maxSmall)
	}
	return os.ReadFile(p)
}

// rel joins a path read from a file in dir the way git does (absolute, or
// relative to dir), and resolves symlinks; "" when it does not exist.
func rel(dir, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	return r
}

// CommonDir returns the common dir of git dir g: the target of g/commondir,
// or g itself. ok is false when commondir exists but cannot be read the way
// git would, or its target does not exist.
func CommonDir(g string) (string, bool) {
	b, err := readSmall(filepath.Join(g, "commondir"))
	if errors.Is(err, os.ErrNotExist) {
		return g, true
	}
	if err != nil {
		return "", false
	}
	c, err := ParseCommondir(b)
	if err != nil {
		return "", false
	}
	r := rel(g, c)
	return r, r != ""
}

// IsGitDir reports whether git would take d for a git directory
// (is_git_directory): a HEAD, and objects and refs in its common dir. It
// does not validate HEAD's content: more directories count as git dirs than
// git would accept, which only makes jail judge more.
func IsGitDir(d string) bool {
	if _, err := os.Lstat(filepath.Join(d, "HEAD")); err != nil {
		return false
	}
	c, ok := CommonDir(d)
	if !ok {
		// An unreadable commondir: git dies there, but the directory is
		// meant as a git dir: judge it.
		return true
	}
	for _, n := range []string{"objects", "refs"} {
		if _, err := os.Stat(filepath.Join(c, n)); err != nil {
			return false
		}
	}
	return true
}
