package audit

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

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
// (the supervisor masks them with an empty read-only directory). Both
// sides are resolved through symlinks (the trail's deepest existing
// ancestor), so a symlinked workspace cannot hide the overlap. The
// supervisor calls it before Create and exits 125 on error.
func CheckPlacement(path string, writable, hidden []string) error {
	p, err := resolve(path)
	if err != nil {
		return fmt.Errorf("check audit trail placement: %w", err)
	}
	for _, h := range hidden {
		r, err := resolve(h)
		if err != nil {
			return fmt.Errorf("check audit trail placement: %w", err)
		}
		if within(p, r) {
			return nil
		}
	}
	for _, wp := range writable {
		r, err := resolve(wp)
		if err != nil {
			return fmt.Errorf("check audit trail placement: %w", err)
		}
		if within(p, r) {
			return fmt.Errorf("%s is inside %s, which the sandbox can write; set `audit` to a path outside it: %w",
				path, wp, ErrWritableBySandbox)
		}
	}
	return nil
}

// resolve makes p absolute and resolves symlinks in its longest existing prefix.
func resolve(p string) (string, error) {
	p, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for cur := p; ; {
		r, err := filepath.EvalSymlinks(cur)
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
