package audit

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jail-sandbox/jail/hostpath"
	"github.com/jail-sandbox/jail/internal/getrandom"
)

// FileTimeFormat is the start-time part of a default trail name (UTC, sortable).
const FileTimeFormat = "20060102T150405Z"

// ErrBadID is returned by DefaultPath for an id that is not a plain name.
var ErrBadID = errors.New("audit: sandbox id must be 1-64 characters of [A-Za-z0-9._-], not starting with '.'")

// ErrReplaceable is returned by CheckDirs: another user could replace the trail.
var ErrReplaceable = errors.New("another user could remove or replace the audit trail there")

// ErrWritableBySandbox is returned by CheckPlacement: the agent could rewrite its own trail.
var ErrWritableBySandbox = errors.New("audit trail would be writable inside the sandbox")

// DefaultPath returns dir/<start-time>-<id>.jsonl, dir being the audit
// directory of jail's state directory (package statedir says where).
func DefaultPath(dir string, now time.Time, id string) (string, error) {
	if !validID(id) {
		return "", fmt.Errorf("default audit path for %q: %w", id, ErrBadID)
	}
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("default audit path: directory %q is not absolute", dir)
	}
	name := now.UTC().Format(FileTimeFormat) + "-" + id + ".jsonl"
	return filepath.Join(dir, name), nil
}

func validID(id string) bool {
	if id == "" || len(id) > 64 || id[0] == '.' {
		return false
	}
	for _, c := range id {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// NewID returns a random 12-hex-digit sandbox id.
func NewID() string {
	var b [6]byte
	// The kernel's pool, as crypto/rand reads it, without its first use's
	// cost (package getrandom); it falls back to crypto/rand, which never
	// returns without the bytes.
	_ = getrandom.Read(b[:])
	return hex.EncodeToString(b[:])
}

// CheckPlacement reports, wrapping ErrWritableBySandbox, whether the trail
// path lies inside (or is) one of the paths the sandbox may write, unless it
// lies inside one of hidden: directories the sandbox cannot reach at all
// (the supervisor masks them with an empty read-only directory). The trail
// is followed as the kernel opens it (hostpath.Walk: a ".." after a link
// is taken from the link's target), and so are the writable and hidden
// paths (their deepest existing ancestor), so a symlinked workspace cannot
// hide the overlap. A path that goes into a place the sandbox can write
// and leaves it again is refused too, though the trail lies elsewhere: by a
// symlink there (the agent points it at a forgery of its own after the
// run, and the trail's path leads to that) or by ".." (the agent swaps the
// directory it leaves for a link). The supervisor calls it before Create and
// exits 125 on error.
func CheckPlacement(path string, writable, hidden []string) error {
	return CheckPlacementWith(nil, path, writable, hidden)
}

// CheckPlacementWith is CheckPlacement with its lookups shared with the
// caller's other ones of the same pass (res; nil: each name is looked up
// afresh, as CheckPlacement does). A start checks one trail against the
// same writable paths up to four times (its tree, the trees of earlier
// runs, each other mount of its directory), and an agent's profile has
// some thirty writable paths, most under the same few directories: each
// resolved afresh, the checks cost 1-2 ms of the start (docs/performance.md,
// session 34).
// The answers are the ones CheckPlacement gives (hostpath.Resolver's
// promise: what a pass saw of a name it sees again).
func CheckPlacementWith(res *hostpath.Resolver, path string, writable, hidden []string) error {
	abs, err := hostpath.Abs(path)
	if err != nil {
		return fmt.Errorf("check audit trail placement: %w", err)
	}
	resolveAll := func(ps []string) ([]string, error) {
		rs := make([]string, 0, len(ps))
		for _, p := range ps {
			r, err := resolveWith(res, p)
			if err != nil {
				return nil, fmt.Errorf("check audit trail placement: %w", err)
			}
			rs = append(rs, r)
		}
		return rs, nil
	}
	hid, err := resolveAll(hidden)
	if err != nil {
		return err
	}
	wr, err := resolveAll(writable)
	if err != nil {
		return err
	}
	// writableAt names the writable path (as given) that p lies in, outside
	// every hidden one; "" if none.
	writableAt := func(p string) string {
		for _, h := range hid {
			if within(p, h) {
				return ""
			}
		}
		for i, r := range wr {
			if within(p, r) {
				return writable[i]
			}
		}
		return ""
	}
	var on []string // the names met on the way that the sandbox can write
	p, err := res.Walk(abs, func(s hostpath.Step) error {
		if s.Err == nil && writableAt(s.Path) != "" {
			on = append(on, s.Path)
		} // a missing name: the rest is made as named, under what was checked
		return nil
	})
	if err != nil {
		return fmt.Errorf("check audit trail placement: %w", err)
	}
	if wp := writableAt(p); wp != "" {
		return fmt.Errorf("%s is inside %s, which the sandbox can write; set `audit` to a path outside it: %w",
			path, wp, ErrWritableBySandbox)
	}
	for i := len(on) - 1; i >= 0; i-- { // the deepest first: the link, or the directory left
		n := on[i]
		// Why: the path went into n, which the sandbox can change, and
		// left it (n is a symlink, or a ".." led out of it): the agent can
		// point n, or swap it for a link, and choose where the path leads
		// after the run (to a forged trail of its own).
		if !within(p, n) {
			return fmt.Errorf("%s goes through %s (in %s, which the sandbox can write) and leaves it (a symlink or \"..\"): the sandbox could make the path lead elsewhere; set `audit` to a path outside it: %w",
				path, n, writableAt(n), ErrWritableBySandbox)
		}
	}
	return nil
}

// resolveWith makes p absolute and resolves symlinks in its longest
// existing prefix, with the lookups of res (nil: filepath.EvalSymlinks).
func resolveWith(res *hostpath.Resolver, p string) (string, error) {
	p, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	eval := filepath.EvalSymlinks
	if res != nil {
		// As EvalSymlinks for an absolute path: every link followed, the
		// last name's too; a missing name an error wrapping
		// os.ErrNotExist, any other failure its own error.
		eval = func(p string) (string, error) {
			r, _, err := res.Resolve(p)
			return r, err
		}
	}
	rest := ""
	for cur := p; ; {
		r, err := eval(cur)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

func within(p, dir string) bool {
	if p == dir || dir == "/" {
		return true
	}
	return strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}
