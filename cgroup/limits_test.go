package cgroup

import "testing"

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		lim  Limits
		ok   bool
	}{
		{"zero", Limits{}, true},
		{"normal", Limits{MemoryBytes: 512 << 20, CPUs: 0.5, Pids: 64}, true},
		{"negative memory", Limits{MemoryBytes: -1}, false},
		{"tiny memory", Limits{MemoryBytes: 4096}, false},
		{"negative cpus", Limits{CPUs: -1}, false},
		{"tiny cpus", Limits{CPUs: 0.001}, false},
		{"negative fsize", Limits{FileSize: -1}, false},
		{"unlimited pids", Limits{Pids: -1}, true},
	} {
		err := tc.lim.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("%s: Validate() = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	if p := (Limits{}).pidsLimit(); p != DefaultPids {
		t.Errorf("default pids = %d, want %d", p, DefaultPids)
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 1: "1", 1024: "1k", 1536: "1536", 64 << 20: "64M", 3 << 29: "1536M", 1 << 30: "1G", 1 << 40: "1T"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}
