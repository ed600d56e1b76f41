package agentcfg

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Unguardable splits targets into those New can snapshot and those whose
// path holds what it cannot (Unguarded): checked the way New reads them
// (no symlink below the root followed), by their metadata only, so the
// plan does not read every guarded file a second time (a ~/.claude.json
// of megabytes). A file its owner cannot read is unguardable too. A target
// whose way holds a symlink stays in ok (the plan guards where it leads
// and the links, package sandbox); one New still cannot guard fails it.
func Unguardable(targets []Target) (ok []Target, bad []Unguarded) {
	ok = targets[:0:0]
	for _, t := range targets {
		u, isBad := unguarded(t)
		if isBad {
			bad = append(bad, u)
			continue
		}
		ok = append(ok, t)
	}
	return ok, bad
}

func unguarded(t Target) (Unguarded, bool) {
	_, l, done, err := locate(t)
	defer l.close()
	if done || err != nil {
		return Unguarded{}, false
	}
	var st unix.Stat_t
	if err := unix.Fstatat(l.dirfd, l.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return Unguarded{}, false // absent (or unreadable: New says why)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		if st.Size > MaxSize {
			return Unguarded{Target: t, What: fmt.Sprintf("larger than %d bytes", int64(MaxSize))}, true
		}
		// Why: a file its owner cannot read (mode 0) cannot be
		// snapshotted, and the agent, the same owner, gives itself the
		// access back (chmod) and writes its hooks there (session 18).
		// O_NONBLOCK: a FIFO swapped in meanwhile must not hang the plan.
		fd, err := unix.Openat(l.dirfd, l.name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
			return Unguarded{Target: t, What: fmt.Sprintf("unreadable (%v)", err)}, true
		}
		if err == nil {
			unix.Close(fd)
		}
		return Unguarded{}, false
	case unix.S_IFLNK:
		return Unguarded{}, false // guarded as a symlink (New snapshots it)
	case unix.S_IFDIR:
		return Unguarded{Target: t, What: describeMode(st.Mode), Dir: true}, true
	}
	return Unguarded{Target: t, What: describeMode(st.Mode)}, true
}
