package agentcfg

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// unlockPath gives the supervisor's user back the access the guard needs
// on t's path, where the agent took it away: search on every directory
// from / down to the file's, read, write and search on the deepest one
// that exists (the guard reads, renames and makes directories there), and
// read on the file (write too for an in-place target). Only what the
// supervisor's user owns is changed (nothing else is the agent's to
// chmod), only the bits missing are added, and the returned undo puts
// every mode back as found (unless the agent changed it again meanwhile).
//
// The agent's modes come back rather than the host's at start: jail puts
// back protected keys, not the rest of what the agent may change in its
// writable directories, and a directory left read-only or unsearchable
// runs nothing more than a writable one (the file in it is the host's
// again). The access given for the check is no more than the agent's own
// chmod gives it at any time.
//
// Nothing is followed: each directory is opened with O_NOFOLLOW below the
// last, and chmod goes through the opened descriptor (/proc/self/fd, as
// fchmod does not take O_PATH ones): a name the agent swaps meanwhile
// does not redirect it. A symlink on the way ends the walk (readState
// reports it).
func unlockPath(t Target) (undo func()) {
	euid := os.Geteuid()
	type change struct {
		fd        int
		mode, set uint32
	}
	var done []change
	var open []int
	undo = func() {
		for i := len(done) - 1; i >= 0; i-- {
			// Only a mode still as the guard set it: a chmod the agent
			// made meanwhile (the sandbox may still run) is its last word.
			var st unix.Stat_t
			if unix.Fstat(done[i].fd, &st) == nil && st.Mode&0o7777 == done[i].set {
				_ = unix.Chmod(procFD(done[i].fd), done[i].mode)
			}
		}
		for _, fd := range open {
			unix.Close(fd)
		}
	}
	// give adds the bits of need that fd's owner lacks, when the
	// supervisor's user is that owner.
	give := func(fd int, need uint32) {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || int(st.Uid) != euid || st.Mode&need == need {
			return
		}
		mode := st.Mode & 0o7777
		if unix.Chmod(procFD(fd), mode|need) == nil {
			done = append(done, change{fd, mode, mode | need})
		}
	}
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return undo
	}
	open = append(open, fd)
	for _, c := range strings.Split(strings.TrimPrefix(filepath.Dir(t.Path), "/"), "/") {
		if c == "" {
			continue
		}
		give(fd, unix.S_IXUSR)
		next, err := unix.Openat(fd, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			// Missing: the guard makes the directories here; a symlink
			// or a file in the way: the guard removes the symlink.
			give(fd, unix.S_IRWXU)
			return undo
		}
		open = append(open, next)
		fd = next
	}
	give(fd, unix.S_IRWXU)
	file, err := unix.Openat(fd, filepath.Base(t.Path), unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return undo
	}
	open = append(open, file)
	var st unix.Stat_t
	if unix.Fstat(file, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
		need := uint32(unix.S_IRUSR)
		if t.InPlace {
			need |= unix.S_IWUSR
		}
		give(file, need)
	}
	return undo
}

func procFD(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }
