package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/procstat"
)

// Test hooks.
var (
	procRoot  = "/proc"
	getrlimit = unix.Getrlimit
	// nprocPerUserNS: since Linux 5.14 (ucounts) RLIMIT_NPROC is counted per
	// (user namespace, uid): inside the sandbox's fresh user namespace only
	// the sandbox's own tasks count. Verified on 6.18: with 43 tasks of uid
	// 1001 on the host, `ulimit -u 5` in a new user ns still allows 4 forks.
	nprocPerUserNS = func() bool { return kernelAtLeast(5, 14) }
)

func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return false
	}
	rel := unix.ByteSliceToString(u.Release[:])
	maj, rest, _ := strings.Cut(rel, ".")
	minS, _, _ := strings.Cut(rest, ".")
	minS = strings.TrimRightFunc(minS, func(r rune) bool { return r < '0' || r > '9' })
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(minS)
	if err1 != nil || err2 != nil {
		return false
	}
	return a > major || a == major && b >= minor
}

// RlimitName names a resource for messages ("RLIMIT_NOFILE").
func RlimitName(res int) string {
	switch res {
	case unix.RLIMIT_NOFILE:
		return "RLIMIT_NOFILE"
	case unix.RLIMIT_FSIZE:
		return "RLIMIT_FSIZE"
	case unix.RLIMIT_CORE:
		return "RLIMIT_CORE"
	case unix.RLIMIT_AS:
		return "RLIMIT_AS"
	case unix.RLIMIT_NPROC:
		return "RLIMIT_NPROC"
	case unix.RLIMIT_CPU:
		return "RLIMIT_CPU"
	}
	return "RLIMIT_" + strconv.Itoa(res)
}

// Rlimits computes the rlimits init must set (setrlimit, before exec of the
// agent). Call it in the SUPERVISOR (host /proc, before the sandbox starts)
// and ship the result in init's spec: init's /proc shows only the sandbox.
//
// Always: NOFILE (Limits.NoFile or DefaultNoFile), FSIZE when set, CORE 0.
// Without a cgroup (haveCgroup false) also:
//   - AS = MemoryBytes: per-process address space, the only memory rlimit
//     that bounds a process; weaker than a cgroup (see Report.Warnings).
//   - NPROC = Pids (+ uid's current task count on kernels < 5.14, where it
//     counts every task of the real uid host-wide). uid is the host uid the
//     sandbox runs as (the invoking uid, or 65534 when started by root).
//
// --cpus has no rlimit equivalent: RLIMIT_CPU caps total cpu seconds per
// process (then SIGXCPU/SIGKILL), not a share of a CPU, so it is not set;
// the wall-clock --timeout is the cpu backstop without a cgroup.
//
// No limit is asked above the current hard limit (raising a hard limit
// needs CAP_SYS_RESOURCE in the initial user namespace, which init lacks):
// an explicit request above it is an error, defaults are capped.
func Rlimits(lim Limits, haveCgroup bool, uid int) ([]Rlimit, error) {
	if err := lim.Validate(); err != nil {
		return nil, err
	}
	var out []Rlimit
	add := func(res int, want uint64, explicit bool, key string) error {
		var cur unix.Rlimit
		if err := getrlimit(res, &cur); err != nil {
			return fmt.Errorf("getrlimit %s: %w", RlimitName(res), err)
		}
		if want > cur.Max {
			if explicit {
				return fmt.Errorf("%s %d is above this session's hard limit %d for %s: ask for at most %d, or raise the hard limit (ulimit -H) before starting jail",
					key, want, cur.Max, RlimitName(res), cur.Max)
			}
			want = cur.Max
		}
		out = append(out, Rlimit{Resource: res, Cur: want, Max: want})
		return nil
	}
	nofile, explicit := lim.NoFile, true
	if nofile == 0 {
		nofile, explicit = DefaultNoFile, false
	}
	if err := add(unix.RLIMIT_NOFILE, nofile, explicit, "nofile"); err != nil {
		return nil, err
	}
	if lim.FileSize > 0 {
		if err := add(unix.RLIMIT_FSIZE, uint64(lim.FileSize), true, "max-file-size"); err != nil {
			return nil, err
		}
	}
	// Core dumps off: a core of the agent holds its API tokens and would be
	// written into the (writable, host-visible) working directory.
	out = append(out, Rlimit{Resource: unix.RLIMIT_CORE, Cur: 0, Max: 0})
	if haveCgroup {
		return out, nil
	}
	if lim.MemoryBytes > 0 && !lim.WatchMemory {
		if err := add(unix.RLIMIT_AS, uint64(lim.MemoryBytes), true, "memory"); err != nil {
			return nil, err
		}
	}
	if p := lim.pidsLimit(); p > 0 {
		n, explicit := uint64(p), true
		if !nprocPerUserNS() || lim.NprocHostWide {
			base, err := countTasks(uid)
			if err != nil {
				return nil, err
			}
			n += base
			// The base (tasks the uid already runs) is not the user's choice:
			// when only it pushes the value past the hard limit (jail inside
			// a jail whose own RLIMIT_NPROC is in force), that hard limit
			// already bounds the uid more tightly than asked, so it is used.
			var cur unix.Rlimit
			if err := getrlimit(unix.RLIMIT_NPROC, &cur); err == nil && uint64(p) <= cur.Max {
				explicit = false
			}
		}
		if err := add(unix.RLIMIT_NPROC, n, explicit, "pids"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// countTasks counts the tasks (threads included: RLIMIT_NPROC counts
// tasks) whose real uid is uid, from procRoot.
func countTasks(uid int) (uint64, error) {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return 0, fmt.Errorf("count processes of uid %d: %w", uid, err)
	}
	var n uint64
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		ruid, threads, ok := readStatus(filepath.Join(procRoot, e.Name(), "status"))
		if ok && ruid == uid {
			n += threads
		}
	}
	return n, nil
}

// readStatus returns the real uid and thread count from /proc/PID/status.
func readStatus(path string) (uid int, threads uint64, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false // raced with exit
	}
	uid, threads = -1, 1
	if v, ok := procstat.StatusField(b, "Uid"); ok {
		if fs := bytes.Fields(v); len(fs) > 0 {
			if n, err := strconv.Atoi(string(fs[0])); err == nil {
				uid = n
			}
		}
	}
	if v, ok := procstat.StatusField(b, "Threads"); ok {
		if n, err := strconv.ParseUint(string(v), 10, 64); err == nil {
			threads = n
		}
	}
	return uid, threads, uid >= 0
}

// ApplyRlimits sets each limit on the calling process (init, before exec;
// rlimits are per process and inherited across fork and exec).
func ApplyRlimits(rl []Rlimit) error {
	var errs []error
	for _, r := range rl {
		lim := unix.Rlimit{Cur: r.Cur, Max: r.Max}
		if err := unix.Setrlimit(r.Resource, &lim); err != nil {
			errs = append(errs, fmt.Errorf("setrlimit %s cur=%d max=%d: %w", RlimitName(r.Resource), r.Cur, r.Max, err))
		}
	}
	return errors.Join(errs...)
}
