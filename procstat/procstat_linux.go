package procstat

import (
	"fmt"
	"os"
	"strconv"
	"sync/atomic"

	"github.com/jail-sandbox/jail/internal/rawread"
)

// Read parses /proc/PID/stat under root ("" means /proc; tests give a
// directory of their own).
func Read(root string, pid int) (Stat, error) {
	if root == "" {
		root = "/proc"
	}
	p := fmt.Sprintf("%s/%d/stat", root, pid)
	b, err := rawread.File(p, 512) // a stat line is 300-400 bytes
	if err != nil {
		return Stat{}, fmt.Errorf("read %s: %w", p, err)
	}
	s, err := Parse(b)
	if err != nil {
		return Stat{}, fmt.Errorf("parse %s: %w", p, err)
	}
	return s, nil
}

// All reads the stat line of every process listed under root ("" means
// /proc): the one walk of /proc that proctree, init's last kill, the
// session's status and memwatch share. A process gone (or unreadable)
// between the listing and its read is left out; the error is the
// listing's.
func All(root string) ([]Stat, error) {
	if root == "" {
		root = "/proc"
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", root, err)
	}
	all := make([]Stat, 0, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		st, err := Read(root, pid)
		if err != nil {
			continue // gone since the listing
		}
		all = append(all, st)
	}
	return all, nil
}

// StartTick is pid's start time in clock ticks after boot (field 22 of
// /proc/PID/stat), or 0 when the process is gone or the line unreadable.
// A pid and its StartTick together name one process: a later process given
// the same pid has a later start time (unless it began in the same tick).
func StartTick(pid int) uint64 {
	s, err := Read("", pid)
	if err != nil {
		return 0
	}
	return s.StartTime
}

// selfTick is SelfStartTick's answer once known (0: not yet).
var selfTick atomic.Uint64

// SelfStartTick is StartTick(os.Getpid()), read once per process: a
// process's start time never changes, and a supervisor's start asked for it
// three times (its cgroup's name, the agent-config guard's record, the
// registry entry), each a read of /proc/self/stat.
func SelfStartTick() uint64 {
	if t := selfTick.Load(); t != 0 {
		return t
	}
	t := StartTick(os.Getpid())
	selfTick.Store(t) // 0 (unreadable) is asked again next time
	return t
}
