package sandbox

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestRunRecordNeverSeenUnlocked: a run's run.json is never there, to
// another start's killedRun, before its run holds the lock on it and has
// written it whole. It was created (O_EXCL) and only then locked and
// written: a start opening it in between took the lock, read an empty
// record ("unreadable (EOF)", a notice telling the user to remove a live
// run's record), and the run, refused its own lock, went on without one (a
// killed run it could not be checked at the next start). Seen in a CI-like
// run of TestHostsDoctorInsideJail; here a reader spinning on the path
// while records are kept and dropped.
func TestRunRecordNeverSeenUnlocked(t *testing.T) {
	base := t.TempDir()
	const runs = 300
	var bad int
	ready, seen := make(chan int), make(chan bool)
	go func() {
		// The other start: it opens run.json the moment the path names a
		// file, and takes the lock if it can.
		for i := range ready {
			p := filepath.Join(base, strconv.Itoa(i), "run.json")
			deadline := time.Now().Add(5 * time.Second)
			for {
				f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
				if err == nil {
					whole := true
					if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
						var rec runRecord
						whole = json.NewDecoder(f).Decode(&rec) == nil
					}
					f.Close()
					seen <- whole
					break
				}
				if time.Now().After(deadline) {
					seen <- true
					break
				}
			}
		}
	}()
	for i := 0; i < runs; i++ {
		se := &sentry{dir: filepath.Join(base, strconv.Itoa(i))}
		ready <- i
		err := se.keepRecord(runRecord{ID: strconv.Itoa(i)})
		if !<-seen {
			bad++
		}
		if err != nil {
			t.Errorf("keepRecord %d: %v", i, err)
			continue
		}
		se.dropRecord()
		if _, err := os.Lstat(filepath.Join(se.dir, "run.json")); !os.IsNotExist(err) {
			t.Fatalf("run %d: run.json left after dropRecord (%v)", i, err)
		}
	}
	close(ready)
	if bad > 0 {
		t.Errorf("%d of %d records were seen unlocked and not whole by another start", bad, runs)
	}
}
