package hostgit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/jail-sandbox/jail/internal/replacefile"
	"github.com/jail-sandbox/jail/plainfile"
)

// This file: ReadIdentity without running git when nothing git would read
// has changed since the last run (one git run cost about 15 ms of CPU per
// start here, a tenth of jail's start).

// cacheEntry is what the cache file holds: the identity git answered and
// the key of everything it was read from.
type cacheEntry struct {
	Key   string `json:"key"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// ReadIdentityCached is ReadIdentity with its answer kept in file (which
// must be a place only the user writes: jail's state directory). The
// answer is reused only when the key is the same: the git binary, every
// variable git's config lookup reads (GIT_*, HOME, XDG_CONFIG_HOME) and
// the identity (device, inode, size, mode, owner, mtime and ctime) or
// absence of every file git would read for dir: the system, XDG and
// global configs, and the config of the repository dir is in or the first
// one above it. Where that set cannot be known from outside git (a file
// with an include or includeIf, a repository found through a .git file or
// commondir, GIT_DIR or GIT_COMMON_DIR set) git runs every time.
func ReadIdentityCached(git, dir string, env []string, file string) Identity {
	key, ok := identityKey(git, dir, env)
	if !ok || file == "" {
		return ReadIdentity(git, dir, env)
	}
	if b, err := os.ReadFile(file); err == nil {
		e, ok := parseEntry(b)
		if !ok && json.Unmarshal(b, &e) != nil {
			e = cacheEntry{}
		}
		if e.Key == key && key != "" {
			return Identity{Name: e.Name, Email: e.Email}
		}
	}
	id := ReadIdentity(git, dir, env)
	// The key again: a file changed while git read it makes a key that
	// matches neither the old state nor the new; that answer is not kept.
	if again, ok := identityKey(git, dir, env); ok && again == key {
		writeCache(file, cacheEntry{Key: key, Name: id.Name, Email: id.Email})
	}
	return id
}

// parseEntry reads the file as json.Marshal writes a cacheEntry whose
// strings are printable ASCII with no '"' or '\\' (what nearly every
// identity is): the same answer as json.Unmarshal without its first use's
// cost (reflection over the type: a third of this function's start). false
// for anything else: json.Unmarshal then decides.
func parseEntry(b []byte) (cacheEntry, bool) {
	var e cacheEntry
	s := string(b)
	for _, f := range []struct {
		name string
		v    *string
	}{{`{"key":"`, &e.Key}, {`","name":"`, &e.Name}, {`","email":"`, &e.Email}} {
		rest, ok := strings.CutPrefix(s, f.name)
		if !ok {
			return cacheEntry{}, false
		}
		i := strings.IndexByte(rest, '"')
		if i < 0 {
			return cacheEntry{}, false
		}
		for j := 0; j < i; j++ {
			if c := rest[j]; c < 0x20 || c >= 0x7f || c == '\\' {
				return cacheEntry{}, false
			}
		}
		*f.v, s = rest[:i], rest[i:]
	}
	if s != `"}` {
		return cacheEntry{}, false
	}
	return e, true
}

// writeCache replaces file with e (a new file renamed into place: a
// symlink at its name is replaced, not followed), in a directory that
// exists (the state directory is made by the first run's trail). Failures
// only cost the next start a git run.
func writeCache(file string, e cacheEntry) {
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	_ = replacefile.Write(file, "", b, false)
}

// identityKey is the cache key for ReadIdentity(git, dir, env), and false
// when the files git reads cannot be listed from outside it.
func identityKey(git, dir string, env []string) (string, bool) {
	if git == "" {
		return "", false
	}
	get := func(k string) string {
		v := ""
		for _, kv := range env {
			if name, val, ok := strings.Cut(kv, "="); ok && name == k {
				v = val // the last one wins, as in the process git gets
			}
		}
		return v
	}
	if get("GIT_DIR") != "" || get("GIT_COMMON_DIR") != "" {
		return "", false
	}
	h := sha256.New()
	var vars []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			vars = append(vars, kv)
		}
	}
	slices.Sort(vars)
	fmt.Fprintf(h, "env %q\n", vars)
	stamp(h, git)

	var files []string
	// System: git's sysconfdir is /etc for a git in /usr, else PREFIX/etc.
	prefix := filepath.Dir(filepath.Dir(git))
	files = append(files, "/etc/gitconfig", filepath.Join(prefix, "etc", "gitconfig"))
	if p := get("GIT_CONFIG_SYSTEM"); p != "" {
		files = append(files, p)
	}
	home, xdg := get("HOME"), get("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	if xdg != "" {
		files = append(files, filepath.Join(xdg, "git", "config"))
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	if p := get("GIT_CONFIG_GLOBAL"); p != "" {
		files = append(files, p)
	}
	// The repository: git looks for .git in dir and each parent.
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	for d := abs; ; d = filepath.Dir(d) {
		g := filepath.Join(d, ".git")
		fi, err := os.Lstat(g)
		if err == nil {
			if !fi.IsDir() {
				return "", false // a .git file: a worktree or submodule
			}
			if _, err := os.Lstat(filepath.Join(g, "commondir")); err == nil {
				return "", false
			}
			files = append(files, g, filepath.Join(g, "config"), filepath.Join(g, "config.worktree"))
			break
		}
		fmt.Fprintf(h, "no %s\n", g)
		if d == filepath.Dir(d) {
			break
		}
	}
	for _, f := range files {
		if !stamp(h, f) {
			continue
		}
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			// Read without blocking and bounded: the repository's config
			// is in a tree a sandbox can write, and a FIFO or a huge file
			// swapped in after the Stat hung or filled the start (the
			// project file's lesson, trust16). Anything odd: git runs.
			b, err := plainfile.Read(f, maxConfig, errNotPlain)
			if err != nil || bytes.Contains(bytes.ToLower(b), []byte("include")) {
				return "", false // include.path, includeIf: other files
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

// stamp writes what identifies path's current content into h (following
// symlinks, and the link itself too), and says whether it exists.
func stamp(h interface{ Write([]byte) (int, error) }, path string) bool {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		fmt.Fprintf(h, "absent %q\n", path)
		return false
	}
	fmt.Fprintf(h, "lstat %q %d %d %d %o %d %d.%d %d.%d\n", path, st.Dev, st.Ino, st.Size, st.Mode, st.Uid, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
	if st.Mode&syscall.S_IFMT != syscall.S_IFLNK {
		return true
	}
	if err := syscall.Stat(path, &st); err != nil {
		fmt.Fprintf(h, "dangling %q\n", path)
		return false
	}
	fmt.Fprintf(h, "stat %q %d %d %d %o %d %d.%d %d.%d\n", path, st.Dev, st.Ino, st.Size, st.Mode, st.Uid, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
	return true
}
