//go:build !linux

package cgroup

// Open is not supported outside Linux.
func Open(name string, lim Limits, opts Options) (Group, Report, error) {
	return nil, Report{Mode: "none"}, ErrUnsupported
}

// CleanupStale does nothing outside Linux.
func CleanupStale() []error { return nil }

// Rlimits is not supported outside Linux.
func Rlimits(lim Limits, haveCgroup bool, uid int) ([]Rlimit, error) {
	return nil, ErrUnsupported
}

// ApplyRlimits is not supported outside Linux.
func ApplyRlimits(rl []Rlimit) error { return ErrUnsupported }
