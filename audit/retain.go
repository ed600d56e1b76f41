package audit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// This file: finding trails in jail's audit directory, and retention.

// defaultName matches the name DefaultPath gives a trail.
var defaultName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([0-9]{8}T[0-9]{6}Z)-([A-Za-z0-9._-]{1,64})\.jsonl$`)
})

// TrailFile is one trail in an audit directory.
type TrailFile struct {
	Path    string
	ID      string
	Started time.Time // from the name
	ModTime time.Time // the last write
	Size    int64
}

// ListDir returns the default-named trails in dir, oldest first (by start
// time, then name). Other files are not trails and are left out. A missing
// directory holds no trail.
func ListDir(dir string) ([]TrailFile, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list audit trails: %w", err)
	}
	var out []TrailFile
	for _, e := range ents {
		m := defaultName().FindStringSubmatch(e.Name())
		if m == nil || !validID(m[2]) || !e.Type().IsRegular() {
			continue
		}
		started, err := time.Parse(FileTimeFormat, m[1])
		if err != nil {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, TrailFile{Path: filepath.Join(dir, e.Name()), ID: m[2], Started: started, ModTime: fi.ModTime(), Size: fi.Size()})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Started.Equal(out[j].Started) {
			return out[i].Started.Before(out[j].Started)
		}
		return out[i].Path < out[j].Path
	})
	return out, nil
}

// ErrNoTrail is returned when no trail matches.
var ErrNoTrail = errors.New("no such audit trail")

// Latest returns the newest trail in dir (the most recent start).
func Latest(dir string) (string, error) {
	ts, err := ListDir(dir)
	if err != nil {
		return "", err
	}
	if len(ts) == 0 {
		return "", fmt.Errorf("%w: %s holds no trail yet", ErrNoTrail, dir)
	}
	return ts[len(ts)-1].Path, nil
}

// FindID returns the trail of sandbox id in dir; a prefix of at least 4
// characters is enough when exactly one trail's id starts with it.
func FindID(dir, id string) (string, error) {
	if !validID(id) {
		return "", fmt.Errorf("%w: %q is not a sandbox id", ErrNoTrail, id)
	}
	ts, err := ListDir(dir)
	if err != nil {
		return "", err
	}
	var pre []string
	for _, t := range ts {
		if t.ID == id {
			return t.Path, nil
		}
		if len(id) >= 4 && strings.HasPrefix(t.ID, id) {
			pre = append(pre, t.Path)
		}
	}
	switch len(pre) {
	case 1:
		return pre[0], nil
	case 0:
		return "", fmt.Errorf("%w: none for id %s in %s", ErrNoTrail, id, dir)
	}
	return "", fmt.Errorf("%w: id %s is ambiguous (%d trails in %s start with it)", ErrNoTrail, id, len(pre), dir)
}

// Retention bounds what an audit directory keeps. Zero fields mean no
// bound of that kind.
type Retention struct {
	MaxAge   time.Duration // trails last written longer ago are removed
	MaxTotal int64         // then the oldest go until the rest fit
}

// Prune applies r to dir at now and returns what it removed. A trail
// being written is never removed: its writer holds a lock on it (see
// Create), or it is named in keep, or it is the newest of all. Only
// default-named trails are touched.
func Prune(dir string, r Retention, now time.Time, keep []string) ([]string, error) {
	ts, err := ListDir(dir)
	if err != nil || len(ts) == 0 {
		return nil, err
	}
	kept := map[string]bool{ts[len(ts)-1].Path: true}
	for _, k := range keep {
		kept[filepath.Clean(k)] = true
	}
	var total int64
	for _, t := range ts {
		total += t.Size
	}
	var removed []string
	var errs []error
	drop := func(t TrailFile) {
		if kept[t.Path] || live(t.Path) {
			return
		}
		if err := os.Remove(t.Path); err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
			return
		}
		total -= t.Size
		removed = append(removed, t.Path)
	}
	rest := ts[:0:0]
	for _, t := range ts {
		if r.MaxAge > 0 && now.Sub(t.ModTime) > r.MaxAge {
			drop(t)
			if len(removed) > 0 && removed[len(removed)-1] == t.Path {
				continue
			}
		}
		rest = append(rest, t)
	}
	for _, t := range rest { // oldest first
		if r.MaxTotal <= 0 || total <= r.MaxTotal {
			break
		}
		drop(t)
	}
	return removed, errors.Join(errs...)
}

// PruneDue says whether retention r should run at now, given the stamp
// file MarkPruned leaves (kept outside the audit directory, which holds
// trails only): listing and stat-ing every trail costs a few ms per
// thousand trails, too much for every start, so it runs at most once per
// every. It is due when there is no stamp (or something else than a
// regular file at its name), when the stamp is older than every or from
// the future (a clock set back), and when the bounds differ from those the
// stamp recorded (a tightened bound applies at the next start).
func PruneDue(stamp string, r Retention, now time.Time, every time.Duration) bool {
	fi, err := os.Lstat(stamp)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 256 {
		return true
	}
	if age := now.Sub(fi.ModTime()); age < 0 || age >= every {
		return true
	}
	b, err := os.ReadFile(stamp)
	return err != nil || string(b) != stampText(r)
}

// stampText is the content of the stamp for r.
func stampText(r Retention) string {
	return fmt.Sprintf("max-age %d max-total %d\n", int64(r.MaxAge), r.MaxTotal)
}

// MarkPruned records in the file stamp that retention r ran at now: its
// modification time is when, its content the bounds. It is written to a
// new file and renamed into place: whatever was at its name (a symlink
// too) is replaced, never written through.
func MarkPruned(stamp string, r Retention, now time.Time) error {
	f, err := os.CreateTemp(filepath.Dir(stamp), filepath.Base(stamp)+".*")
	if err != nil {
		return fmt.Errorf("retention stamp: %w", err)
	}
	tmp := f.Name()
	_, err = f.WriteString(stampText(r))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chtimes(tmp, now, now)
	}
	if err == nil {
		err = os.Rename(tmp, stamp)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("retention stamp %s: %w", stamp, err)
	}
	return nil
}
