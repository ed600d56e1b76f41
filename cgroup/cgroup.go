package cgroup

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Limits is what the user asked for. Zero means "no limit" except Pids, where
// zero means DefaultPids and a negative value means no limit.
type Limits struct {
	MemoryBytes int64   // memory (and memory+swap) ceiling for the whole sandbox
	CPUs        float64 // CPU bandwidth: 0.5 = half a CPU, 2 = two CPUs
	Pids        int64   // max processes+threads; 0 = DefaultPids, <0 = unlimited
	NoFile      uint64  // RLIMIT_NOFILE; 0 = DefaultNoFile (capped at the hard limit)
	FileSize    int64   // RLIMIT_FSIZE in bytes; 0 = unlimited
	// WatchMemory: without a cgroup, the caller watches the sandbox's
	// memory itself (package memwatch) and kills it on overrun, so no
	// RLIMIT_AS is set (it breaks runtimes that reserve address space).
	WatchMemory bool
	// NprocHostWide: the sandbox has no user namespace of its own (jail
	// --degraded), so RLIMIT_NPROC counts every task of the uid host-wide
	// and must include the uid's current count.
	NprocHostWide bool
}

// DefaultPids is the pids budget when Limits.Pids is zero.
const DefaultPids = 1024

// DefaultNoFile is the RLIMIT_NOFILE when Limits.NoFile is zero.
const DefaultNoFile = 8192

// cpuPeriodUs is the CFS bandwidth period; the quota is CPUs*period.
const cpuPeriodUs = 100000

// Options steer Open.
type Options struct {
	// Require makes Open fail (wrapping ErrNoCgroup) instead of falling back
	// to rlimits only. Upstream maps it to exit 125.
	Require bool
	// Root is the cgroupfs root; "" means /sys/fs/cgroup. Tests point it at a
	// fake tree.
	Root string
	// SelfCgroup is a file in /proc/<pid>/cgroup format describing the
	// caller's cgroups; "" means /proc/self/cgroup.
	SelfCgroup string
	// DisableV1 skips the cgroup v1 fallback (tests, or hosts where v1 must
	// not be touched).
	DisableV1 bool
	// DisableV2 skips cgroup v2 (tests).
	DisableV2 bool
	// Scope, when set, is asked for a delegated cgroup v2 subtree when the
	// caller's own cgroup is not one it may use alone (an ordinary user on
	// a systemd host, whose terminal's cgroup holds the shell too). It
	// moves the calling process into a new cgroup and returns that cgroup's
	// path relative to the cgroup2 root (the sandbox wires package
	// userscope in: a transient systemd user scope with Delegate=yes). Open
	// checks in SelfCgroup that the process is really there, then uses it
	// as for "leaf" (Report.Strategy "scope"). Its error becomes part of
	// Report.Reason and of the warnings.
	Scope func() (string, error)
}

// Report says what Open chose and why, for `-v`, `jail doctor` and the
// audit trail's start event.
type Report struct {
	Mode     string   // "v2", "v1" or "none"
	Strategy string   // v2: "leaf", "scope", "sibling", "root"; v1: "v1"; none: "none"
	Path     string   // the group directory (v1: the memory controller's)
	Enforced []string // e.g. "memory=64M(cgroup)", "pids=64(cgroup)"
	Warnings []string // weaker limits and why; print them
	Reason   string   // why the better modes were not used
	// ScopeErr is why Options.Scope gave no usable subtree (nil when it
	// was not asked, or when it worked).
	ScopeErr error
}

// Events are the limit hits counted by the kernel since the group was made.
type Events struct {
	OOMKills      uint64 // processes killed by the memory limit
	MemoryMaxHits uint64 // times usage hit the limit (v2 "max", v1 failcnt)
	PidsMaxHits   uint64 // forks refused by pids.max
}

// Stats are usage figures for the exit report.
type Stats struct {
	CPU         time.Duration // user+system cpu time of the whole group
	MemoryPeak  uint64        // bytes; 0 when the kernel does not track it
	PidsCurrent uint64
	PidsPeak    uint64 // 0 when the kernel does not track it (v1, v2 < 6.1)
}

// Group is a live cgroup (or the "none" stand-in) holding the sandbox.
// Methods are safe to call from one goroutine at a time.
type Group interface {
	// Mode is "v2", "v1" or "none".
	Mode() string
	// Path is the group directory ("" for none).
	Path() string
	// FD returns a directory fd for SysProcAttr.UseCgroupFD/CgroupFD
	// (clone3 CLONE_INTO_CGROUP); ok is false except in v2 mode.
	// The fd stays owned by the Group (closed by Delete).
	FD() (fd int, ok bool)
	// Add moves a process (all its threads) into the group.
	Add(pid int) error
	// Kill SIGKILLs every process in the group and waits until it is empty.
	Kill() error
	// Events returns the OOM and pids-limit counters.
	Events() (Events, error)
	// Stats returns cpu time and peak usage.
	Stats() (Stats, error)
	// Delete removes the group; it retries while exiting processes linger
	// and fails with an error wrapping ErrBusy if processes remain.
	Delete() error
	// Only tells whether the kernel lists no process in the group but pid
	// (pid may have left it already) and no group below it: false when
	// the group cannot tell (none) or a read fails.
	Only(pid int) bool
}

// ThreadJoiner is a Group (cgroup v1) that the thread which starts the
// sandbox's first process joins by itself for that process's clone: see
// JoinThread in v1_linux.go. v2 clones into the group (FD) instead.
type ThreadJoiner interface {
	Group
	// JoinThread moves the calling, locked thread into the group and
	// returns leave, which moves it back. After an error from either the
	// caller must end the thread.
	JoinThread() (leave func() error, err error)
}

// Errors callers check with errors.Is.
var (
	ErrNoCgroup    = errors.New("no usable cgroup for resource limits")
	ErrBusy        = errors.New("cgroup still has processes")
	ErrUnsupported = errors.New("cgroup limits are only supported on Linux")
)

// Rlimit is one setrlimit(2) call for init to make before exec.
type Rlimit struct {
	Resource int // unix.RLIMIT_*
	Cur, Max uint64
}

// FormatSize renders bytes the way policy.ParseSize reads them (64M, 1G,
// 1536k). policy has its own copy: mechanism packages import no jail package.
func FormatSize(n int64) string {
	for _, u := range []struct {
		s string
		v int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"k", 1 << 10}} {
		if n >= u.v && n%u.v == 0 {
			return strconv.FormatInt(n/u.v, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}

// pidsLimit resolves the Pids convention; -1 means unlimited.
func (l Limits) pidsLimit() int64 {
	switch {
	case l.Pids == 0:
		return DefaultPids
	case l.Pids < 0:
		return -1
	}
	return l.Pids
}

// Validate rejects nonsensical limits with a message saying what to do.
func (l Limits) Validate() error {
	if l.MemoryBytes < 0 {
		return fmt.Errorf("memory limit %d: must be positive (e.g. 512M)", l.MemoryBytes)
	}
	if l.MemoryBytes > 0 && l.MemoryBytes < 1<<20 {
		return fmt.Errorf("memory limit %d bytes: below 1M nothing can run (use e.g. 64M)", l.MemoryBytes)
	}
	if l.CPUs < 0 || math.IsNaN(l.CPUs) || math.IsInf(l.CPUs, 0) {
		return fmt.Errorf("cpus %v: must be a positive number (e.g. 0.5)", l.CPUs)
	}
	if l.CPUs > 0 && l.CPUs*cpuPeriodUs < 1000 {
		return fmt.Errorf("cpus %v: below 0.01 (the kernel's 1ms quota minimum)", l.CPUs)
	}
	if l.FileSize < 0 {
		return fmt.Errorf("file size limit %d: must be positive", l.FileSize)
	}
	return nil
}
