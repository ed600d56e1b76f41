package agentcfg

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	hbeat "github.com/jail-sandbox/jail/internal/heartbeat"
	"github.com/jail-sandbox/jail/internal/jsonenc"
	"github.com/jail-sandbox/jail/procstat"
)

// kind is what is at a guarded path.
type kind uint8

const (
	kAbsent kind = iota
	kRegular
	kSymlink
	kOther     // a directory, FIFO, socket or device where the file should be
	kBadParent // a directory on the way is a symlink
	kTooBig
)

// fstate is the state of a guarded path, read without following symlinks.
type fstate struct {
	Kind kind   `json:"kind"`
	Data []byte `json:"data,omitempty"`
	// Link: the symlink's text (kSymlink, kBadParent).
	Link string `json:"link,omitempty"`
	// Comp: kBadParent: the directory (relative to the root) that is a
	// symlink; kOther: what the thing is.
	Comp  string `json:"comp,omitempty"`
	Mode  uint32 `json:"mode,omitempty"`
	UID   int    `json:"uid"`
	GID   int    `json:"gid"`
	Ctime int64  `json:"-"`
}

func (s fstate) version() Version { return Version{Exists: s.Kind == kRegular, Data: s.Data} }

func (s fstate) same(o fstate) bool {
	return s.Kind == o.Kind && s.Link == o.Link && s.Comp == o.Comp && bytes.Equal(s.Data, o.Data)
}

// loc holds the directory of a guarded path, opened without following any
// symlink below the root, so that what jail writes lands there even if the
// agent swaps a directory for a symlink meanwhile.
type loc struct {
	dirfd int
	name  string
	// badfd/badname: for kBadParent, the directory holding the symlink.
	badfd   int
	badname string
	// missing: directories below dirfd that do not exist (the file's
	// directory among them); made when the file must come back.
	missing []string
}

func (l *loc) close() {
	if l.dirfd > 0 {
		unix.Close(l.dirfd)
	}
	if l.badfd > 0 {
		unix.Close(l.badfd)
	}
}

// errRootGone: the writable root itself no longer exists on the host (a
// workspace deleted since): there is nothing left to guard.
var errRootGone = errors.New("agentcfg: the writable root is gone")

// readState reads what is at t.Path. Nothing below t.Root is followed: the
// agent controls every name there.
// prev: what the file held at the last look (nil: unknown); a file that
// still holds it is compared as it is read, without a buffer of its size.
func readState(t Target, max int64, prev []byte) (fstate, *loc, error) {
	st, l, done, err := locate(t)
	if done || err != nil {
		return st, l, err
	}
	st, err = statAt(l.dirfd, l.name, max, prev)
	return st, l, err
}

// locate opens the directory of t.Path as readState does. done: the path's
// state is known already (a directory on the way is missing or a symlink),
// and st is it; otherwise l.dirfd and l.name name the file.
func locate(t Target) (st fstate, l *loc, done bool, err error) {
	l = &loc{dirfd: -1, badfd: -1}
	if t.InPlace {
		// A bind mount inside: the agent cannot replace it, and its host
		// directory is out of the agent's reach.
		dir, err := unix.Open(filepath.Dir(t.Path), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			return fstate{}, l, true, errRootGone
		}
		if err != nil {
			return fstate{}, l, true, fmt.Errorf("open %s: %w", filepath.Dir(t.Path), err)
		}
		l.dirfd, l.name = dir, filepath.Base(t.Path)
		return fstate{}, l, false, nil
	}
	rel, err := filepath.Rel(t.Root, t.Path)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return fstate{}, l, true, fmt.Errorf("guarded path %s is not under %s", t.Path, t.Root)
	}
	fd, err := unix.Open(t.Root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return fstate{}, l, true, errRootGone
	}
	if err != nil {
		return fstate{}, l, true, fmt.Errorf("open %s: %w", t.Root, err)
	}
	parts := strings.Split(rel, "/")
	for i, c := range parts[:len(parts)-1] {
		next, err := unix.Openat(fd, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
			fd = next
			continue
		}
		if errors.Is(err, unix.ENOENT) {
			l.dirfd, l.name, l.missing = fd, parts[len(parts)-1], parts[i:len(parts)-1]
			return fstate{Kind: kAbsent}, l, true, nil
		}
		var st unix.Stat_t
		if unix.Fstatat(fd, c, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			link := readlinkAt(fd, c)
			l.badfd, l.badname = fd, c
			return fstate{Kind: kBadParent, Comp: strings.Join(parts[:i+1], "/"), Link: link}, l, true, nil
		}
		unix.Close(fd)
		if !errors.Is(err, unix.ENOTDIR) {
			// Not "absent": a directory the agent made unsearchable
			// (chmod) holds its version all the same, and taken for a
			// deleted file the guard wrote nowhere and settled.
			return fstate{}, l, true, fmt.Errorf("open %s: %w", filepath.Join(t.Root, strings.Join(parts[:i+1], "/")), err)
		}
		return fstate{Kind: kAbsent}, l, true, nil // a file in the way: the path cannot be read by anyone
	}
	l.dirfd, l.name = fd, parts[len(parts)-1]
	return fstate{}, l, false, nil
}

func readlinkAt(dirfd int, name string) string {
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(dirfd, name, buf)
	if err != nil {
		return ""
	}
	return string(buf[:n])
}

func statAt(dirfd int, name string, max int64, prev []byte) (fstate, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return fstate{Kind: kAbsent}, nil
		}
		return fstate{}, fmt.Errorf("stat %s: %w", name, err)
	}
	s := fstate{Mode: st.Mode, UID: int(st.Uid), GID: int(st.Gid), Ctime: st.Ctim.Nano()}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		s.Kind, s.Link = kSymlink, readlinkAt(dirfd, name)
		return s, nil
	case unix.S_IFREG:
	default:
		s.Kind, s.Comp = kOther, describeMode(st.Mode)
		return s, nil
	}
	// O_NONBLOCK: a FIFO swapped in after the stat must not hang the
	// supervisor; O_NOFOLLOW: nor a symlink.
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return fstate{Kind: kAbsent}, nil
		}
		if errors.Is(err, unix.ELOOP) {
			return statAt(dirfd, name, max, prev)
		}
		return fstate{}, fmt.Errorf("open %s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		s.Kind, s.Comp = kOther, describeMode(st.Mode)
		return s, nil
	}
	s.Mode, s.UID, s.GID, s.Ctime = st.Mode, int(st.Uid), int(st.Gid), st.Ctim.Nano()
	if st.Size > max {
		s.Kind = kTooBig
		return s, nil
	}
	data, err := readAll(f, st.Size, max, prev)
	if err != nil {
		return fstate{}, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(data)) > max {
		s.Kind = kTooBig
		return s, nil
	}
	s.Kind, s.Data = kRegular, data
	return s, nil
}

// readAll reads f, expected to hold size bytes, up to max+1 bytes. One
// buffer of the stat's size (and a byte to see growth) instead of
// io.ReadAll's doublings: with a ~10 MB ~/.claude.json those cost a dozen
// allocations, their clearing and page faults on every check (issue 16).
//
// With prev of the file's size, the file is first compared with prev as it
// is read, in small pieces: a file that still holds prev (the exit check,
// an event for another file of the directory) returns prev itself, and
// costs no buffer of its size (fresh memory cost more than the read).
func readAll(f *os.File, size, max int64, prev []byte) ([]byte, error) {
	if prev != nil && int64(len(prev)) == size && size <= max {
		same, err := readSame(f, prev)
		if err != nil {
			return nil, err
		}
		if same {
			return prev, nil
		}
		// It differs: read it all again from the start.
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
	}
	n := size + 1
	if n > max+1 {
		n = max + 1
	}
	if n < 512 {
		n = 512
	}
	buf := make([]byte, 0, n)
	prefault(buf[:cap(buf)])
	for int64(len(buf)) <= max {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grown: the file is being written
		}
		m, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}

var cmpBufs = sync.Pool{New: func() any { b := make([]byte, 128<<10); return &b }}

// readSame reads f, comparing it with prev: whether it holds exactly prev.
func readSame(f *os.File, prev []byte) (bool, error) {
	bp := cmpBufs.Get().(*[]byte)
	defer cmpBufs.Put(bp)
	buf := *bp
	off := 0
	for {
		m, err := f.Read(buf)
		if m > 0 {
			if off+m > len(prev) || !bytes.Equal(buf[:m], prev[off:off+m]) {
				return false, nil
			}
			off += m
		}
		if err == io.EOF {
			return off == len(prev), nil
		}
		if err != nil {
			return false, err
		}
	}
}

// prefault asks the kernel for a big buffer's pages in one call (and in
// huge pages where it can), before the read fills it: faulted in one 4 KiB
// page at a time, a 10 MB read cost 50-60 ms in a VM instead of 3 (issue
// 16). Only advice: where it is refused, the read faults them in as before.
func prefault(b []byte) {
	if len(b) < 1<<20 {
		return
	}
	// madvise needs page-aligned bounds: the pages wholly inside b.
	const page = 4096
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	off := int((page - p%page) % page)
	end := off + (len(b)-off)/page*page
	if end <= off {
		return
	}
	r := b[off:end]
	_ = unix.Madvise(r, unix.MADV_HUGEPAGE)
	_ = unix.Madvise(r, unix.MADV_POPULATE_WRITE)
}

func describeMode(m uint32) string {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "a device"
	}
	return "not a regular file"
}

// gtarget is a target with its snapshot and last accepted state.
type gtarget struct {
	Target
	snap  fstate
	last  fstate
	saved [32]byte // hash of the last quarantined content
	timer *time.Timer
	first time.Time // first unhandled write of the pending early check
	wd    int
	// An unreadable version seen while the sandbox runs: what it was, since
	// when, and the recheck.
	bad      fstate // kind, ctime and data of that version
	badSince time.Time
	recheck  *time.Timer
	// unsettled: jail's last write failed, and last is what was there
	// then, accepted only so that every event does not retry the write
	// while the sandbox runs. A final check (no writer left) judges it
	// again: the agent can make a write fail for a while (chmod a-w of
	// the directory, then +w), and a failure must not settle its version.
	unsettled bool
	// m merges against the snapshot, parsed at the first check and kept:
	// Claude Code rewrites a ~/.claude.json of megabytes many times a
	// session (issue 16).
	m *merger
}

func (t *gtarget) merge(ctx Context, cur Version) Result {
	if t.m == nil {
		t.m = newMerger(t.File, ctx, t.snap.version())
	}
	return t.m.merge(cur)
}

// Guard watches the targets while a sandbox runs.
type Guard struct {
	opts    Options
	mu      sync.Mutex
	targets []*gtarget
	seq     int
	record  string
	// sidecars: the snapshots written beside the record.
	sidecars []string
	w        *watcher
	hb       *hbeat.Beat // touches the record: Recover's "last seen alive"
	stopOnce sync.Once
	closed   bool
}

// New reads every target's snapshot and writes the record that lets the
// next start finish the job if this supervisor is killed. A target that
// cannot be guarded (a directory on the way is a symlink, it cannot be
// opened, it is not a regular file or is too large) fails New, and skipped
// says why: the plan masked or resolved what it saw (Unguardable), so such
// a path changed since, and left out it stayed the agent's to write (a
// concurrent run swapped a FIFO in between the plan and New, session 18).
// ErrUnguarded wraps that error.
func New(targets []Target, o Options) (g *Guard, skipped []string, err error) {
	if o.MaxSize <= 0 {
		o.MaxSize = MaxSize
	}
	if o.Report == nil {
		o.Report = func(Event) {}
	}
	g = &Guard{opts: o}
	for _, t := range targets {
		st, l, err := readState(t, o.MaxSize, nil)
		l.close()
		switch {
		case errors.Is(err, errRootGone):
			continue
		case err != nil:
			skipped = append(skipped, fmt.Sprintf("%s: %v", t.Path, err))
			continue
		case st.Kind == kBadParent:
			skipped = append(skipped, fmt.Sprintf("%s: %s is a symlink", t.Path, filepath.Join(t.Root, st.Comp)))
			continue
		case st.Kind == kOther:
			skipped = append(skipped, fmt.Sprintf("%s: %s", t.Path, st.Comp))
			continue
		case st.Kind == kTooBig:
			skipped = append(skipped, fmt.Sprintf("%s: larger than %d bytes", t.Path, o.MaxSize))
			continue
		}
		g.targets = append(g.targets, &gtarget{Target: t, snap: st, last: st, wd: -1})
	}
	if len(skipped) > 0 {
		// Why: fail closed. Left out, the path is the agent's to write,
		// and a settings file of its own there (hooks) outlives the run.
		return nil, skipped, fmt.Errorf("%w: %s", ErrUnguarded, strings.Join(skipped, "; "))
	}
	if err := g.writeRecord(); err != nil {
		return nil, skipped, err
	}
	return g, skipped, nil
}

// Targets returns the guarded targets (those New did not skip).
func (g *Guard) Targets() []Target {
	out := make([]Target, len(g.targets))
	for i, t := range g.targets {
		out[i] = t.Target
	}
	return out
}

// record is what a running guard leaves for the next start.
type record struct {
	ID        string      `json:"id"`
	Pid       int         `json:"pid"`
	StartTick uint64      `json:"start_tick"`
	Context   Context     `json:"context"`
	Targets   []recTarget `json:"targets"`
}

type recTarget struct {
	Target Target `json:"target"`
	Snap   fstate `json:"snapshot"`
	// DataFile: a snapshot larger than inlineMax is not in Snap.Data but in
	// this file of the record's directory, as it was read (DataSize bytes).
	DataFile string `json:"data_file,omitempty"`
	DataSize int    `json:"data_size,omitempty"`
	// Unsettled: the run's last check could not put this target back (or
	// could not look): what is there is the agent's version until the
	// next start does, whenever it was touched last.
	Unsettled bool `json:"unsettled,omitempty"`
}

// inlineMax: larger snapshots are written beside the record, raw. Encoded
// in the record's JSON (base64), a 10 MB ~/.claude.json cost the start half
// a second and more (issue 16).
const inlineMax = 64 << 10

// Warm builds encoding/json's encoder of the record ahead of New, where
// it is not generated (without zjson_linux.go): it is made by reflection
// over the record's types at their first use, once per process (about a
// millisecond), and New runs on the path to the agent's start. Safe from
// any goroutine; it writes nothing.
func Warm() {
	if recordEncoder == nil {
		_, _ = json.Marshal(record{Targets: []recTarget{{}}})
	}
}

// recordEncoder is zjson_linux.go's encoder of a record (package
// jsongen), nil without the file; generatedJSON the sha256 of the source
// it was generated as, which TestJSONGenerated compares with the types'.
var (
	recordEncoder func([]byte, *record) ([]byte, error)
	generatedJSON string
)

// marshalRecord is json.Marshal's bytes of rec, by the generated encoder
// when it is there: written on the path from init's spec to the go, where
// encoding/json would first build the record's encoders by reflection.
func marshalRecord(rec *record) ([]byte, error) {
	size := 512
	for _, t := range rec.Targets {
		size += 512 + len(t.Snap.Data)*4/3
	}
	return jsonenc.Marshal(recordEncoder, size, rec)
}

func (g *Guard) writeRecord() error {
	if len(g.targets) == 0 {
		return nil
	}
	if err := os.MkdirAll(g.opts.Dir, 0o700); err != nil {
		return fmt.Errorf("agent configuration guard: %w", err)
	}
	rec := record{ID: g.opts.ID, Pid: os.Getpid(), StartTick: procstat.SelfStartTick(), Context: g.opts.Context}
	for i, t := range g.targets {
		rt := recTarget{Target: t.Target, Snap: t.snap}
		if len(t.snap.Data) > inlineMax {
			// Written before the record that names it: a record on disk
			// always has its snapshots whole.
			rt.DataFile, rt.DataSize = fmt.Sprintf("%s.%d.snap", g.opts.ID, i), len(t.snap.Data)
			rt.Snap.Data = nil
			p := filepath.Join(g.opts.Dir, rt.DataFile)
			if err := writeNew(p, t.snap.Data); err != nil {
				return fmt.Errorf("agent configuration guard: %w", err)
			}
			g.sidecars = append(g.sidecars, p)
		}
		rec.Targets = append(rec.Targets, rt)
	}
	b, err := marshalRecord(&rec)
	if err != nil {
		return fmt.Errorf("agent configuration guard: %w", err)
	}
	g.record = filepath.Join(g.opts.Dir, g.opts.ID+".json")
	if err := writeNew(g.record, b); err != nil {
		return fmt.Errorf("agent configuration guard: %w", err)
	}
	return nil
}

// orphanAge: a snapshot file with no record naming it is a killed run's
// once it is this old (a live supervisor writes the record right after).
const orphanAge = time.Minute

// removeRecord removes the record, then the snapshots beside it.
func removeRecord(record string, sidecars []string) {
	os.Remove(record)
	for _, p := range sidecars {
		os.Remove(p)
	}
}

// recSnapshot returns a record's snapshot of rt, read back from beside the
// record when it is not inline; false when that file is not whole.
func recSnapshot(dir string, rt recTarget) (fstate, string, bool) {
	if rt.DataFile == "" {
		return rt.Snap, "", true
	}
	// The name is jail's own (the state directory is out of the sandbox's
	// reach); a name with a slash is not.
	if strings.ContainsRune(rt.DataFile, '/') || rt.DataFile == "." || rt.DataFile == ".." {
		return fstate{}, "", false
	}
	p := filepath.Join(dir, rt.DataFile)
	b, err := os.ReadFile(p)
	if err != nil || len(b) != rt.DataSize {
		return fstate{}, p, false
	}
	s := rt.Snap
	s.Data = b
	return s, p, true
}

// writeNew writes a file of jail's own, atomically, mode 0600.
func writeNew(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Watch starts watching the targets with inotify. Without it (an error),
// the targets are still checked by Close.
func (g *Guard) Watch() error {
	if len(g.targets) == 0 {
		return nil
	}
	if g.record != "" {
		g.hb = hbeat.Start(g.record, heartbeat)
	}
	w, err := newWatcher(g)
	if err != nil {
		return err
	}
	g.w = w
	return nil
}

// StopWatching stops the watch and the record's heartbeat, and waits for
// them: the sandbox has ended, nothing is left to react to. Close's last
// check is still Close's. A caller may stop them ahead of Close (and
// beside other work): safe to call more than once, and with Close.
func (g *Guard) StopWatching() {
	g.stopOnce.Do(func() {
		if g.w != nil {
			g.w.stop() // its descriptor is closed by Close (or CloseLater's caller)
		}
		g.hb.Stop()
	})
}

// Unwatch removes every watch and wakes the watch loop, without waiting
// for it or for the heartbeat (StopWatching, Close do): the run's end
// calls it first thing on init's exit message, so that the kernel's mark
// reaper, which the descriptor's close waits for unless it has run, starts
// as soon as it can (see sentinel's Unwatch). What the loop has not
// handled is Close's last check's. Safe to call more than once, and with
// StopWatching and Close.
func (g *Guard) Unwatch() {
	if g.w != nil {
		g.w.unwatch()
	}
}

// Close stops watching and checks every target one last time (the sandbox
// has ended: no writer is left), then removes the record and closes the
// watch's descriptor.
func (g *Guard) Close() {
	g.CloseLater()()
}

// CloseLater is Close but for the watch's inotify descriptor: it returns
// that close, for the caller to run later, off its critical path (safe to
// call more than once, from any goroutine). StopWatching removed every
// watch: once the kernel's mark reaper has run on its own (1 jiffy, then
// an SRCU grace period, in a kworker) the close costs ~0.03 ms; closing at
// once waits for it.
func (g *Guard) CloseLater() (closeWatch func()) {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return func() {}
	}
	g.closed = true
	g.mu.Unlock()
	g.StopWatching()
	closeWatch = func() {}
	if w := g.w; w != nil {
		var once sync.Once
		closeWatch = func() { once.Do(w.release) }
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, t := range g.targets {
		if t.timer != nil {
			t.timer.Stop()
		}
		if t.recheck != nil {
			t.recheck.Stop()
		}
		g.checkLocked(t, true, false)
		g.readable(t, false)
	}
	if g.record != "" {
		g.keepOrRemoveRecord()
	}
	return closeWatch
}

// readable is the last check's part for modes (readableAgain): what the
// agent left unreadable on t's path is readable by its owner again, and
// said.
func (g *Guard) readable(t *gtarget, recovered bool) {
	if changed := readableAgain(t.Target, t.snap); len(changed) > 0 {
		g.opts.Report(Event{Target: t.Target, Keys: changed, Action: "readable", Recovered: recovered})
	}
}

// keepOrRemoveRecord ends the record after the last check: removed when
// every target is settled; otherwise it stays, naming only the unsettled
// targets, for the next start (Recover) to put back. Removed whatever the
// last check found, a restore the agent made fail (a full disk, a
// directory it locked) left its hook on the host for the user's next run
// of the agent outside jail, with nothing left to say so.
func (g *Guard) keepOrRemoveRecord() {
	var keep []recTarget
	var sidecars []string
	for i, t := range g.targets {
		if !t.unsettled {
			continue
		}
		rt := recTarget{Target: t.Target, Snap: t.snap, Unsettled: true}
		if len(t.snap.Data) > inlineMax {
			rt.DataFile, rt.DataSize = fmt.Sprintf("%s.%d.snap", g.opts.ID, i), len(t.snap.Data)
			rt.Snap.Data = nil
			sidecars = append(sidecars, filepath.Join(g.opts.Dir, rt.DataFile))
		}
		keep = append(keep, rt)
	}
	if len(keep) == 0 {
		removeRecord(g.record, g.sidecars)
		return
	}
	// No supervisor is on the job any more (pid 0): the next start takes
	// it at once.
	rec := record{ID: g.opts.ID, Context: g.opts.Context, Targets: keep}
	if err := rewriteRecord(g.record, rec, g.sidecars, sidecars); err != nil {
		g.opts.Report(Event{Target: keep[0].Target, Err: fmt.Errorf("agent configuration guard: keep the record for the next start: %w", err)})
	}
}

// rewriteRecord replaces the record at path with rec, whose snapshots
// beside it are keep (of the old ones, old): the others are removed.
func rewriteRecord(path string, rec record, old, keep []string) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := writeNew(path, b); err != nil {
		return err
	}
	for _, p := range old {
		if !slices.Contains(keep, p) {
			os.Remove(p)
		}
	}
	return nil
}

// CheckNow checks every target at once (tests, and a watcher overflow).
func (g *Guard) CheckNow() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, t := range g.targets {
		g.checkLocked(t, true, false)
	}
}

// check is called by the watcher while the sandbox runs.
func (g *Guard) check(t *gtarget) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return
	}
	g.checkLocked(t, false, false)
}

// checkLocked compares the target with its snapshot and puts back what must
// be. Only the snapshot's protected keys come back; the agent's other changes
// stay. final: no writer is left (exit, next start); otherwise a document
// that does not parse may be a write in progress (Claude Code rewrites
// ~/.claude.json in place, truncating first, many times a session) and is
// put back only once it has stayed so for Stale.
func (g *Guard) checkLocked(t *gtarget, final, recovered bool) {
	if os.Geteuid() == 0 {
		g.checkOnce(t, final, recovered, g.opts.Report)
		return
	}
	// A user's supervisor: the agent, as that user, can take the user's
	// own access away from the file or a directory on its way (chmod a-w
	// ~/.claude, chmod 000 settings.json) and keep it so until the end, and
	// the guard's read or write fails. The supervisor owns what the agent
	// can chmod: it gives itself the access back for the check and tries
	// once more (unlockPath), then puts the agent's modes back.
	last, bad, unsettled := t.last, t.bad, t.unsettled
	var held []Event
	denied := false
	g.checkOnce(t, final, recovered, func(ev Event) {
		if ev.Err != nil && (errors.Is(ev.Err, unix.EACCES) || errors.Is(ev.Err, unix.EPERM)) {
			denied = true
		}
		held = append(held, ev)
	})
	if !denied {
		for _, ev := range held {
			g.opts.Report(ev)
		}
		return
	}
	// The failed attempt's other events stand (what it did is done); its
	// failures are the retry's to report, or not. Its copy of the agent's
	// version is the retry's (saved once).
	saved := ""
	for _, ev := range held {
		if ev.Err == nil {
			g.opts.Report(ev)
		} else if ev.Saved != "" {
			saved = ev.Saved
		}
	}
	undo := unlockPath(t.Target)
	defer undo()
	if afterUnlock != nil {
		afterUnlock(t.Target)
	}
	t.last, t.bad, t.unsettled = last, bad, unsettled
	g.checkOnce(t, final, recovered, func(ev Event) {
		if ev.Err != nil && !g.closed && !recovered && (errors.Is(ev.Err, unix.EACCES) || errors.Is(ev.Err, unix.EPERM)) {
			// Refused again while the sandbox runs: the agent, still
			// running, took the access away again between the give and
			// the write (its chmod races ours). Not said: the target is
			// unsettled (checkOnce), so the last check judges it again,
			// with the agent gone, and says what it could not do then.
			return
		}
		if ev.Saved == "" && saved != "" {
			ev.Saved, saved = saved, ""
		}
		g.opts.Report(ev)
	})
}

// checkOnce is checkLocked's one attempt, reporting to report.
func (g *Guard) checkOnce(t *gtarget, final, recovered bool, reportTo func(Event)) {
	report := func(ev Event) {
		if ev.Err != nil {
			// Whatever failed, the path holds what jail could not judge
			// or put back: not settled (Close keeps the record for it).
			t.unsettled = true
			if g.closed || recovered {
				// Close's last check, or a start's: the record stays.
				ev.Err = fmt.Errorf("%w (the next jail start tries again)", ev.Err)
			}
		}
		reportTo(ev)
	}
	var prev []byte
	if t.last.Kind == kRegular {
		prev = t.last.Data
	}
	st, l, err := readState(t.Target, g.opts.MaxSize, prev)
	defer l.close()
	if errors.Is(err, errRootGone) {
		return
	}
	if err != nil {
		report(Event{Target: t.Target, Err: err, Recovered: recovered})
		return
	}
	if st.same(t.last) && !(final && t.unsettled) {
		return
	}
	ev := Event{Target: t.Target, Action: "restored", Recovered: recovered}
	switch {
	case st.Kind == kBadParent:
		// A directory on the way was swapped for a symlink: the loader would
		// follow it to a file of the agent's choice. The symlink goes.
		ev.Whole, ev.Keys = true, []string{fmt.Sprintf("%s was replaced by a symlink to %s", filepath.Join(t.Root, st.Comp), st.Link)}
		ev.Saved = g.save(t, []byte(fmt.Sprintf("%s: symlink to %s\n", filepath.Join(t.Root, st.Comp), st.Link)))
		if err := unix.Unlinkat(l.badfd, l.badname, 0); err != nil {
			ev.Err = fmt.Errorf("remove symlink %s: %w", filepath.Join(t.Root, st.Comp), err)
		}
		report(ev)
		if ev.Err == nil {
			g.checkOnce(t, final, recovered, reportTo)
		}
		return
	case t.snap.Kind == kSymlink:
		if st.Kind == kSymlink && st.Link == t.snap.Link {
			t.last, t.unsettled = st, false
			return
		}
		ev.Whole, ev.Keys = true, []string{"the symlink it was at start was replaced"}
	case st.Kind == kSymlink || st.Kind == kOther:
		what := st.Comp
		if st.Kind == kSymlink {
			what = "a symlink to " + st.Link
		}
		ev.Whole, ev.Keys = true, []string{"it was replaced by " + what}
	case st.Kind == kTooBig:
		if !final && !g.stale(t, st) {
			return
		}
		ev.Whole, ev.Keys = true, []string{fmt.Sprintf("the agent's version is larger than %d bytes", g.opts.MaxSize)}
	default:
		res := t.merge(g.opts.Context, st.version())
		if !res.Unreadable {
			t.badSince = time.Time{}
		}
		if !res.Changed() {
			t.last, t.unsettled = st, false
			return
		}
		if res.Unreadable && !final && (len(st.Data) == 0 || !g.stale(t, st)) {
			// A writer may be half-way: look again later. An empty file
			// runs nothing and is where writers start (Gemini CLI
			// creates trustedFolders.json empty, takes a lock on it,
			// then renames its new version over it): left to the last
			// check.
			return
		}
		ev.Keys, ev.Whole = res.Keys, res.Whole
		switch {
		case res.Remove:
			ev.Action = "removed"
			if err := unix.Unlinkat(l.dirfd, l.name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
				ev.Err = fmt.Errorf("remove %s: %w", t.Path, err)
			}
		default:
			if t.snap.Kind == kAbsent && !res.Whole {
				ev.Action = "stripped"
			}
			perm, uid, gid := permOf(st, t.snap)
			if err := g.write(t, l, res.Out, perm, uid, gid); err != nil {
				ev.Err = err
				// The host's version cannot be written (a disk the
				// agent filled): the agent's must not stay where the
				// loader reads it until the next start puts the host's
				// back (the user may run the agent outside jail
				// first). Renamed, not removed: nothing of it is lost,
				// and a rename needs no new space. A file that is a
				// bind mount in the sandbox keeps its name (the mount
				// holds the inode, and its write is in place).
				if !t.InPlace && st.Kind == kRegular {
					if aside, aerr := g.renameAside(l); aerr == nil {
						ev.Err = fmt.Errorf("%w; the agent's version was moved out of the way, to %s", err, filepath.Join(filepath.Dir(t.Path), aside))
					}
				}
			}
		}
		// Saved after the write: the host's keys come back first.
		if st.Kind == kRegular {
			ev.Saved = g.save(t, st.Data)
		}
		want := fstate{Kind: kRegular, Data: res.Out}
		if res.Remove {
			want = fstate{Kind: kAbsent}
		}
		g.settle(t, l, want, ev.Err == nil)
		report(ev)
		return
	}
	// What is there is not a file jail can merge: save what can be saved,
	// move it out of the way, and put the snapshot back whole.
	switch st.Kind {
	case kRegular:
		ev.Saved = g.save(t, st.Data)
	case kSymlink:
		ev.Saved = g.save(t, []byte("symlink to "+st.Link+"\n"))
	}
	if st.Kind != kAbsent {
		if err := g.moveAside(t, l, st); err != nil {
			ev.Err = err
			report(ev)
			return
		}
	}
	switch t.snap.Kind {
	case kRegular:
		perm, uid, gid := permOf(fstate{}, t.snap)
		ev.Err = g.write(t, l, t.snap.Data, perm, uid, gid)
	case kSymlink:
		if err := unix.Symlinkat(t.snap.Link, l.dirfd, l.name); err != nil {
			ev.Err = fmt.Errorf("restore symlink %s: %w", t.Path, err)
		} else if os.Geteuid() == 0 {
			_ = unix.Fchownat(l.dirfd, l.name, t.snap.UID, t.snap.GID, unix.AT_SYMLINK_NOFOLLOW)
		}
	default:
		ev.Action = "removed"
	}
	want := fstate{Kind: kAbsent}
	if t.snap.Kind == kRegular || t.snap.Kind == kSymlink {
		want = fstate{Kind: t.snap.Kind, Link: t.snap.Link, Data: t.snap.Data}
	}
	g.settle(t, l, want, ev.Err == nil)
	report(ev)
}

// stale reports whether an unreadable version has stayed the same for
// Stale; until then it arranges to look again.
func (g *Guard) stale(t *gtarget, st fstate) bool {
	// Compared, not hashed: a copy and a SHA-256 of a 10 MB
	// ~/.claude.json at every look at a half-written one cost more than
	// the look (issue 16).
	now := time.Now()
	if t.bad.Kind != st.Kind || t.bad.Ctime != st.Ctime || !bytes.Equal(t.bad.Data, st.Data) || t.badSince.IsZero() {
		t.bad, t.badSince = fstate{Kind: st.Kind, Ctime: st.Ctime, Data: st.Data}, now
	} else if now.Sub(t.badSince) >= Stale {
		return true
	}
	if t.recheck != nil {
		t.recheck.Stop()
	}
	t.recheck = time.AfterFunc(Stale-now.Sub(t.badSince)+time.Millisecond, func() { g.check(t) })
	return false
}

// settle records what is at the path now as accepted: jail's own write
// (want), so that the write's own event is no change. Anything else there
// is a write of the agent that raced jail's (between jail's write and this
// look): it is not accepted (recorded, it would be "no change" for every
// later check, Close's last one too, and its hook would stay), want is
// recorded instead and the next check (its event, or Close's) judges it.
// After a failed write (ok false) what is there is accepted while the
// sandbox runs (no retry at every event) but stays unsettled: the next
// final check (Close's) judges it again.
func (g *Guard) settle(t *gtarget, l *loc, want fstate, ok bool) {
	t.unsettled = !ok
	st, err := statAt(l.dirfd, l.name, g.opts.MaxSize, nil)
	switch {
	case err == nil && (!ok || st.same(want)):
		t.last = st
	case ok:
		t.last = want
	}
}

// permOf picks the mode and owner for a file jail writes: the snapshot's
// when there was one, else the agent's without execute or set-id bits.
func permOf(cur, snap fstate) (uint32, int, int) {
	if snap.Kind == kRegular {
		return snap.Mode & 0o777, snap.UID, snap.GID
	}
	if cur.Kind == kRegular {
		return cur.Mode & 0o666, cur.UID, cur.GID
	}
	return 0o600, os.Geteuid(), os.Getegid()
}

// moveAside takes what is at the path out of the loader's way: a file or
// symlink is removed (saved already), anything else is renamed to a name no
// loader reads, next to it.
func (g *Guard) moveAside(t *gtarget, l *loc, st fstate) error {
	if st.Kind == kRegular || st.Kind == kSymlink || st.Kind == kTooBig {
		if err := unix.Unlinkat(l.dirfd, l.name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("remove %s: %w", t.Path, err)
		}
		return nil
	}
	if _, err := g.renameAside(l); err != nil {
		return fmt.Errorf("move %s aside: %w", t.Path, err)
	}
	return nil
}

// afterUnlock, set by tests only, runs between unlockPath and the retry:
// where the agent, still running, takes the access away again.
var afterUnlock func(Target)

// writeFault, set by tests only, fails the writes into a directory as a
// full disk does (which the agent can bring about; a test cannot).
var writeFault func(dir string) error

// renameAside renames what is at the path to a name no loader reads, next
// to it, and returns that name.
// An aside never replaces another: the next start's retry runs under the
// same run's id with its counter back at zero, and a version moved aside
// earlier (the agent's, kept for the user to see) must not be lost.
func (g *Guard) renameAside(l *loc) (string, error) {
	for range 1000 {
		g.seq++
		aside := fmt.Sprintf(".%s.jail-%s-%d", l.name, g.opts.ID, g.seq)
		err := unix.Renameat2(l.dirfd, l.name, l.dirfd, aside, unix.RENAME_NOREPLACE)
		if errors.Is(err, unix.EINVAL) {
			// A file system without RENAME_NOREPLACE: look first. The
			// agent could plant the name in between; what it loses is
			// its own file, not a version kept aside.
			var st unix.Stat_t
			if unix.Fstatat(l.dirfd, aside, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
				continue
			}
			err = unix.Renameat(l.dirfd, l.name, l.dirfd, aside)
		}
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return "", err
		}
		return aside, nil
	}
	return "", fmt.Errorf("move %s aside: 1000 names taken: %w", l.name, unix.EEXIST)
}

// write replaces the file's content: a new file renamed over it (readers
// see the old or the new version, never a mix), or, for a file that is a
// bind mount in the sandbox, in place.
func (g *Guard) write(t *gtarget, l *loc, data []byte, perm uint32, uid, gid int) error {
	if writeFault != nil {
		if err := writeFault(filepath.Dir(t.Path)); err != nil {
			return fmt.Errorf("write %s: %w", t.Path, err)
		}
	}
	for len(l.missing) > 0 {
		// The agent removed the directories: they come back with the file.
		c := l.missing[0]
		if err := unix.Mkdirat(l.dirfd, c, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("write %s: make %s: %w", t.Path, c, err)
		}
		if os.Geteuid() == 0 {
			_ = unix.Fchownat(l.dirfd, c, uid, gid, unix.AT_SYMLINK_NOFOLLOW)
		}
		next, err := unix.Openat(l.dirfd, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("write %s: %w", t.Path, err)
		}
		unix.Close(l.dirfd)
		l.dirfd, l.missing = next, l.missing[1:]
	}
	if !t.InPlace {
		g.seq++
		// Unique across runs: a supervisor killed mid-write leaves its
		// temporary file behind (the next start removes it).
		tmp := fmt.Sprintf(".%s.jail-tmp-%s-%d-%d", l.name, g.opts.ID, os.Getpid(), g.seq)
		fd, err := unix.Openat(l.dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
		if err != nil {
			return fmt.Errorf("write %s: %w", t.Path, err)
		}
		f := os.NewFile(uintptr(fd), tmp)
		if os.Geteuid() == 0 {
			// Root-started jail: keep the file its owner's (never root's).
			_ = f.Chown(uid, gid)
		}
		_ = f.Chmod(os.FileMode(perm)) // not narrowed by the umask
		_, werr := f.Write(data)
		if werr == nil {
			werr = unix.Renameat(l.dirfd, tmp, l.dirfd, l.name)
		}
		if werr == nil {
			// Synced after the rename: readers get the host's keys back at
			// once, the disk a moment later (the window is what matters).
			_ = f.Sync()
			return f.Close()
		}
		f.Close()
		_ = unix.Unlinkat(l.dirfd, tmp, 0)
		if !errors.Is(werr, unix.EBUSY) && !errors.Is(werr, unix.EXDEV) {
			return fmt.Errorf("write %s: %w", t.Path, werr)
		}
	}
	// In place: the same inode keeps the new content.
	fd, err := unix.Openat(l.dirfd, l.name, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("write %s: %w", t.Path, err)
	}
	f := os.NewFile(uintptr(fd), l.name)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("write %s: not a regular file", t.Path)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		return fmt.Errorf("write %s: %w", t.Path, err)
	}
	if err := f.Truncate(int64(len(data))); err != nil {
		return fmt.Errorf("write %s: %w", t.Path, err)
	}
	_ = f.Sync()
	return nil
}

// save keeps a copy of the agent's version in the quarantine and returns its
// path ("" when it could not be saved, or the same content was saved last).
func (g *Guard) save(t *gtarget, data []byte) string {
	sum := sha256.Sum256(data)
	if sum == t.saved {
		return ""
	}
	q := g.opts.Quarantine
	if q == "" {
		q = filepath.Join(g.opts.Dir, "quarantine")
	}
	dir := filepath.Join(q, g.opts.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ""
	}
	name := strings.ReplaceAll(strings.TrimPrefix(t.Path, "/"), "/", "_")
	if len(name) > 150 {
		name = name[len(name)-150:]
	}
	// The run's quarantine directory is shared with the sentinel (package
	// sentinel), which stores entries the agent named, symlinks included:
	// never write through or over an entry that is already there.
	for try := 0; try < 100; try++ {
		g.seq++
		p := filepath.Join(dir, fmt.Sprintf("%03d-%s", g.seq, name))
		f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return ""
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(p)
			return ""
		}
		t.saved = sum
		return p
	}
	return ""
}

// removeTemps removes the temporary files a killed supervisor of run id
// left next to t (named .NAME.jail-tmp-ID-...).
func removeTemps(t Target, id string, max int64) {
	_, l, err := readState(t, max, nil)
	defer l.close()
	if err != nil || l.dirfd < 0 || len(l.missing) > 0 {
		return
	}
	fd, err := unix.Openat(l.dirfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	d := os.NewFile(uintptr(fd), ".")
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	prefix := "." + l.name + ".jail-tmp-" + id + "-"
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			_ = unix.Unlinkat(l.dirfd, n, 0)
		}
	}
}

// startTick is /proc/PID/stat's starttime: a record names its supervisor by
// pid and start time, so a reused pid is not taken for it.
func startTick(pid int) uint64 { return procstat.StartTick(pid) }

// Recover checks the targets of guards whose supervisor died before its
// last check (a SIGKILL, a crash): what its sandbox left is put back as a
// running guard would have. A file changed well after that supervisor was
// last seen alive is the user's: reported ("left"), not touched. It also
// retries the targets a run's last check could not put back (Close kept
// their record): those are put back whenever they were touched. A target
// it still cannot put back is reported and keeps its record. o.ID names
// this run; each record keeps its own id for the quarantine.
func Recover(o Options) {
	if o.MaxSize <= 0 {
		o.MaxSize = MaxSize
	}
	if o.Report == nil {
		o.Report = func(Event) {}
	}
	files, _ := filepath.Glob(filepath.Join(o.Dir, "*.json"))
	for _, f := range files {
		if filepath.Base(f) == o.ID+".json" {
			continue
		}
		b, err := os.ReadFile(f)
		var rec record
		if err != nil || json.Unmarshal(b, &rec) != nil || rec.ID == "" {
			continue
		}
		if tick := startTick(rec.Pid); rec.Pid != 0 && tick != 0 && tick == rec.StartTick {
			continue // that supervisor is alive: its guard is on the job
		}
		fi, err := os.Stat(f)
		if err != nil {
			continue
		}
		lastSeen := fi.ModTime().Add(2 * heartbeat)
		ro := o
		ro.ID, ro.Context = rec.ID, rec.Context
		g := &Guard{opts: ro}
		var sidecars, keepSide []string
		var keep []recTarget
		for _, rt := range rec.Targets {
			snap, side, ok := recSnapshot(o.Dir, rt)
			if side != "" {
				sidecars = append(sidecars, side)
			}
			if !ok {
				o.Report(Event{Target: rt.Target, Err: fmt.Errorf("agent configuration guard: the snapshot of run %s is not whole: %s not checked", rec.ID, rt.Target.Path), Recovered: true})
				continue
			}
			t := &gtarget{Target: rt.Target, snap: snap, last: snap}
			st, l, err := readState(t.Target, o.MaxSize, nil)
			l.close()
			// A target its run's last check could not put back holds the
			// agent's version whenever it was touched since (the user's
			// agent, run outside jail, rewrites the file with the hook
			// kept): the host's values come back (the version there is
			// saved in the quarantine).
			if !rt.Unsettled && err == nil && st.Kind == kRegular && time.Unix(0, st.Ctime).After(lastSeen) {
				if res := Merge(t.File, ro.Context, t.snap.version(), st.version()); res.Changed() {
					o.Report(Event{Target: t.Target, Keys: res.Keys, Whole: res.Whole, Action: "left", Recovered: true})
				}
				continue
			}
			t.unsettled = rt.Unsettled
			g.opts.Report = o.Report
			if rt.Unsettled {
				g.opts.Report = func(ev Event) { ev.Retried = true; o.Report(ev) }
			}
			g.checkLocked(t, true, true)
			g.readable(t, true)
			removeTemps(t.Target, rec.ID, o.MaxSize)
			if t.unsettled {
				// Still not put back: the record stays for the start
				// after this one; the failure was reported (at every
				// start, until it is put back).
				rt.Unsettled = true
				keep = append(keep, rt)
				keepSide = append(keepSide, side)
			}
		}
		if len(keep) > 0 {
			nrec := record{ID: rec.ID, Context: rec.Context, Targets: keep}
			if err := rewriteRecord(f, nrec, sidecars, keepSide); err != nil {
				o.Report(Event{Target: keep[0].Target, Err: fmt.Errorf("agent configuration guard: keep the record of run %s: %w", rec.ID, err), Recovered: true})
			}
			continue
		}
		removeRecord(f, sidecars)
	}
	removeOrphanSnapshots(o.Dir)
}

// removeOrphanSnapshots removes the snapshot files no record names: a
// supervisor killed between a snapshot and its record left them, and
// nothing of a run may stay behind. A recent one may be a starting
// supervisor's, whose record is about to follow.
func removeOrphanSnapshots(dir string) {
	snaps, _ := filepath.Glob(filepath.Join(dir, "*.snap"))
	for _, p := range snaps {
		// ID.N.snap: the record is ID.json.
		id := strings.TrimSuffix(filepath.Base(p), ".snap")
		if i := strings.LastIndexByte(id, '.'); i > 0 {
			id = id[:i]
		}
		if _, err := os.Lstat(filepath.Join(dir, id+".json")); err == nil {
			continue
		}
		if fi, err := os.Lstat(p); err == nil && time.Since(fi.ModTime()) > orphanAge {
			os.Remove(p)
		}
	}
}
