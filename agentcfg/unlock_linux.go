package agentcfg

import (
	"fmt"
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
// again); an unreadable one hides what restricts the agent, and the last
// check gives the owner's read back in any case (readableAgain). The
// access given for the check is no more than the agent's own chmod gives
// it at any time.
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

// readableAgain gives the owner back, after the last check, the access a
// loader needs to read t's file: read on the file (where the host's file
// had it at start, snap) and read and search on every directory from t's
// writable root down to the file's. It returns what it changed, as
// "PATH: MODE -> MODE".
//
// The agent's own chmod took them away: unlockPath's undo puts the agent's
// modes back, and a file whose content was already the host's is never
// looked at for its mode. An unreadable file is not an inert one: Claude
// Code and its kind read an unreadable settings file as none, so a file or
// directory the agent left chmod 000 drops the user's own restrictions
// (permissions.deny, sandbox, disableAllHooks, deniedMcpServers) from the
// user's next run of the agent outside jail, as deleting the file would,
// which the guard puts back. Write bits stay as the agent left them: a
// read-only file or directory adds nothing to what the agent runs.
//
// Only what the file's owner owns is changed (the user's, not another
// user's nor root's), and nothing is followed: each directory is opened
// with O_NOFOLLOW below the last, and chmod goes through the descriptor.
// Directories above the root are out of the agent's reach and not looked
// at; for a file that is a bind mount in the sandbox (InPlace) the
// directory is too.
func readableAgain(t Target, snap fstate) (changed []string) {
	if snap.Kind != kRegular {
		return nil // no host file whose keys a loader would miss
	}
	uid := uint32(snap.UID)
	fix := func(fd int, path string, need uint32) {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || st.Uid != uid || st.Mode&need == need {
			return
		}
		mode := st.Mode & 0o7777
		// Why: see above: a loader reads an unreadable config as none,
		// and the user's restrictions in it are gone outside jail.
		if unix.Chmod(procFD(fd), mode|need) == nil {
			changed = append(changed, fmt.Sprintf("%s: %04o -> %04o", path, mode, mode|need))
		}
	}
	dir, rest := t.Root, []string(nil)
	if t.InPlace {
		dir = filepath.Dir(t.Path)
	} else if rel, err := filepath.Rel(t.Root, filepath.Dir(t.Path)); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		rest = strings.Split(rel, "/")
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return changed
	}
	if !t.InPlace {
		fix(fd, dir, unix.S_IRUSR|unix.S_IXUSR)
	}
	for _, c := range rest {
		next, err := unix.Openat(fd, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return changed // gone, or a symlink now: nothing a loader reads through
		}
		fd, dir = next, filepath.Join(dir, c)
		fix(fd, dir, unix.S_IRUSR|unix.S_IXUSR)
	}
	file, err := unix.Openat(fd, filepath.Base(t.Path), unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	unix.Close(fd)
	if err != nil {
		return changed
	}
	defer unix.Close(file)
	var st unix.Stat_t
	if unix.Fstat(file, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && snap.Mode&unix.S_IRUSR != 0 {
		fix(file, t.Path, unix.S_IRUSR)
	}
	return changed
}
