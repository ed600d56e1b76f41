package sentinel

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// quarantine moves entries out of the writable trees.
type quarantine struct {
	dir        string
	roots      []string
	rootFDs    map[string]int
	seq        int
	budget     int64
	maxEntries int
	used       int64
	entries    int
	pending    []pending
}

func newQuarantine(cfg Config) *quarantine {
	q := &quarantine{dir: cfg.Dir, rootFDs: map[string]int{}, budget: cfg.Budget, maxEntries: cfg.MaxEntries}
	for _, r := range cfg.Roots {
		q.roots = append(q.roots, filepath.Clean(r))
	}
	if q.budget <= 0 {
		q.budget = 64 << 20
	}
	if q.maxEntries <= 0 {
		q.maxEntries = 10000
	}
	// Numbering goes on after what the directory holds (a killed run's
	// entries, completed by the next start).
	if ents, err := os.ReadDir(q.dir); err == nil && q.dir != "" {
		for _, e := range ents {
			n := 0
			if _, err := fmt.Sscanf(e.Name(), "%d-", &n); err == nil && n > q.seq {
				q.seq = n
			}
		}
	}
	return q
}

func (q *quarantine) close() {
	for _, fd := range q.rootFDs {
		unix.Close(fd)
	}
	q.rootFDs = map[string]int{}
}

// below reports whether p lies under dir: strings.HasPrefix(p, dir+"/")
// without making dir+"/". Why: rootOf runs for every absent path the
// sentinel locates, at the start and at the exit check, against every
// root, and those concatenations (paths longer than Go's 32-byte stack
// buffer: heap) were most of locate's time under the claude profile's
// eighteen roots.
func below(p, dir string) bool {
	return len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir
}

// trimDir is strings.TrimPrefix(p, dir+"/") without making dir+"/".
func trimDir(p, dir string) string {
	if below(p, dir) {
		return p[len(dir)+1:]
	}
	return p
}

// rootOf returns the deepest root holding p.
func (q *quarantine) rootOf(p string) string {
	best := ""
	for _, r := range q.roots {
		if (p == r || below(p, r) || r == "/") && len(r) > len(best) {
			best = r
		}
	}
	return best
}

// parent opens the directory holding p, beneath its root, following no
// symlink and crossing no mount: whatever the agent did to the path, the
// supervisor (root, when started by root) acts inside that root only.
func (q *quarantine) parent(p string) (fd int, name string, err error) {
	root := q.rootOf(p)
	if root == "" || root == p {
		return -1, "", fmt.Errorf("%s is not inside a writable root", p)
	}
	rfd, ok := q.rootFDs[root]
	if !ok {
		rfd, err = unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			return -1, "", fmt.Errorf("open %s: %w", root, err)
		}
		q.rootFDs[root] = rfd
	}
	rel := trimDir(p, root)
	if root == "/" {
		rel = strings.TrimPrefix(p, "/")
	}
	dir, name := filepath.Split(rel)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		dir = "."
	}
	fd, err = unix.Openat2(rfd, dir, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV,
	})
	if err != nil {
		return -1, "", fmt.Errorf("open %s beneath %s: %w", dir, root, err)
	}
	return fd, name, nil
}

func randName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// pending is an entry renamed aside during the run, copied into the
// quarantine later (when its writer is surely done: at exit).
type pending struct {
	Tmp  string `json:"tmp"`  // its neutral name in the tree
	Dest string `json:"dest"` // where it goes in the quarantine
	Ev   Event  `json:"event"`
}

// move handles one item: it is renamed aside at once (from then on git does
// not see it) and noted as pending; ok is false when there was nothing to
// do (gone, or harmless after all).
func (q *quarantine) move(it Item, phase string) (Event, bool) {
	if strings.HasPrefix(filepath.Base(it.Path), AsidePrefix) {
		// One of ours, renamed aside and pending: a judge that looks at
		// every entry of a directory (gitguard's frozen ones) names it too.
		return Event{}, false
	}
	ev := Event{Time: time.Now().UTC(), Phase: phase, Path: it.Path, Rule: it.Rule, Reason: it.Reason, ReportOnly: it.ReportOnly}
	pfd, name, err := q.parent(it.Path)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return ev, false
		}
		ev.Error = err.Error()
		return q.record(ev), true
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstatat(pfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return ev, false // gone already
	}
	ev.Kind = kindOf(st.Mode)
	if !it.Before.IsZero() && time.Unix(st.Ctim.Sec, st.Ctim.Nsec).After(it.Before) {
		ev.ReportOnly = true
		ev.Reason += " (changed after that run ended, so perhaps by you: left as it is)"
	}
	if ev.ReportOnly {
		return q.record(ev), true
	}
	if it.Replace != nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
		// Judge the content in place first: renaming a harmless file away
		// and back would itself be an event, judged again, forever.
		if data, err := readAt(pfd, name, 1<<20); err == nil {
			if _, changed := it.Replace(data); !changed {
				return ev, false
			}
		}
	}
	// 1. Neutralize at once: a name git does not look at, same directory.
	tmp := randName(AsidePrefix)
	if err := unix.Renameat2(pfd, name, pfd, tmp, unix.RENAME_NOREPLACE); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return ev, false
		}
		ev.Error = fmt.Sprintf("rename: %v", err)
		return q.record(ev), true
	}
	// 2. A replacement (a config cut down to its harmless keys).
	if it.Replace != nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
		data, err := readAt(pfd, tmp, 1<<20)
		if err == nil {
			out, changed := it.Replace(data)
			if !changed {
				// Harmless after all: put it back unless something new is
				// there (which gets its own event).
				if unix.Renameat2(pfd, tmp, pfd, name, unix.RENAME_NOREPLACE) == nil {
					return ev, false
				}
			} else if err := writeAt(pfd, name, out, os.FileMode(st.Mode&0o777), int(st.Uid), int(st.Gid)); err == nil {
				ev.Replaced = true
			} else {
				ev.Error = fmt.Sprintf("write the harmless version: %v", err)
			}
		}
	}
	// 3. Pending: copied into the quarantine by finish.
	p := pending{Tmp: filepath.Join(filepath.Dir(it.Path), tmp), Ev: ev}
	if q.dir != "" {
		// A fresh name: the directory may hold entries of an earlier
		// Sentinel already (a killed run's, completed by the next start).
		for i := 0; i < 1_000_000; i++ {
			q.seq++
			p.Dest = filepath.Join(q.dir, fmt.Sprintf("%03d-%s", q.seq, safeName(name)))
			if _, err := os.Lstat(p.Dest); errors.Is(err, os.ErrNotExist) {
				break
			}
		}
		p.Ev.Stored = p.Dest
	} else {
		p.Ev.Left = p.Tmp
	}
	q.pending = append(q.pending, p)
	q.note(p)
	return p.Ev, true
}

func safeName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '/' || r < ' ' {
			return '_'
		}
		return r
	}, s)
	if len(s) > 100 {
		s = s[:100]
	}
	return s
}

// note keeps a pending entry in pending.jsonl: if the supervisor dies, the
// next start finishes the move (Resume).
func (q *quarantine) note(p pending) {
	if q.dir == "" || os.MkdirAll(q.dir, 0o700) != nil {
		return
	}
	b, _ := json.Marshal(p)
	f, err := os.OpenFile(filepath.Join(q.dir, "pending.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY|unix.O_NOFOLLOW, 0o600)
	if err == nil {
		f.Write(append(b, '\n'))
		f.Close()
	}
}

// finish copies every pending entry into the quarantine and removes it from
// the tree. It returns the events of entries that could not be copied (they
// stay renamed in place), or with all, every event.
func (q *quarantine) finish(all bool) []Event {
	var out []Event
	for _, p := range q.pending {
		ev, ok := q.finishOne(p)
		if !ok || all {
			out = append(out, ev)
		}
	}
	q.pending = nil
	if q.dir != "" {
		os.Remove(filepath.Join(q.dir, "pending.jsonl"))
	}
	return out
}

func (q *quarantine) finishOne(p pending) (Event, bool) {
	ev := p.Ev
	if p.Dest == "" {
		ev.Left, ev.Stored = p.Tmp, ""
		q.record(ev)
		return ev, false
	}
	pfd, name, err := q.parent(p.Tmp)
	if err == nil {
		defer unix.Close(pfd)
		var n int
		var bytes int64
		n, bytes, err = q.store(pfd, name, p.Dest)
		ev.Entries, ev.Bytes = n, bytes
		if err == nil {
			if rerr := removeAt(pfd, name, 0); rerr != nil {
				ev.Left = p.Tmp
				ev.Error = fmt.Sprintf("copied, but not removed from the tree: %v", rerr)
			}
			q.record(ev)
			return ev, ev.Error == ""
		}
	}
	if errors.Is(err, unix.ENOENT) {
		ev.Error = "gone from the tree before it could be copied"
	} else {
		ev.Error = fmt.Sprintf("not copied to the quarantine (%v): renamed in place", err)
		ev.Left = p.Tmp
	}
	ev.Stored = ""
	q.record(ev)
	return ev, false
}

func kindOf(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return "file"
	case unix.S_IFDIR:
		return "dir"
	case unix.S_IFLNK:
		return "symlink"
	}
	return "other"
}

// record appends ev to the manifest (best effort: the event is reported
// anyway).
func (q *quarantine) record(ev Event) Event {
	if q.dir != "" {
		_ = AppendManifest(q.dir, ev)
	}
	return ev
}

// manifestMu makes the appends of one process one at a time: the sentinel
// and the supervisor's other writers (the agent configuration guard's saved
// versions) share a run's manifest.
var manifestMu sync.Mutex

// AppendManifest adds ev as one line to manifest.jsonl in the quarantine
// directory dir (created 0700). It is the one writer of the manifest: what
// else the supervisor keeps in a run's quarantine is listed through it.
func AppendManifest(dir string, ev Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("quarantine manifest: %w", err)
	}
	manifestMu.Lock()
	defer manifestMu.Unlock()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("quarantine manifest: %w", err)
	}
	// O_NOFOLLOW: the directory is jail's own, but never write through a
	// link planted in place of the manifest.
	p := filepath.Join(dir, "manifest.jsonl")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("quarantine manifest: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("quarantine manifest: write %s: %w", p, err)
	}
	return nil
}

var errBudget = errors.New("quarantine budget exceeded")

// store copies entry name of directory pfd to dest in the quarantine.
func (q *quarantine) store(pfd int, name, dest string) (int, int64, error) {
	if err := os.MkdirAll(q.dir, 0o700); err != nil {
		return 0, 0, err
	}
	n0, b0 := q.entries, q.used
	if err := q.copy(pfd, name, dest, 0); err != nil {
		os.RemoveAll(dest)
		q.entries, q.used = n0, b0
		return 0, 0, err
	}
	return q.entries - n0, q.used - b0, nil
}

// copy copies an entry (file, symlink, directory tree) without following
// symlinks; files become 0600 (a hook must not stay executable).
func (q *quarantine) copy(dfd int, name, dest string, depth int) error {
	if depth > 64 {
		return errors.New("deeper than 64 levels")
	}
	if q.entries++; q.entries > q.maxEntries {
		return errBudget
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		src := os.NewFile(uintptr(fd), name)
		defer src.Close()
		out, err := os.OpenFile(dest, os.O_CREATE|os.O_EXCL|os.O_WRONLY|unix.O_NOFOLLOW, 0o600)
		if err != nil {
			return err
		}
		n, err := io.Copy(out, io.LimitReader(src, q.budget-q.used+1))
		q.used += n
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err == nil && q.used > q.budget {
			err = errBudget
		}
		return err
	case unix.S_IFLNK:
		buf := make([]byte, 4096)
		n, err := unix.Readlinkat(dfd, name, buf)
		if err != nil {
			return err
		}
		return os.Symlink(string(buf[:n]), dest)
	case unix.S_IFDIR:
		fd, err := openDir(dfd, name)
		if err != nil {
			return err
		}
		d := os.NewFile(uintptr(fd), name)
		defer d.Close()
		if err := os.Mkdir(dest, 0o700); err != nil {
			return err
		}
		names, err := d.Readdirnames(-1)
		if err != nil {
			return err
		}
		for _, n := range names {
			if err := q.copy(fd, n, filepath.Join(dest, n), depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	// A fifo, socket or device node: its name is recorded, nothing to copy.
	return os.WriteFile(dest+".not-copied", []byte(fmt.Sprintf("mode %o\n", st.Mode)), 0o600)
}

// openDir opens a directory entry for reading without following a symlink;
// a directory the agent made unreadable to its owner is opened up first
// (it is leaving the tree anyway).
func openDir(dfd int, name string) (int, error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(dfd, name, flags, 0)
	if errors.Is(err, unix.EACCES) {
		if unix.Fchmodat(dfd, name, 0o700, 0) == nil {
			fd, err = unix.Openat(dfd, name, flags, 0)
		}
	}
	return fd, err
}

// removeAt removes an entry and, for a directory, everything in it, without
// following symlinks.
func removeAt(dfd int, name string, depth int) error {
	if depth > 64 {
		return errors.New("deeper than 64 levels")
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return unix.Unlinkat(dfd, name, 0)
	}
	fd, err := openDir(dfd, name)
	if err != nil {
		return err
	}
	d := os.NewFile(uintptr(fd), name)
	names, err := d.Readdirnames(-1)
	if err == nil {
		for _, n := range names {
			if err = removeAt(fd, n, depth+1); err != nil {
				break
			}
		}
	}
	d.Close()
	if err != nil {
		return err
	}
	return unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR)
}

// readAt reads a regular file of at most max bytes, not following symlinks.
func readAt(dfd int, name string, max int64) ([]byte, error) {
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	return io.ReadAll(io.LimitReader(f, max))
}

// writeAt puts data at name unless something is there already: written to
// a fresh temporary name, owned by uid:gid (the original's owner: a root
// supervisor must not leave a root-owned config in the user's repository),
// then renamed with RENAME_NOREPLACE.
func writeAt(dfd int, name string, data []byte, mode os.FileMode, uid, gid int) error {
	if mode == 0 {
		mode = 0o644
	}
	tmp := randName(".jail-replace-")
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(mode))
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), tmp)
	if os.Geteuid() == 0 {
		err = unix.Fchown(fd, uid, gid)
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat2(dfd, tmp, dfd, name, unix.RENAME_NOREPLACE)
	}
	if err != nil {
		unix.Unlinkat(dfd, tmp, 0)
	}
	return err
}
