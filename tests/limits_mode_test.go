//go:build linux

package tests

import (
	"regexp"
	"sync"
	"testing"
)

// The limits mode in force for whoever runs the tests, as jail itself
// reports it (-v: "limits: cgroup MODE"), instead of assuming "root means
// cgroup v1": a unified (v2) host as root gives v2, a delegated systemd
// scope gives v2 unprivileged, and an ordinary user without one gets none
// (the memory watch, rlimits).
var (
	limitsModeOnce sync.Once
	limitsModeVal  string
)

func limitsMode(t testing.TB) string {
	t.Helper()
	limitsModeOnce.Do(func() {
		r := run(t, runOpts{}, "-v", "--memory", "64M", "--cpus", "1", "--pids", "64", "--", "true")
		if m := regexp.MustCompile(`limits: cgroup (v1|v2|none)`).FindStringSubmatch(r.stderr); m != nil {
			limitsModeVal = m[1]
		}
	})
	if limitsModeVal == "" {
		t.Fatalf("jail -v did not say which limits mode is in force")
	}
	return limitsModeVal
}

// limitsCgroup: a cgroup (v1 or v2) enforces the limits.
func limitsCgroup(t testing.TB) bool { return limitsMode(t) != "none" }
