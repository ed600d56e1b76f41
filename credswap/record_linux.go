package credswap

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jail-sandbox/jail/internal/heartbeat"
	"github.com/jail-sandbox/jail/internal/jsonenc"
)

// A run's snapshot is also kept in jail's state directory while it runs
// (Keep), so that a run whose supervisor was killed (kill -9, the OOM
// killer, a host crash) before its end's check is settled by the next start
// or `jail gc` (Recover): without it, the agent's swap stayed on the host
// for good (session 20). The record holds token values: it is 0600 in the
// state directory (0700), the user's own, which no sandbox reaches.

// beat is how often a live run touches its record: Recover takes a dead
// run's end to be at most two beats after the record's last touch.
const beat = 5 * time.Second

// maxRecord bounds what is read of a record (its files are at most maxSize
// each, base64 in JSON).
const maxRecord = 16 << 20

// record is what Keep writes and Recover reads.
type record struct {
	ID      string    `json:"id"`
	Started time.Time `json:"started"`
	Snaps   []recSnap `json:"snaps"`
}

type recSnap struct {
	Agent  string `json:"agent"`
	Path   string `json:"path"`
	Kind   Kind   `json:"kind"`
	Target string `json:"target"`
	Absent bool   `json:"absent,omitempty"`
	Data   []byte `json:"data,omitempty"`
	Mode   uint32 `json:"mode"`
	UID    int    `json:"uid"`
	GID    int    `json:"gid"`
}

// Record is a live run's record; Drop ends it.
type Record struct {
	f    *os.File
	path string
	beat *heartbeat.Beat
}

// recordEncoder is zjson_linux.go's encoder of a record (package
// jsongen), nil without the file; generatedJSON the sha256 of the source
// it was generated as, which TestJSONGenerated compares with the types'.
var (
	recordEncoder func([]byte, *record) ([]byte, error)
	generatedJSON string
)

// marshalRecord is json.Marshal's bytes of rec, by the generated encoder
// when it is there: Keep runs on the path from init's spec to the go,
// where encoding/json would first build the record's encoder by
// reflection.
func marshalRecord(rec *record) ([]byte, error) {
	size := 256
	for _, s := range rec.Snaps {
		size += 256 + len(s.Data)*4/3
	}
	return jsonenc.Marshal(recordEncoder, size, rec)
}

// Keep writes the record of a run's snapshot in dir, as ID.json, locked for
// as long as the run's supervisor lives (the lock is how Recover tells a
// live run from a dead one: a reused pid cannot hold it), and touches it
// every beat. nil snaps: no record.
func Keep(dir, id string, snaps []Snap) (*Record, error) {
	if len(snaps) == 0 {
		return nil, nil
	}
	rec := record{ID: id, Started: time.Now().UTC()}
	for _, s := range snaps {
		rec.Snaps = append(rec.Snaps, recSnap{Agent: s.Agent, Path: s.Path, Kind: s.Kind, Target: s.Target,
			Absent: s.Data == nil, Data: s.Data, Mode: uint32(s.Mode), UID: s.UID, GID: s.GID})
	}
	b, err := marshalRecord(&rec)
	if err != nil {
		return nil, fmt.Errorf("credential record: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("credential record: %w", err)
	}
	p := filepath.Join(dir, id+".json")
	tmp := p + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("credential record: %w", err)
	}
	// Locked before it is renamed into place: a concurrent start's Recover
	// never sees this record unlocked and takes it for a dead run's.
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("credential record %s: %w", p, err)
	}
	return &Record{f: f, path: p, beat: heartbeat.Start(p, beat)}, nil
}

// Drop removes the record: the run's end has settled its files. Safe on nil.
func (r *Record) Drop() {
	if r == nil {
		return
	}
	r.beat.Stop()
	os.Remove(r.path)
	r.f.Close()
}

// Dead is what Recover found of one dead run.
type Dead struct {
	ID      string
	Started time.Time
	End     time.Time // the latest the run can have ended (its last beat)
	Changes []Change  // settled as its end would have, judged at End
	// Left: files changed after End: the user's (their CLI refreshed or
	// signed in since), left as they are.
	Left []Snap
	Err  error // the record could not be read: removed, said
}

// Recover settles the records of runs whose supervisor died before its end
// (their record is unlocked), as their end would have: a change without a
// refresh due by the run's end (its last beat) is put back. A file changed
// after that end is the user's and left as it is. A record is removed once
// settled, and kept when a file could not be put back (the next start
// tries again). self is this run's id, never settled.
func Recover(dir, self string) []Dead {
	removeStaleTmp(dir)
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	var out []Dead
	for _, p := range files {
		if filepath.Base(p) == self+".json" {
			continue
		}
		if d, ok := recoverOne(p); ok {
			out = append(out, d)
		}
	}
	return out
}

// staleTmp is how old an unlocked ID.json.tmp must be to be removed: a
// start writing its record holds it for microseconds, locked from just
// after its open; one left behind is a start killed before its rename.
const staleTmp = time.Minute

// removeStaleTmp removes the ID.json.tmp of starts killed between the
// record's write and its rename: nothing else ever would, and each held a
// copy of the user's credential files (review21a).
func removeStaleTmp(dir string) {
	tmps, _ := filepath.Glob(filepath.Join(dir, "*.json.tmp"))
	for _, p := range tmps {
		f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err != nil {
			continue
		}
		fi, err := f.Stat()
		if err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > staleTmp &&
			syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			if cur, err := os.Lstat(p); err == nil && os.SameFile(fi, cur) {
				os.Remove(p)
			}
		}
		f.Close()
	}
}

func recoverOne(p string) (Dead, bool) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return Dead{}, false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return Dead{}, false // that run is alive: its end settles its files
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return Dead{}, false
	}
	// Still the record at that path: another start may have settled and
	// removed it while this one opened it.
	if cur, err := os.Lstat(p); err != nil || !os.SameFile(fi, cur) {
		return Dead{}, false
	}
	d := Dead{ID: strings.TrimSuffix(filepath.Base(p), ".json"), End: fi.ModTime().Add(2 * beat)}
	b, err := io.ReadAll(io.LimitReader(f, maxRecord+1))
	var rec record
	if err == nil && len(b) > maxRecord {
		err = errors.New("too large")
	}
	if err == nil {
		err = json.Unmarshal(b, &rec)
	}
	if err != nil {
		// Not what Keep writes: nothing can be judged from it, and kept it
		// would be said at every start.
		d.Err = fmt.Errorf("credential record %s unreadable (%v): removed; that run's credential files were not checked", p, err)
		os.Remove(p)
		return d, true
	}
	d.ID, d.Started = rec.ID, rec.Started
	failed := false
	for _, rs := range rec.Snaps {
		s := Snap{File: File{Agent: rs.Agent, Path: rs.Path, Kind: rs.Kind}, Target: rs.Target,
			Mode: os.FileMode(rs.Mode).Perm(), UID: rs.UID, GID: rs.GID}
		if !rs.Absent {
			s.Data = rs.Data
			if s.Data == nil {
				s.Data = []byte{}
			}
		}
		if !validSnap(s) {
			continue
		}
		home := strings.TrimSuffix(s.Target, "/"+s.Path)
		if changedAfter(s.Target, d.End) {
			// Why: the user's CLI on the host refreshed or signed in
			// since that run died: its tokens are the user's.
			if c := settle(home, []Snap{s}, d.End, false); len(c) > 0 {
				d.Left = append(d.Left, s)
			}
			continue
		}
		for _, c := range Settle(home, []Snap{s}, d.End) {
			failed = failed || c.Err != nil
			d.Changes = append(d.Changes, c)
		}
	}
	if !failed {
		os.Remove(p)
	}
	return d, true
}

// validSnap refuses a record's entry that is not one of Files at an
// absolute target: the record is jail's own, but a settle writes there.
func validSnap(s Snap) bool {
	for _, f := range Files {
		if f == s.File {
			return filepath.IsAbs(s.Target) && strings.HasSuffix(s.Target, "/"+s.Path) && filepath.Clean(s.Target) == s.Target
		}
	}
	return false
}

// changedAfter reports whether the file at p was changed (its ctime) after t.
func changedAfter(p string, t time.Time) bool {
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		return false
	}
	sec, nsec := st.Ctim.Unix()
	return time.Unix(sec, nsec).After(t)
}
