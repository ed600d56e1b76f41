package pastwrite

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Header is the file's first line; a file of another version is refused.
const Header = "jail written trees v1"

// MaxTrees bounds the trees kept; the least recently recorded go first.
const MaxTrees = 512

// MaxSize bounds the file read, in bytes: MaxTrees lines of the longest
// paths a record holds (maxPath, quoted) fit.
const MaxSize = 1 << 20

// maxPath bounds one tree's path (PATH_MAX).
const maxPath = 4096

// Tree is one directory a run made writable: its path, symlink-free, as
// the run bound it, and its identity then.
type Tree struct {
	Path     string
	Dev, Ino uint64
}

// ErrCorrupt is returned for a file Parse refuses.
var ErrCorrupt = errors.New("not a record jail wrote")

// Parse reads a file Format wrote: the header line, then one tree a line,
// "DEV INO QUOTED-PATH" (decimal numbers, the path as strconv.Quote writes
// it: absolute, clean, no NUL). Anything else, a duplicate path, or more
// than MaxTrees lines is an error wrapping ErrCorrupt that names the line.
func Parse(data []byte) ([]Tree, error) {
	if len(data) > MaxSize {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrCorrupt, MaxSize)
	}
	rest, ok := bytes.CutPrefix(data, []byte(Header+"\n"))
	if !ok {
		return nil, fmt.Errorf("%w: line 1 is not %q", ErrCorrupt, Header)
	}
	lines := bytes.Count(rest, []byte("\n"))
	if lines > MaxTrees {
		return nil, fmt.Errorf("%w: more than %d trees", ErrCorrupt, MaxTrees)
	}
	// One string for all lines: the paths are slices of it, not a copy
	// each (a start reads every line; issue 16).
	text := string(rest)
	trees := make([]Tree, 0, lines)
	seen := make(map[string]struct{}, lines)
	for n := 2; len(text) > 0; n++ {
		line, after, ok := strings.Cut(text, "\n")
		if !ok {
			return nil, fmt.Errorf("%w: line %d has no end", ErrCorrupt, n)
		}
		text = after
		t, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrCorrupt, n, err)
		}
		if _, dup := seen[t.Path]; dup {
			return nil, fmt.Errorf("%w: line %d: %s twice", ErrCorrupt, n, strconv.Quote(t.Path))
		}
		seen[t.Path] = struct{}{}
		trees = append(trees, t)
	}
	return trees, nil
}

func parseLine(line string) (Tree, error) {
	dev, rest, ok1 := strings.Cut(line, " ")
	ino, quoted, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 {
		return Tree{}, errors.New("not DEV INO PATH")
	}
	var t Tree
	var err error
	if t.Dev, err = number(dev); err != nil {
		return Tree{}, fmt.Errorf("device: %v", err)
	}
	if t.Ino, err = number(ino); err != nil {
		return Tree{}, fmt.Errorf("inode: %v", err)
	}
	p, ok := plainQuoted(quoted)
	if !ok {
		// Only what strconv.Quote writes: a double-quoted string that
		// unquotes and quotes back to the very same bytes.
		if !strings.HasPrefix(quoted, `"`) {
			return Tree{}, errors.New("path not quoted")
		}
		if p, err = strconv.Unquote(quoted); err != nil || strconv.Quote(p) != quoted {
			return Tree{}, errors.New("path not quoted as jail quotes it")
		}
	}
	if err := validPath(p); err != nil {
		return Tree{}, err
	}
	t.Path = p
	return t, nil
}

// plainQuoted is strconv.Unquote for the common case, a quoted string of
// printable ASCII with no quote or backslash in it, which strconv.Quote
// writes as it is: a start reads every line (issue 16).
func plainQuoted(q string) (string, bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return "", false
	}
	in := q[1 : len(q)-1]
	for i := 0; i < len(in); i++ {
		if c := in[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return "", false
		}
	}
	return in, true
}

// number is a decimal uint64 with no sign, no leading zero and no spaces.
func number(s string) (uint64, error) {
	if s == "" || (len(s) > 1 && s[0] == '0') || s[0] == '+' {
		return 0, fmt.Errorf("%q is not a decimal number", s)
	}
	return strconv.ParseUint(s, 10, 64)
}

// validPath is a tree's path as a run binds it: absolute, clean, not the
// root (never writable), no NUL, at most maxPath bytes.
func validPath(p string) error {
	switch {
	case len(p) > maxPath:
		return fmt.Errorf("path longer than %d bytes", maxPath)
	case !clean(p):
		return fmt.Errorf("path %s not absolute and clean", strconv.Quote(p))
	case p == "/":
		return errors.New("path is /")
	case strings.ContainsRune(p, 0):
		return errors.New("path holds a NUL")
	}
	return nil
}

// clean reports whether p is absolute and filepath.Clean(p) == p, without
// Clean's copy: no empty, "." or ".." element, no trailing slash.
func clean(p string) bool {
	if len(p) == 0 || p[0] != '/' {
		return false
	}
	if p == "/" {
		return true
	}
	// Each element, from after its slash to the next one (or the end).
	for i := 1; i <= len(p); {
		j := strings.IndexByte(p[i:], '/')
		if j < 0 {
			j = len(p) - i
		}
		if e := p[i : i+j]; e == "" || e == "." || e == ".." {
			return false
		}
		i += j + 1
	}
	return true
}

// Format writes trees as Parse reads them, in their order.
func Format(trees []Tree) []byte {
	var b bytes.Buffer
	b.WriteString(Header + "\n")
	for _, t := range trees {
		fmt.Fprintf(&b, "%d %d %s\n", t.Dev, t.Ino, strconv.Quote(t.Path))
	}
	return b.Bytes()
}
