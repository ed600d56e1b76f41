package agentcfg

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Unguardable splits targets into those New can snapshot and those whose
// path holds what it cannot (Unguarded): checked the way New reads them
// (no symlink below the root followed), by their metadata only, so the
// plan does not read every guarded file a second time (a ~/.claude.json
// of megabytes). A target New would leave out for another reason (a
// directory on the way that is a symlink, one it cannot open) stays in
// ok: New says why.
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
		return Unguarded{}, false
	case unix.S_IFLNK:
		return Unguarded{}, false // guarded as a symlink (New snapshots it)
	case unix.S_IFDIR:
		return Unguarded{Target: t, What: describeMode(st.Mode), Dir: true}, true
	}
	return Unguarded{Target: t, What: describeMode(st.Mode)}, true
}
