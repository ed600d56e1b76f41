package ucount

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// Kinds of Bound.
const (
	// KindUserNS is a /proc/sys/user/NAME limit of the sandbox's user
	// namespace, written by init before it drops its capabilities.
	KindUserNS = "userns"
	// KindRlimit is a resource limit (soft and hard) set by init on itself
	// before it starts the agent; inherited by every process inside.
	KindRlimit = "rlimit"
)

// Share is the fraction of each host limit a sandbox gets: 1/Share.
const Share = 4

// Bound is one counter's limit inside the sandbox.
type Bound struct {
	// Name is the sysctl's name under /proc/sys/user (max_inotify_watches)
	// or the rlimit's (RLIMIT_SIGPENDING).
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Resource is the RLIMIT_* number of a KindRlimit.
	Resource int `json:"resource,omitempty"`
	// Host is the limit the host user has (the supervisor's namespace's
	// sysctl, or the supervisor's soft rlimit); Value the sandbox's.
	Host  uint64 `json:"host"`
	Value uint64 `json:"value"`
	Why   string `json:"why"`
}

// String is the --dry-run line of a bound.
func (b Bound) String() string {
	return fmt.Sprintf("%s %d (host %d; %s)", b.Name, b.Value, b.Host, b.Why)
}

// Source reads the host's limits. The zero value reads this process's
// /proc/sys/user and rlimits; tests set the fields.
type Source struct {
	// SysctlDir is /proc/sys/user when empty.
	SysctlDir string
	// Getrlimit returns the soft limit of resource; RLIM_INFINITY for none.
	Getrlimit func(resource int) (uint64, error)
}

// perUser are the /proc/sys/user counters that are not namespaces, and why
// each matters to the host user.
var perUser = map[string]string{
	"max_inotify_instances": "inotify instances: editors, file watchers, desktop services",
	"max_inotify_watches":   "inotify watches",
	"max_fanotify_groups":   "fanotify groups",
	"max_fanotify_marks":    "fanotify marks",
}

// Plan returns the bounds for a sandbox: every /proc/sys/user/max_* the
// kernel has (in directory order), then the rlimits.
func Plan(src Source) ([]Bound, error) {
	dir := src.SysctlDir
	if dir == "" {
		dir = "/proc/sys/user"
	}
	getrl := src.Getrlimit
	if getrl == nil {
		getrl = getrlimit
	}
	rd := openSysctls(dir)
	defer rd.close()
	names, err := rd.names() // sorted, as os.ReadDir's
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("per-user counters: %s is missing (a kernel without user namespace limits, before 4.9): %w", dir, err)
		}
		return nil, fmt.Errorf("per-user counters: %w", err)
	}
	var out []Bound
	for _, name := range names {
		if !strings.HasPrefix(name, "max_") {
			continue
		}
		host, err := rd.read(name)
		if err != nil {
			return nil, fmt.Errorf("per-user counters: %w", err)
		}
		b := Bound{Name: name, Kind: KindUserNS, Host: host, Value: host / Share, Why: perUser[name]}
		switch {
		case strings.HasSuffix(name, "_namespaces"):
			// Seccomp refuses new namespaces; this bounds what the
			// user's count can reach where --seccomp-replace allows them
			// (nested sandboxes). Not 0: that would overrule the user's
			// own filter.
			b.Why = "namespaces (seccomp refuses new ones unless seccomp-replace)"
		case b.Why == "":
			// A counter newer than this code: bounded like the others
			// rather than left to the sandbox.
			b.Why = "per-user counter"
		}
		out = append(out, b)
	}
	for _, r := range rlimits {
		host, err := getrl(r.res)
		if err != nil {
			return nil, fmt.Errorf("per-user counters: getrlimit %s: %w", r.name, err)
		}
		if host == rlimInfinity {
			// The host user's own processes have no limit to be starved of.
			continue
		}
		out = append(out, Bound{Name: r.name, Kind: KindRlimit, Resource: r.res, Host: host, Value: host / Share, Why: r.why})
	}
	return out, nil
}

func readUint(p string) (uint64, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	return parseUint(p, b)
}

// parseUint is the number a sysctl file p holds (b).
func parseUint(p string, b []byte) (uint64, error) {
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p, err)
	}
	return v, nil
}
