package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/cgroup"
	"github.com/jail-sandbox/jail/procstat"
)

// Leftovers: what a supervisor makes on the host for the time of one run
// (a private TMPDIR in degraded mode) is named jail-<pid>-t<start tick>-KIND,
// so that jail gc can tell a dead supervisor's from a live one's: the pid is
// alive AND has the same start time (pid reuse cannot fool it).

func leftoverName(kind string) string {
	return fmt.Sprintf("jail-%d-t%d-%s", os.Getpid(), procstat.SelfStartTick(), kind)
}

// parseLeftover reads pid and start tick from a jail-<pid>-t<tick>-... name.
func parseLeftover(name string) (pid int, tick uint64, ok bool) {
	rest, found := strings.CutPrefix(name, "jail-")
	if !found {
		return 0, 0, false
	}
	f := strings.SplitN(rest, "-", 3)
	if len(f) < 3 || !strings.HasPrefix(f[1], "t") {
		return 0, 0, false
	}
	p, err1 := strconv.Atoi(f[0])
	t, err2 := strconv.ParseUint(f[1][1:], 10, 64)
	if err1 != nil || err2 != nil || p <= 0 || strconv.Itoa(p) != f[0] {
		return 0, 0, false
	}
	return p, t, true
}

// supervisorAlive: pid exists (kill 0: EPERM means it exists, not ours),
// is not a zombie, and, when tick is known and its stat readable, started
// at tick. A pid reused by another process since is dead for this purpose,
// and so is a zombie (it runs no more: a SIGKILLed supervisor not yet
// reaped, as jail ps and List count it). Only an unreadable stat (another
// user's process under hidepid) is taken for alive.
func supervisorAlive(pid int, tick uint64) bool {
	if err := unix.Kill(pid, 0); err != nil && !errors.Is(err, unix.EPERM) {
		return false
	}
	s, err := procstat.Read("", pid)
	if err != nil {
		return !errors.Is(err, os.ErrNotExist) && !errors.Is(err, unix.ESRCH) // gone since the kill: dead
	}
	if s.State == 'Z' || s.State == 'X' {
		return false
	}
	return tick == 0 || s.StartTime == tick
}

// GC removes what dead supervisors left: cgroups anywhere in the
// hierarchies (cgroup.CollectStale, not only under the caller's cgroup),
// registry records, and degraded mode's private TMPDIRs; and it does the
// exit check a killed supervisor could not do (what its agent left in the
// writable trees goes to the quarantine, as at the next start; the agent
// configuration a run could not put back is, or said again). Trails are
// records and are never removed: the ones whose supervisor died (no exit
// event) are named. Nothing of a live supervisor is touched (pid and start
// time, as jail ps checks them), and nothing of another user (by owner):
// those are counted in one note, and the exit code is 1 only when the
// caller's own leftovers could not be removed.
func GC(w io.Writer) int {
	code, foreign := 0, 0
	for _, s := range cgroup.CollectStale(cgroup.Options{}) {
		if s.Foreign {
			foreign++
			continue
		}
		if s.Err != nil {
			fmt.Fprintf(w, "jail gc: cgroup %s (supervisor %d, gone): %v\n", s.Path, s.Pid, s.Err)
			code = 1
			continue
		}
		fmt.Fprintf(w, "removed cgroup %s (supervisor %d, gone)\n", s.Path, s.Pid)
	}
	if dir, err := checkRegistry(); err == nil && dir != "" {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, f := range files {
			e, ok := readRecord(f)
			if !ok {
				continue
			}
			if supervisorAlive(e.Pid, e.StartTick) {
				continue
			}
			if err := os.Remove(f); err != nil {
				fmt.Fprintf(w, "jail gc: %v\n", err)
				code = 1
				continue
			}
			// Its control socket (jail kill's way in) goes with it; only
			// one in the registry directory, where jail puts them.
			if e.Control != "" && filepath.Dir(e.Control) == dir {
				if err := os.Remove(e.Control); err != nil && !os.IsNotExist(err) {
					fmt.Fprintf(w, "jail gc: %v\n", err)
					code = 1
				}
			}
			fmt.Fprintf(w, "removed record of sandbox %s (supervisor %d, gone)", e.ID, e.Pid)
			if e.Audit != "" {
				fmt.Fprintf(w, "; its trail %s ends without an exit event (kept)", e.Audit)
			}
			fmt.Fprintln(w)
		}
		for _, f := range removeUnreadableRecords(dir, time.Now()) {
			fmt.Fprintf(w, "removed unreadable registry record %s (a supervisor killed while writing it)\n", f)
		}
	}
	seen := map[string]bool{}
	for _, tmp := range []string{os.TempDir(), "/tmp"} {
		if seen[tmp] {
			continue
		}
		seen[tmp] = true
		ents, _ := os.ReadDir(tmp)
		for _, e := range ents {
			pid, tick, ok := parseLeftover(e.Name())
			if !ok || !e.IsDir() || pid == os.Getpid() || supervisorAlive(pid, tick) {
				continue
			}
			p := filepath.Join(tmp, e.Name())
			// Another user's private TMPDIR is theirs to remove (a shared
			// /tmp holds every user's): never act on a name someone else chose.
			if info, err := e.Info(); err != nil {
				continue
			} else if st, ok := info.Sys().(*syscall.Stat_t); !ok || st.Uid != uint32(os.Geteuid()) {
				foreign++
				continue
			}
			if err := os.RemoveAll(p); err != nil {
				fmt.Fprintf(w, "jail gc: %v\n", err)
				code = 1
				continue
			}
			fmt.Fprintf(w, "removed %s (supervisor %d, gone)\n", p, pid)
		}
	}
	// What the agent of a killed run left in its writable trees.
	if gcKilledRuns(w) {
		code = 1
	}
	if foreign > 0 {
		fmt.Fprintf(w, "jail gc: left %d leftover(s) of dead supervisors that belong to other users (their own jail gc removes them)\n", foreign)
	}
	return code
}

// unreadableAge: a registry file that does not parse and is older than
// this is no live supervisor's (register writes a record aside and renames
// it, within milliseconds): one killed while writing left it.
const unreadableAge = 10 * time.Second

// removeUnreadableRecords removes the registry files of dir that hold no
// record a reader can judge, an empty or partial .json (an older jail's
// write) or a .json.tmp register never renamed, once older than
// unreadableAge; a .tmp whose record parses goes once its supervisor is
// gone. It returns what it removed.
func removeUnreadableRecords(dir string, now time.Time) []string {
	var removed []string
	tmps, _ := filepath.Glob(filepath.Join(dir, "*.json.tmp"))
	recs, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range append(recs, tmps...) {
		fi, err := os.Lstat(f)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if e, ok := readRecord(f); ok {
			if !strings.HasSuffix(f, ".tmp") || supervisorAlive(e.Pid, e.StartTick) {
				continue // a record: judged by its supervisor (GC, List)
			}
		} else if now.Sub(fi.ModTime()) < unreadableAge {
			continue // perhaps being written this moment
		}
		if os.Remove(f) == nil {
			removed = append(removed, f)
		}
	}
	return removed
}
