package cgroup

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jail-sandbox/jail/procstat"
)

// Stale is one group of a dead supervisor that CollectStale handled.
type Stale struct {
	Path string
	Pid  int   // the supervisor's pid, from the name
	Err  error // nil when removed
}

// CollectStale removes every jail group (jail-<pid>-...) of a dead
// supervisor anywhere in the cgroup hierarchies under opts.Root: the v2
// mount and each v1 controller jail uses, the whole tree, not only the
// caller's part of it (CleanupStale, at each start, looks only there). It
// is what `jail gc` runs. A group whose supervisor lives is never touched:
// the pid must be gone, or (names made since the start tick is in them)
// be another process with a different start time. Groups the caller may
// not write are reported with their error and left.
func CollectStale(opts Options) []Stale {
	root := opts.root()
	var bases []string
	if v2, ok := v2Mount(root); ok {
		bases = append(bases, v2)
	}
	for _, c := range v1Controllers {
		base := filepath.Join(root, c.name)
		if _, err := os.Stat(filepath.Join(base, "cgroup.procs")); err == nil {
			bases = append(bases, base)
		}
	}
	self := os.Getpid()
	var out []Stale
	for _, base := range bases {
		_ = filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() || path == base {
				return nil
			}
			if strings.Count(strings.TrimPrefix(path, base), "/") > 12 {
				return filepath.SkipDir
			}
			pid, tick, ok := parseGroupTick(d.Name())
			if !ok {
				return nil
			}
			if pid == self || supervisorLive(pid, tick) {
				return filepath.SkipDir
			}
			out = append(out, Stale{Path: path, Pid: pid, Err: removeTree(path)})
			return filepath.SkipDir
		})
	}
	return out
}

// parseGroupTick reads jail-<pid>-t<tick>-... (tick 0 for older names,
// jail-<pid>-<rand>, and for jail-<pid>-supervisor).
func parseGroupTick(base string) (pid int, tick uint64, ok bool) {
	pid, ok = parseGroupName(base)
	if !ok {
		return 0, 0, false
	}
	f := strings.SplitN(base, "-", 4)
	if len(f) >= 3 && strings.HasPrefix(f[2], "t") {
		if t, err := strconv.ParseUint(f[2][1:], 10, 64); err == nil {
			tick = t
		}
	}
	return pid, tick, true
}

// supervisorLive: pid exists and, when tick is known, started then.
func supervisorLive(pid int, tick uint64) bool {
	if !alive(pid) {
		return false
	}
	if tick == 0 {
		return true // no start time in the name: a live pid is taken as ours
	}
	st := startTick(pid)
	return st == 0 || st == tick
}

// startTick is /proc/PID/stat's starttime (field 22), 0 when unknown.
func startTick(pid int) uint64 {
	s, err := procstat.Read(procRoot, pid)
	if err != nil {
		return 0
	}
	return s.StartTime
}
