package ns

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// userSysctlDir holds the limits of the calling process's user namespace
// (the kernel picks the table by current_user_ns()).
const userSysctlDir = "/proc/sys/user/"

// setUserNSLimits writes the per-user counter limits of the sandbox's user
// namespace. They are checked at every level of the namespace chain, so
// the host user's own count can then never be exhausted from inside; the
// agent cannot raise them (writing needs CAP_SYS_RESOURCE in this
// namespace, which init drops next). Fails closed: a limit that cannot
// be set stops the sandbox.
func setUserNSLimits(limits []UserNSLimit) error {
	for _, l := range limits {
		if !strings.HasPrefix(l.Name, "max_") || strings.ContainsAny(l.Name, "/.") {
			return fmt.Errorf("user namespace limit %q: not a /proc/sys/user/max_* name", l.Name)
		}
		p := userSysctlDir + l.Name
		if err := writeSysctl(p, strconv.FormatUint(l.Value, 10)); err != nil {
			return fmt.Errorf("set per-user limit %s=%d: %w", p, l.Value, err)
		}
	}
	return nil
}

// writeSysctl writes value to the proc file p through a bare descriptor:
// os.OpenFile would try Go's poller on it first (two fcntl and an
// epoll_ctl refused, and another on close: 4 of 7 system calls, for each
// of the limits, on init's path to the agent).
func writeSysctl(p, value string) error {
	fd, err := unix.Open(p, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: p, Err: err}
	}
	n, err := unix.Write(fd, []byte(value))
	if cerr := unix.Close(fd); err == nil && cerr != nil {
		err = cerr
	}
	if err == nil && n != len(value) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return &os.PathError{Op: "write", Path: p, Err: err}
	}
	return nil
}
