package ucount

import "golang.org/x/sys/unix"

const rlimInfinity = unix.RLIM_INFINITY

// rlimits are the per-user counters checked against rlimits; their count
// is charged to the host user as well (inc_rlimit_ucounts).
var rlimits = []struct {
	res  int
	name string
	why  string
}{
	{unix.RLIMIT_SIGPENDING, "RLIMIT_SIGPENDING", "queued signals (sigqueue, timers)"},
	{unix.RLIMIT_MSGQUEUE, "RLIMIT_MSGQUEUE", "POSIX message queue bytes"},
	{unix.RLIMIT_MEMLOCK, "RLIMIT_MEMLOCK", "locked shared memory"},
}

func getrlimit(res int) (uint64, error) {
	var r unix.Rlimit
	if err := unix.Getrlimit(res, &r); err != nil {
		return 0, err
	}
	return r.Cur, nil
}
