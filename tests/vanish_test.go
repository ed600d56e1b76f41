//go:build linux

package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A data place the host removes while jail starts (a top-level directory
// the system does not know, planned to be hidden under an empty tmpfs) does
// not fail the start: nothing is left there to hide, and jail never makes a
// mount point in the read-only host view. Before the fix about two starts in
// three failed with "tmpfs /X: mkdir /X: read-only file system" while a
// loop made and removed such a directory, and every other test running at
// the time (TestPersistOutsideSecrets plants /jail-e2e-PID) could fail so.
// A place that stays put the whole time is still hidden. (A directory the
// host makes after the mounts are built is visible, read-only, like any it
// makes after the start: the churning ones are not checked for that.)
// Root only: only root can make a top-level directory.
func TestDataPlaceVanishesDuringStart(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make and remove a top-level directory")
	}
	ws := workspace(t)
	base := fmt.Sprintf("/jail-vanish-%d", os.Getpid())
	stable := base + "-stable"
	fsWrite(t, "/", stable+"/x/.env", "SECRET=stable\n", 0o644)
	t.Cleanup(func() { os.RemoveAll(stable) })
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; !stop.Load(); i++ {
			d := fmt.Sprintf("%s-%d", base, i%4)
			os.MkdirAll(filepath.Join(d, "x"), 0o755)
			time.Sleep(3 * time.Millisecond)
			os.RemoveAll(d)
		}
	}()
	t.Cleanup(func() {
		stop.Store(true)
		<-done
		for i := 0; i < 4; i++ {
			os.RemoveAll(fmt.Sprintf("%s-%d", base, i))
		}
	})
	failed := 0
	for i := 0; i < 30; i++ {
		r := sh(t, runOpts{dir: ws}, "cat "+stable+"/x/.env 2>/dev/null; ls -A "+stable+" 2>/dev/null; exit 0")
		if r.code != 0 {
			failed++
			t.Errorf("start %d: exit %d: %s", i, r.code, strings.TrimSpace(r.stderr))
		}
		if strings.TrimSpace(r.stdout) != "" {
			t.Errorf("start %d: a data place's secret was readable inside:\n%s", i, r.stdout)
		}
		if failed > 3 {
			t.Fatal("giving up")
		}
	}
}
