//go:build linux

package tests

// Adversarial (seccomp15): fanotify is allowed (unprivileged since Linux
// 5.13, FAN_REPORT_FID groups only), and what it sees must stay what
// inotify sees: marks on inodes the agent can name and read. Mount and
// filesystem marks (every event of a whole host file system) need
// CAP_SYS_ADMIN in the group's and the file system's user namespace (6.16
// lets a user namespace's admin mark its own mounts): the agent holds no
// capability in any namespace, so they must be refused, as must the
// privileged classes (permission events, unlimited queues, event fds).

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

type fanotifyProbe struct {
	name       string
	initFlags  uint
	markFlags  uint
	privileged bool // refused to an agent; root on the host may
}

var fanotifyProbes = []fanotifyProbe{
	{"inode", unix.FAN_CLASS_NOTIF | unix.FAN_REPORT_FID, unix.FAN_MARK_ADD, false},
	{"mount", unix.FAN_CLASS_NOTIF | unix.FAN_REPORT_FID, unix.FAN_MARK_ADD | unix.FAN_MARK_MOUNT, true},
	{"filesystem", unix.FAN_CLASS_NOTIF | unix.FAN_REPORT_FID, unix.FAN_MARK_ADD | unix.FAN_MARK_FILESYSTEM, true},
	{"fd-events", unix.FAN_CLASS_NOTIF, unix.FAN_MARK_ADD, true},
	{"permission", unix.FAN_CLASS_CONTENT, unix.FAN_MARK_ADD, true},
	{"unlimited", unix.FAN_CLASS_NOTIF | unix.FAN_REPORT_FID | unix.FAN_UNLIMITED_QUEUE, unix.FAN_MARK_ADD, true},
}

// fanotifyTry makes a group with initFlags and marks dir with markFlags
// for open and close-write events.
func fanotifyTry(p fanotifyProbe, dir string) error {
	fd, err := unix.FanotifyInit(p.initFlags|unix.FAN_CLOEXEC, unix.O_RDONLY)
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	defer unix.Close(fd)
	mask := uint64(unix.FAN_OPEN | unix.FAN_CLOSE_WRITE)
	if p.initFlags&(unix.FAN_CLASS_CONTENT) != 0 {
		mask = unix.FAN_OPEN_PERM
	}
	if err := unix.FanotifyMark(fd, p.markFlags, mask, unix.AT_FDCWD, dir); err != nil {
		return fmt.Errorf("mark: %w", err)
	}
	return nil
}

// fanotifyShim (everydayShim mode "fanotify"): one line per probe.
func fanotifyShim() {
	dir, _ := os.Getwd()
	for _, p := range fanotifyProbes {
		fmt.Printf("FANOTIFY %s %v\n", p.name, fanotifyTry(p, dir))
	}
}

func TestFanotifyNoWiderThanInotify(t *testing.T) {
	if os.Geteuid() == 0 {
		// Control: root on the host gets every privileged probe, so a
		// refusal inside is the sandbox's, not this kernel's.
		dir := t.TempDir()
		for _, p := range fanotifyProbes {
			if err := fanotifyTry(p, dir); err != nil {
				t.Fatalf("control: %s as root on the host: %v", p.name, err)
			}
		}
	}
	// Degraded mode too: no user namespace there, and started by root the
	// agent is uid 0 without any capability.
	for _, mode := range [][]string{nil, {"--x-degraded"}} {
		r := run(t, runOpts{}, append(mode, everydaySelf(t, "fanotify")...)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d\nstdout: %s\nstderr: %s", mode, r.code, r.stdout, r.stderr)
		}
		checkFanotify(t, mode, r.stdout)
	}
}

func checkFanotify(t *testing.T, mode []string, stdout string) {
	t.Helper()
	for _, p := range fanotifyProbes {
		var want string
		switch {
		case !p.privileged:
			want = fmt.Sprintf("FANOTIFY %s <nil>\n", p.name)
		case p.markFlags&(unix.FAN_MARK_MOUNT|unix.FAN_MARK_FILESYSTEM) != 0:
			want = fmt.Sprintf("FANOTIFY %s mark: %v\n", p.name, unix.EPERM)
		default:
			want = fmt.Sprintf("FANOTIFY %s init: %v\n", p.name, unix.EPERM)
		}
		if !strings.Contains(stdout, want) {
			t.Errorf("%v: want %q inside, got:\n%s", mode, strings.TrimSpace(want), stdout)
		}
	}
}
