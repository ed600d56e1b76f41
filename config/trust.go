package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/jail-sandbox/jail/internal/replacefile"
	"github.com/jail-sandbox/jail/internal/termsafe"
	"github.com/jail-sandbox/jail/policy"
)

// TrustStore records which project files the user has read and trusted, by
// absolute path and SHA-256 of their bytes. It lives in the user's config
// directory, outside every workspace, and jail hides that directory from the
// sandbox (the plan masks it, as the state directory: --no-default-deny
// does not lift it), so an agent can neither trust a file for
// the user nor keep a trust after editing the file: any change to the bytes
// loses it, and jail says so.
type TrustStore struct {
	Path string // $XDG_CONFIG_HOME/jail/trust.json
}

// Trusted is one record.
type Trusted struct {
	SHA256  string    `json:"sha256"`
	Trusted time.Time `json:"trusted"`
	// Dev and Ino are the identity of the file's directory when it was
	// trusted (0: a record from before they were kept). A record is
	// found by its path or by this identity: the same directory reached
	// by another name (a bind mount, a case-folding directory, the
	// project moved) is the same project, and an agent that deletes or
	// narrows around the trusted file must not escape its restrictions
	// because the next run names the directory differently (review14d).
	Dev uint64 `json:"dev,omitempty"`
	Ino uint64 `json:"ino,omitempty"`
}

type trustFile struct {
	Version int                `json:"version"`
	Files   map[string]Trusted `json:"files"`
}

// ErrUntrusted and ErrChanged are what Check returns (wrapped in a
// *TrustError saying what to do).
var (
	ErrUntrusted = errors.New("not trusted")
	ErrChanged   = errors.New("changed since it was trusted")
	// ErrGone is a trusted project file that no longer exists
	// (CheckAbsent).
	ErrGone = errors.New("trusted but gone")
	// ErrAbove is a trusted project file in a directory above the
	// workspace, which a run there would not read (CheckAbove).
	ErrAbove = errors.New("trusted above the workspace")
	// ErrInside is a trusted project file in a directory inside the
	// workspace that holds the current directory (CheckInside).
	ErrInside = errors.New("trusted inside the workspace")
)

// TrustError is a project file jail will not read yet, with the fix.
type TrustError struct {
	File      string
	Err       error // ErrUntrusted, ErrChanged, ErrGone, ErrAbove or ErrInside
	Was       string
	Now       string
	Workspace string // ErrAbove, ErrInside: the workspace jail chose
}

func (e *TrustError) Error() string {
	if errors.Is(e.Err, ErrInside) {
		dir := filepath.Dir(e.File)
		return fmt.Sprintf("%s is trusted for %s, which holds the current directory, but the workspace would be %s (the enclosing git work tree; if %s was one of its own, its .git is gone or emptied, which a command run in the sandbox can do), so a run here would not apply it: pass --workspace %s to run under it, or --workspace %s to run under the enclosing project's file alone",
			e.File, dir, e.Workspace, dir, dir, e.Workspace)
	}
	if errors.Is(e.Err, ErrAbove) {
		dir := filepath.Dir(e.File)
		return fmt.Sprintf("%s is trusted for %s, which holds this workspace (%s, a git work tree of its own or the current directory), so a run here would not apply it (a .git made there by a command run in the sandbox does this): pass --workspace %s to run under it, or --no-project-file to run without it",
			e.File, dir, e.Workspace, dir)
	}
	if errors.Is(e.Err, ErrGone) {
		return fmt.Sprintf("%s was trusted but is gone (removed by you or by a command run in the sandbox), and with it what it set for this project: restore it, or run jail trust --revoke %s to go on without it (or pass --no-project-file)",
			e.File, e.File)
	}
	if errors.Is(e.Err, ErrChanged) {
		return fmt.Sprintf("%s changed since you trusted it (sha256 %.12s, now %.12s), by you or by a command run in the sandbox: review it, then run jail trust %s again (or pass --no-project-file)",
			e.File, e.Was, e.Now, e.File)
	}
	return fmt.Sprintf("%s is not trusted: read it, then run jail trust %s to use it (or pass --no-project-file to run without it)", e.File, e.File)
}

// Unwrap makes a TrustError an ErrInvalid as well as its cause.
func (e *TrustError) Unwrap() []error { return []error{e.Err, policy.ErrInvalid} }

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func (t *TrustStore) load() (*trustFile, error) {
	if !filepath.IsAbs(t.Path) {
		// A relative store would be read from the current directory, the
		// workspace: a record the sandbox could have written.
		return nil, fmt.Errorf("%w: no config directory to keep trusted project files in: set HOME or XDG_CONFIG_HOME (or pass --no-project-file)", policy.ErrInvalid)
	}
	tf := &trustFile{Version: 1, Files: map[string]Trusted{}}
	data, err := os.ReadFile(t.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return tf, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read trust store %s: %w", t.Path, err)
	}
	tf, err = parseStore(data)
	if err != nil {
		return nil, fmt.Errorf("trust store %s is damaged (%v): move it away and trust your project files again", t.Path, err)
	}
	return tf, nil
}

// parseStore parses the store's bytes (fuzzed: FuzzParseStore). Only
// version 1 is read; keys that are not absolute paths are dropped (Trust
// writes none; a relative key would be compared with nothing, and the
// directory of "" is ".", the current directory).
func parseStore(data []byte) (*trustFile, error) {
	tf := &trustFile{Version: 1, Files: map[string]Trusted{}}
	if err := json.Unmarshal(data, tf); err != nil {
		return nil, err
	}
	if tf.Version != 1 {
		return nil, fmt.Errorf("version %d, want 1", tf.Version)
	}
	if tf.Files == nil {
		tf.Files = map[string]Trusted{}
	}
	for k := range tf.Files {
		if !filepath.IsAbs(k) || filepath.Clean(k) != k {
			delete(tf.Files, k)
		}
	}
	return tf, nil
}

// Check reports whether data, read from path, is a trusted project file.
func (t *TrustStore) Check(path string, data []byte) error {
	key, err := canonical(path)
	if err != nil {
		return err
	}
	tf, err := t.load()
	if err != nil {
		return err
	}
	found, rec, ok := tf.find(key)
	if !ok {
		return &TrustError{File: path, Err: ErrUntrusted}
	}
	if now := hashOf(data); now != rec.SHA256 {
		return &TrustError{File: path, Err: ErrChanged, Was: rec.SHA256, Now: now}
	}
	// Found by identity alone, trust is given only while the record's
	// own path still reaches that directory (a bind mount, another name
	// of it): a stored identity whose directory is gone may be an inode
	// reused by a directory the agent made, with the trusted bytes
	// copied in. Refusals (changed, gone, above) need no such proof:
	// at worst one refuses a run it need not.
	//
	// "Reaches" with no symlink on the way: the record's key is canonical
	// (its directory resolved when trusted), and a link now at that path
	// (or above it) is one a command in the sandbox could put there, to
	// a directory of its own with the trusted bytes copied in. Through it
	// the identities matched, and the file was trusted in the agent's
	// directory, its relative write, read and deny paths anchored where
	// the agent chose (trail17). A bind mount is no link: it still counts.
	// The path's check and the identity are one open (linkFreeID): a
	// concurrent run's agent swapping a link in only while the identity
	// was read, and out again before and after, passed two separate
	// checks around a stat that followed it (trustrace).
	//
	// The run's own directory too: its key is canonical (resolved by
	// canonical), so a link there now was swapped in since, to make
	// the agent's directory read as the trusted one.
	if found != key {
		was, ok1 := linkFreeID(filepath.Dir(found))
		is, ok2 := linkFreeID(filepath.Dir(key))
		if !ok1 || !ok2 || was != is {
			return &TrustError{File: path, Err: ErrUntrusted}
		}
	}
	return nil
}

// linkFree tells whether dir (absolute, clean) has no symlink on it.
func linkFree(dir string) bool {
	r, err := filepath.EvalSymlinks(dir)
	return err == nil && r == dir
}

// idStep, when set (tests), is called at each step of linkFreeID with the
// step's name ("path": before the way is checked for links, "stat":
// before the identity is read, "recheck": before the way is checked again;
// and "find": before find reads the run's directory's identity) and the
// directory: a test swaps a link in and out there. Where openat2 is
// missing (ENOSYS), "stat" comes twice: before the open that failed, and
// before the fallback's stat.
var idStep func(step, dir string)

func stepped(step, dir string) {
	if idStep != nil {
		idStep(step, dir)
	}
}

// linkFreeID is the identity of dir (absolute, clean) reached with no
// symlink on the way. Where the system can (openat2 with
// RESOLVE_NO_SYMLINKS: Linux 5.6), the check and the identity are one
// open, so no link can be swapped in for the stat alone; elsewhere the way
// is checked before and after the identity is read (a link there only
// between the checks takes two swaps in a few microseconds).
func linkFreeID(dir string) (dirID, bool) {
	stepped("path", dir)
	if id, ok, done := noLinksID(dir); done {
		return id, ok
	}
	if !linkFree(dir) {
		return dirID{}, false
	}
	stepped("stat", dir)
	id, ok := idOf(dir)
	stepped("recheck", dir)
	return id, ok && linkFree(dir)
}

// CheckAbsent is Check for a project file that does not exist: an error
// when the store still has a record for it. A trusted file holds the
// project's restrictions (deny, read-only, limits, net "none" over a user
// config's allowlist), and the workspace it lies in is writable: an agent
// that deletes it must not have the next run start without them, any more
// than one that edits it.
func (t *TrustStore) CheckAbsent(path string) error {
	if !filepath.IsAbs(t.Path) {
		return nil // no store: nothing was trusted
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	// The key Trust recorded: the directory resolved, the name kept.
	key := abs
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		key = filepath.Join(dir, filepath.Base(abs))
	}
	tf, err := t.load()
	if err != nil {
		return err
	}
	// Found by path or by the directory's identity: the project's
	// directory reached by another name (a bind mount) is the same
	// project, and its file is as gone (review14d).
	if _, _, ok := tf.find(key); ok {
		return &TrustError{File: path, Err: ErrGone}
	}
	return nil
}

// CheckAbove is for a workspace jail chose (the git top level of the
// current directory, else the current directory) that has no project file
// and no trusted project above it to apply (Enclosing: since trustsub,
// Resolve applies that one instead of calling this): an error when the
// store has a record for a project file in a directory above it or above
// the current directory as the user reached it. That file holds the enclosing project's restrictions, and the
// workspace is narrower only because of a .git below them, which a command
// run in that project's sandbox can make (its workspace is writable): the
// next run from the subfolder must not start without them (trustfollow).
// The user's home and the directories above it are not projects of
// anything below them (the sandbox never makes a work tree holding the home
// the workspace), so a record there does not count.
//
// cwd is the current directory as the user reached it (its symlinks kept,
// as $PWD has it): a directory of the project that a command in the
// sandbox replaced with a symlink to a place it can write elsewhere (a -w
// path) takes the resolved workspace out of the project; the path the user
// typed still lies in it.
func (t *TrustStore) CheckAbove(ws, cwd, home string) error {
	if !filepath.IsAbs(t.Path) {
		return nil // no store: nothing was trusted
	}
	tf, err := t.load()
	if err != nil || len(tf.Files) == 0 {
		return err
	}
	// The records' directories are resolved (canonical): so is the
	// workspace, or a symlinked path to it would slip past.
	if r, err := filepath.EvalSymlinks(ws); err == nil {
		ws = r
	}
	if best := tf.closestByPath(ws, cwd, home); best != "" {
		return &TrustError{File: best, Err: ErrAbove, Workspace: ws}
	}
	// The same check by identity: a directory above the workspace (or
	// the current directory) that is a trusted project's directory
	// reached by another name (a bind mount of it) holds that project
	// as much (review14d). Closest first; the home and above excluded
	// as above, by both names.
	if f := tf.above(ws, cwd, home); f != "" {
		return &TrustError{File: f, Err: ErrAbove, Workspace: ws}
	}
	return nil
}

// closestByPath is the record of the closest trusted project whose
// directory lies strictly above ws, or at or above cwd (when given), by
// the records' paths; records in or above home do not count. "" when none.
// ws and cwd are resolved as the records' keys are.
func (tf *trustFile) closestByPath(ws, cwd, home string) string {
	homeResolved := false
	best := ""
	for key := range tf.Files {
		dir := filepath.Dir(key)
		if !below(ws, dir) && !(cwd != "" && (cwd == dir || below(cwd, dir))) {
			continue
		}
		if home != "" && !homeResolved {
			// Only once a record encloses the workspace: most
			// starts have none.
			if r, err := filepath.EvalSymlinks(home); err == nil {
				home = r
			}
			homeResolved = true
		}
		if home != "" && (dir == home || below(home, dir)) {
			continue
		}
		if len(key) > len(best) {
			best = key // the closest enclosing project
		}
	}
	return best
}

// dirID is a directory's identity: device and inode.
type dirID struct{ dev, ino uint64 }

// idOf is the identity of the directory at path (symlinks followed).
func idOf(path string) (dirID, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.IsDir() {
		return dirID{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return dirID{}, false
	}
	return dirID{uint64(st.Dev), uint64(st.Ino)}, true //nolint:unconvert // Dev is int32 on darwin
}

// idOfRecord is the identity of key's directory: the one its path has
// now, or, where that path no longer leads to a directory (the project
// moved or deleted), the one stored when it was trusted. The live one
// first: a stored identity goes stale where the path still leads (btrfs
// numbers a subvolume's device anew at each mount, and every subvolume's
// top directory is inode 256), and a stale one could match an unrelated
// directory and refuse its runs.
func idOfRecord(key string, rec Trusted) (dirID, bool) {
	if id, ok := idOf(filepath.Dir(key)); ok {
		return id, true
	}
	if rec.Ino != 0 {
		return dirID{rec.Dev, rec.Ino}, true
	}
	return dirID{}, false
}

// find looks key up by path, then by its directory's identity (a record
// for a file of the same name in the same directory reached by another
// path). It returns the record's own key.
func (tf *trustFile) find(key string) (string, Trusted, bool) {
	if rec, ok := tf.Files[key]; ok {
		return key, rec, true
	}
	if len(tf.Files) == 0 {
		return "", Trusted{}, false
	}
	stepped("find", filepath.Dir(key))
	id, ok := idOf(filepath.Dir(key))
	if !ok {
		return "", Trusted{}, false
	}
	// Sorted: the same record whichever order the map gives.
	keys := make([]string, 0, len(tf.Files))
	for k := range tf.Files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if filepath.Base(k) != filepath.Base(key) {
			continue
		}
		if rid, ok := idOfRecord(k, tf.Files[k]); ok && rid == id {
			return k, tf.Files[k], true
		}
	}
	return "", Trusted{}, false
}

// above is CheckAbove by identity: the project file, named by the path
// that reaches it from ws (or cwd), of the closest directory strictly above
// ws, or at or above cwd, that is a trusted record's directory. Records in
// or above home, and directories in or above home, do not count.
func (tf *trustFile) above(ws, cwd, home string) string {
	if home != "" {
		// Resolved as the records' keys are, so that the string
		// checks below agree with them.
		if r, err := filepath.EvalSymlinks(home); err == nil {
			home = r
		}
	}
	ids := map[dirID]string{} // identity -> file name
	for k, rec := range tf.Files {
		dir := filepath.Dir(k)
		if home != "" && (dir == home || below(home, dir)) {
			continue
		}
		if id, ok := idOfRecord(k, rec); ok {
			ids[id] = filepath.Base(k)
		}
	}
	if len(ids) == 0 {
		return ""
	}
	var homeID dirID
	haveHome := false
	if home != "" {
		homeID, haveHome = idOf(home)
	}
	look := func(start string) string {
		for d := start; ; d = filepath.Dir(d) {
			if home != "" && (d == home || below(home, d)) {
				return "" // the home and above are no project's
			}
			id, ok := idOf(d)
			if ok && haveHome && id == homeID {
				return "" // the home by another name
			}
			if name, hit := ids[id]; ok && hit {
				return filepath.Join(d, name)
			}
			if d == "/" || d == "." {
				return ""
			}
		}
	}
	if ws != "" && ws != "/" {
		if f := look(filepath.Dir(ws)); f != "" {
			return f
		}
	}
	if cwd != "" && filepath.IsAbs(cwd) {
		return look(cwd)
	}
	return ""
}

// CheckInside is for a workspace jail chose (the git top level of the
// current directory) that has a project file of its own: an error when the
// store has a record for a project file in a directory strictly inside the
// workspace that holds the current directory. Since trustsub Resolve makes
// such a directory the workspace first (Inner), which leaves this the
// current directory as the user reached it (its links kept). The user trusted that file
// for runs with its directory as the workspace (a git work tree of its
// own); a command run there can empty its .git (HEAD, objects and refs are
// the workspace's files), and the next run from that directory would then
// widen the workspace to the enclosing work tree and apply only the
// enclosing project's file, without the inner one's restrictions
// (review14f; CheckAbove catches the same when the enclosing tree has no
// project file). cwd is the current directory as the user reached it; it
// is resolved too, as the records are.
func (t *TrustStore) CheckInside(ws, cwd string) error {
	if !filepath.IsAbs(t.Path) || cwd == "" {
		return nil // no store: nothing was trusted
	}
	tf, err := t.load()
	if err != nil || len(tf.Files) == 0 {
		return err
	}
	if r, err := filepath.EvalSymlinks(ws); err == nil {
		ws = r
	}
	cwds := []string{cwd}
	if r, err := filepath.EvalSymlinks(cwd); err == nil && r != cwd {
		cwds = append(cwds, r)
	}
	best := ""
	for key := range tf.Files {
		dir := filepath.Dir(key)
		if !below(dir, ws) {
			continue // the workspace's own file, or one outside it
		}
		for _, c := range cwds {
			if (c == dir || below(c, dir)) && len(key) > len(best) {
				best = key // the closest enclosing inner project
			}
		}
	}
	if best == "" {
		best = tf.inside(ws, cwds)
	}
	if best != "" {
		return &TrustError{File: best, Err: ErrInside, Workspace: ws}
	}
	return nil
}

// inside is CheckInside by identity: the project file, named by the path
// that reaches it from the current directory, of the closest directory
// at or above a cwd and strictly below ws that is a trusted record's
// directory. Why: a bind mount of the outer project (trusted by identity,
// Check) reaches the inner one by a path no record has; by path alone its
// deny was dropped once a command in its sandbox emptied its .git
// (review14g).
func (tf *trustFile) inside(ws string, cwds []string) string {
	ids := map[dirID]string{} // identity -> file name
	for k, rec := range tf.Files {
		if id, ok := idOfRecord(k, rec); ok {
			ids[id] = filepath.Base(k)
		}
	}
	for _, c := range cwds {
		for d := c; below(d, ws); d = filepath.Dir(d) {
			if id, ok := idOf(d); ok {
				if name, hit := ids[id]; hit {
					return filepath.Join(d, name)
				}
			}
		}
	}
	return ""
}

// below reports whether p lies strictly below dir.
func below(p, dir string) bool {
	if dir == "/" {
		return p != "/" && strings.HasPrefix(p, "/")
	}
	return strings.HasPrefix(p, dir+"/")
}

// Trust records path's current bytes as trusted. The file must parse as a
// project file: a file jail would refuse is not worth trusting.
func (t *TrustStore) Trust(path string, now time.Time) (string, error) {
	h, _, err := t.TrustShown(path, now)
	return h, err
}

// TrustShown is Trust that also says what the trusted bytes set (Describe):
// the very bytes hashed, read once. The user read the file before; a
// command still running in the sandbox may have changed it since, and
// jail trust shows what it trusted so that such a change is seen
// (trustfollow).
func (t *TrustStore) TrustShown(path string, now time.Time) (string, []string, error) {
	p, err := t.Prepare(path)
	if err != nil {
		return "", nil, err
	}
	return p.SHA256, p.Sets, t.Record(p, now)
}

// Pending is a project file read once to be trusted: what jail trust
// shows the user and, once confirmed, records (Record). The hash is of
// the bytes described: a change made between the question and the answer
// is not what gets trusted (the next run then refuses it as changed).
type Pending struct {
	Key    string   // the record's key (canonical)
	SHA256 string   // of the bytes read
	Sets   []string // Describe of those bytes
}

// Prepare reads and parses path as Trust does, recording nothing.
func (t *TrustStore) Prepare(path string) (*Pending, error) {
	key, err := canonical(path)
	if err != nil {
		return nil, err
	}
	data, err := readProjectFile(key)
	if err != nil {
		return nil, &FileError{File: path, Reason: readReason(err)}
	}
	f, err := Parse(key, data, ProjectConfig, Source{Kind: FromFile, File: path})
	if err != nil {
		return nil, err
	}
	return &Pending{Key: key, SHA256: hashOf(data), Sets: Describe(f)}, nil
}

// Record trusts what Prepare read.
func (t *TrustStore) Record(p *Pending, now time.Time) error {
	rec := Trusted{SHA256: p.SHA256, Trusted: now.UTC()}
	if id, ok := idOf(filepath.Dir(p.Key)); ok {
		rec.Dev, rec.Ino = id.dev, id.ino
	}
	return t.update(func(tf *trustFile) bool {
		tf.Files[p.Key] = rec
		return true
	})
}

// update reads the store, lets change edit it and, when change reports a
// change, writes it back, all under an exclusive lock on the store's
// directory. Why: two jail trust (or a trust and a revoke) at once each
// read the store and rename a new one in; unlocked, the later rename
// drops the other's change, and a lost revoke leaves trusted a file the
// user revoked (TestTrustConcurrent). Readers (Check) need no lock: the
// store is replaced whole by a rename. The lock is flock(2) on a lock
// file beside the store (trustLockName), mode 0600: it goes with the
// descriptor, also when jail is killed. Why not the directory itself
// (which left nothing beside the store): flock needs only a descriptor,
// and any local user who can read the directory (a ~/.config/jail made
// 0755 by hand) opened it, held the lock, and every jail trust, --revoke
// and --prune hung for as long as they liked; a 0600 file of the user's
// only the user opens.
func (t *TrustStore) update(change func(*trustFile) bool) error {
	if !filepath.IsAbs(t.Path) {
		_, err := t.load() // its error: no config directory
		return err
	}
	dir := filepath.Dir(t.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("trust store: %w", err)
	}
	lockPath := filepath.Join(dir, trustLockName)
	// O_NOFOLLOW: a link there is not followed to a file of another's.
	l, err := os.OpenFile(lockPath, os.O_RDONLY|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("trust store: lock %s: %w", lockPath, err)
	}
	defer l.Close()
	// Only a regular file of the user's, which no one else can open: one
	// another user made (a directory others may write) they could hold.
	if fi, err := l.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 || !ownedBySelf(fi) {
		return fmt.Errorf("trust store: lock %s: not a private regular file of yours (remove it; jail makes it again, mode 0600)", lockPath)
	}
	for {
		err = syscall.Flock(int(l.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	// A file system without flock (some NFS mounts: ENOLCK, EOPNOTSUPP)
	// goes on unlocked, as jail trust always did there: the race lost a
	// record, which the next run says; refusing would lose every one.
	if err != nil && err != syscall.ENOLCK && err != syscall.EOPNOTSUPP {
		return fmt.Errorf("trust store: lock %s: %w", lockPath, err)
	}
	tf, err := t.load()
	if err != nil {
		return err
	}
	if !change(tf) {
		return nil
	}
	return t.save(tf)
}

// trustLockName is the trust store's lock file, beside it (update).
const trustLockName = ".trust.lock"

// ownedBySelf reports whether fi is owned by this process's user.
func ownedBySelf(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// Describe lists what a parsed file sets, one value a line, in file order:
// "line 3: write = "~/x"". Values are the file's bytes, which the agent
// may have written: quoted as config show quotes them (controls, C1 and
// bidi as \u escapes), inert on a terminal. Keys are the option table's.
func Describe(f *File) []string {
	var out []string
	for _, s := range f.Settings {
		v := quote(s.Value)
		switch s.Option.Kind {
		case policy.Bool, policy.Int, policy.Uint, policy.Float:
			if !strings.ContainsFunc(s.Value, termsafe.Control) {
				v = s.Value // as TOML writes it
			}
		}
		out = append(out, fmt.Sprintf("line %d: %s = %s", s.Source.Line, s.Option.Name, v))
	}
	return out
}

// Revoke forgets path; it reports whether there was a record.
func (t *TrustStore) Revoke(path string) (bool, error) {
	key, err := canonical(path)
	if err != nil {
		// A file that is gone can still be revoked by the name it had.
		if key, err = filepath.Abs(path); err != nil {
			return false, err
		}
	}
	found := false
	err = t.update(func(tf *trustFile) bool {
		// By path or by identity, as CheckAbsent finds it: the file
		// named in its refusal, by whatever path the run reached it,
		// can be revoked.
		var k string
		if k, _, found = tf.find(key); found {
			delete(tf.Files, k)
		}
		return found
	})
	return found, err
}

// TrustedFile is one record of List.
type TrustedFile struct {
	Path string
	Trusted
	// State is one of the List states.
	State string
}

// List states: what a run in the record's directory would make of it.
const (
	StateOK         = "ok"         // the trusted bytes: read
	StateChanged    = "changed"    // other bytes: the run is refused
	StateGone       = "gone"       // no file, its directory there: refused
	StateDirGone    = "dir-gone"   // the directory is gone too (Prune)
	StateNotFile    = "not-file"   // a symlink, FIFO, device: refused
	StateUnreadable = "unreadable" // refused
)

// List returns every record, by path, with what a run would make of its
// file now (the State constants). The file is read as a run reads it
// (readProjectFile: a FIFO or a link to a device the agent made neither
// blocks nor is followed).
func (t *TrustStore) List() ([]TrustedFile, error) {
	tf, err := t.load()
	if err != nil {
		return nil, err
	}
	var out []TrustedFile
	for p, rec := range tf.Files {
		out = append(out, TrustedFile{Path: p, Trusted: rec, State: stateOf(p, rec)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func stateOf(p string, rec Trusted) string {
	data, err := readProjectFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, err := os.Stat(filepath.Dir(p)); errors.Is(err, fs.ErrNotExist) {
			return StateDirGone
		}
		return StateGone
	case errors.Is(err, errNotPlain):
		return StateNotFile
	case err != nil:
		return StateUnreadable
	case hashOf(data) != rec.SHA256:
		return StateChanged
	}
	return StateOK
}

// Prune forgets the records whose directory is gone (StateDirGone: the
// project deleted or moved away) and returns their paths. A record whose
// file alone is gone stays: its refusal (ErrGone) is what keeps a project
// whose file a command in its sandbox deleted from running without its
// restrictions, and only the user, naming it (Revoke), lets it go.
func (t *TrustStore) Prune() ([]string, error) {
	var gone []string
	err := t.update(func(tf *trustFile) bool {
		for p, rec := range tf.Files {
			if stateOf(p, rec) == StateDirGone {
				gone = append(gone, p)
				delete(tf.Files, p)
			}
		}
		return len(gone) > 0
	})
	sort.Strings(gone)
	return gone, err
}

// save writes the store atomically, private to the user.
func (t *TrustStore) save(tf *trustFile) error {
	dir := filepath.Dir(t.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("trust store: %w", err)
	}
	data, err := json.MarshalIndent(tf, "", "  ")
	if err != nil {
		return err
	}
	if err := replacefile.Write(t.Path, ".trust-*.json", append(data, '\n'), true); err != nil {
		return fmt.Errorf("trust store: %w", err)
	}
	return nil
}

// canonical is the path a record is kept under: the directory resolved (a
// symlinked workspace and its target are the same project), the file's own
// name kept. The project file itself must not be a symlink: an agent could
// otherwise point it at another project's trusted file.
func canonical(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return abs, &FileError{File: path, Reason: readReason(err)}
	}
	key := filepath.Join(dir, filepath.Base(abs))
	// Why: the store is JSON, which keeps a path that is not UTF-8 as
	// U+FFFD, another path (one the agent can make beside it): trusted
	// under it, the file itself would never be, and every run would
	// refuse it as untrusted and ask to trust it again.
	if !utf8.ValidString(key) {
		return key, &FileError{File: path, Reason: "its path is not UTF-8, which the trust store (JSON text) cannot keep as it is: rename the directory, or pass --no-project-file to run without it"}
	}
	fi, err := os.Lstat(key)
	if err != nil {
		return key, &FileError{File: path, Reason: readReason(err)}
	}
	if !fi.Mode().IsRegular() {
		return key, &FileError{File: path, Reason: "not a regular file (a symlink?): jail trusts a project file only as a plain file"}
	}
	return key, nil
}
