package cgroup

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/procstat"
)

// Stale is one group of a dead supervisor that CollectStale handled.
type Stale struct {
	Path string
	Pid  int   // the supervisor's pid, from the name
	Err  error // nil when removed (or Foreign)
	// Foreign: the group belongs to another user and was left untouched.
	Foreign bool
}

// CollectStale removes every jail group (jail-<pid>-...) of a dead
// supervisor anywhere in the cgroup hierarchies under opts.Root: the v2
// mount and each v1 controller jail uses, the whole tree, not only the
// caller's part of it (CleanupStale, at each start, looks only there). It
// is what `jail gc` runs. A group whose supervisor lives is never touched:
// the pid must be gone, or (names made since the start tick is in them)
// be another process with a different start time. Only the caller's own
// groups (by owner) are removed; another user's are reported Foreign and
// left for that user's jail gc. Own groups it cannot remove are reported
// with their error.
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
	self, me := os.Getpid(), uint32(os.Geteuid())
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
			// Another user's group is theirs to collect: the kernel would
			// refuse most of it to a user, and root (or a user whose
			// delegated cgroup holds it) would kill processes and remove
			// groups on the strength of a name whoever made it chose.
			owner, ok := ownerOf(path)
			if !ok {
				return filepath.SkipDir // gone meanwhile
			}
			if owner != me {
				out = append(out, Stale{Path: path, Pid: pid, Foreign: true})
				return filepath.SkipDir
			}
			out = append(out, Stale{Path: path, Pid: pid, Err: removeTree(path)})
			return filepath.SkipDir
		})
	}
	return out
}

// ownerOf is the uid that owns path (not following a symlink).
func ownerOf(path string) (uint32, bool) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return 0, false
	}
	return st.Uid, true
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
