package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestRlimits(t *testing.T) {
	oldGet, oldNS, oldProc := getrlimit, nprocPerUserNS, procRoot
	t.Cleanup(func() { getrlimit, nprocPerUserNS, procRoot = oldGet, oldNS, oldProc })
	getrlimit = func(res int, r *unix.Rlimit) error {
		r.Cur, r.Max = 1024, 4096 // a tight hard limit for every resource
		if res == unix.RLIMIT_AS || res == unix.RLIMIT_NPROC || res == unix.RLIMIT_FSIZE {
			r.Cur, r.Max = unix.RLIM_INFINITY, unix.RLIM_INFINITY
		}
		return nil
	}
	// A fake /proc: uid 1000 has a process with 3 threads and one with 1.
	procRoot = t.TempDir()
	for pid, status := range map[string]string{
		"10":   "Name:\tx\nUid:\t1000\t1000\t1000\t1000\nThreads:\t3\n",
		"11":   "Name:\ty\nUid:\t1000\t0\t0\t0\nThreads:\t1\n",
		"12":   "Name:\tz\nUid:\t0\t1000\t0\t0\nThreads:\t9\n", // real uid 0: not counted
		"self": "Uid:\t1000\t1000\t1000\t1000\n",
	} {
		os.MkdirAll(filepath.Join(procRoot, pid), 0o755)
		os.WriteFile(filepath.Join(procRoot, pid, "status"), []byte(status), 0o644)
	}
	type want map[int]uint64
	for _, tc := range []struct {
		name    string
		lim     Limits
		cgroup  bool
		perNS   bool
		want    want
		wantErr string
	}{
		{"cgroup: only nofile+core", Limits{MemoryBytes: 64 << 20, Pids: 64}, true, true,
			want{unix.RLIMIT_NOFILE: 4096, unix.RLIMIT_CORE: 0}, ""},
		{"default nofile capped at hard", Limits{}, true, true,
			want{unix.RLIMIT_NOFILE: 4096, unix.RLIMIT_CORE: 0}, ""},
		{"explicit nofile", Limits{NoFile: 256, FileSize: 1 << 20}, true, true,
			want{unix.RLIMIT_NOFILE: 256, unix.RLIMIT_FSIZE: 1 << 20, unix.RLIMIT_CORE: 0}, ""},
		{"nofile above hard", Limits{NoFile: 1 << 20}, true, true, nil, "hard limit"},
		{"none, per-userns nproc", Limits{MemoryBytes: 64 << 20, Pids: 64}, false, true,
			want{unix.RLIMIT_NOFILE: 4096, unix.RLIMIT_CORE: 0, unix.RLIMIT_AS: 64 << 20, unix.RLIMIT_NPROC: 64}, ""},
		{"none, old kernel adds the uid's tasks", Limits{Pids: 64}, false, false,
			want{unix.RLIMIT_NOFILE: 4096, unix.RLIMIT_CORE: 0, unix.RLIMIT_NPROC: 68}, ""},
		{"none, unlimited pids", Limits{Pids: -1}, false, true,
			want{unix.RLIMIT_NOFILE: 4096, unix.RLIMIT_CORE: 0}, ""},
		{"invalid", Limits{MemoryBytes: -5}, false, true, nil, "must be positive"},
	} {
		nprocPerUserNS = func() bool { return tc.perNS }
		rl, err := Rlimits(tc.lim, tc.cgroup, 1000)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err = %v, want %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got := want{}
		for _, r := range rl {
			if r.Cur != r.Max {
				t.Errorf("%s: %s soft %d != hard %d", tc.name, RlimitName(r.Resource), r.Cur, r.Max)
			}
			got[r.Resource] = r.Max
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
		for res, v := range tc.want {
			if g, ok := got[res]; !ok || g != v {
				t.Errorf("%s: %s = %d (present %v), want %d", tc.name, RlimitName(res), g, ok, v)
			}
		}
	}
}

// Jail inside a jail: the outer RLIMIT_NPROC is in force. When only the
// uid's existing tasks push the host-wide value past the hard limit, that
// limit is used; a budget that is itself above it is still an error.
func TestRlimitsNprocUnderOuterLimit(t *testing.T) {
	oldGet, oldNS, oldProc := getrlimit, nprocPerUserNS, procRoot
	t.Cleanup(func() { getrlimit, nprocPerUserNS, procRoot = oldGet, oldNS, oldProc })
	getrlimit = func(res int, r *unix.Rlimit) error {
		r.Cur, r.Max = unix.RLIM_INFINITY, unix.RLIM_INFINITY
		if res == unix.RLIMIT_NPROC {
			r.Cur, r.Max = 66, 66
		}
		return nil
	}
	nprocPerUserNS = func() bool { return true }
	procRoot = t.TempDir()
	os.MkdirAll(filepath.Join(procRoot, "10"), 0o755)
	os.WriteFile(filepath.Join(procRoot, "10", "status"), []byte("Uid:\t1000\t1000\t1000\t1000\nThreads:\t4\n"), 0o644)

	rl, err := Rlimits(Limits{Pids: 64, NprocHostWide: true}, false, 1000)
	if err != nil {
		t.Fatalf("budget 64 under an outer limit of 66 with 4 tasks running: %v", err)
	}
	for _, r := range rl {
		if r.Resource == unix.RLIMIT_NPROC && r.Max != 66 {
			t.Errorf("RLIMIT_NPROC %d, want the outer hard limit 66", r.Max)
		}
	}
	if _, err := Rlimits(Limits{Pids: 100, NprocHostWide: true}, false, 1000); err == nil || !strings.Contains(err.Error(), "hard limit") {
		t.Errorf("budget 100 above the hard limit 66: err = %v, want the hard-limit error", err)
	}
}
