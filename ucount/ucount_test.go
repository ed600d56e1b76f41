package ucount

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func fakeSysctls(t *testing.T, vals map[string]string) string {
	t.Helper()
	d := t.TempDir()
	for k, v := range vals {
		if err := os.WriteFile(filepath.Join(d, k), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func TestPlan(t *testing.T) {
	dir := fakeSysctls(t, map[string]string{
		"max_inotify_instances": "128",
		"max_inotify_watches":   "192536",
		"max_fanotify_groups":   "128",
		"max_fanotify_marks":    "3",
		"max_user_namespaces":   "63000",
		"max_net_namespaces":    "63000",
		"max_future_things":     "1000",
		"not_a_limit":           "7",
	})
	rl := map[int]uint64{}
	for i, r := range rlimits {
		rl[r.res] = uint64(1000 * (i + 1))
	}
	if len(rlimits) > 0 {
		rl[rlimits[0].res] = rlimInfinity // unlimited on the host: nothing to protect
	}
	got, err := Plan(Source{SysctlDir: dir, Getrlimit: func(res int) (uint64, error) { return rl[res], nil }})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{
		"max_inotify_instances": 32,
		"max_inotify_watches":   48134,
		"max_fanotify_groups":   32,
		"max_fanotify_marks":    0, // rounds down: never above the share
		"max_user_namespaces":   15750,
		"max_net_namespaces":    15750,
		"max_future_things":     250, // unknown counters are bounded too
	}
	for i, r := range rlimits {
		if i > 0 {
			want[r.name] = uint64(1000*(i+1)) / Share
		}
	}
	seen := map[string]bool{}
	for _, b := range got {
		seen[b.Name] = true
		w, ok := want[b.Name]
		if !ok {
			t.Errorf("unexpected bound %+v", b)
			continue
		}
		if b.Value != w {
			t.Errorf("%s = %d, want %d", b.Name, b.Value, w)
		}
		if b.Value > b.Host {
			t.Errorf("%s: sandbox %d above host %d", b.Name, b.Value, b.Host)
		}
		if b.Why == "" || !strings.Contains(b.String(), b.Name) {
			t.Errorf("%s: no reason or bad String %q", b.Name, b.String())
		}
		wantKind := KindUserNS
		if strings.HasPrefix(b.Name, "RLIMIT_") {
			wantKind = KindRlimit
		}
		if b.Kind != wantKind {
			t.Errorf("%s: kind %s, want %s", b.Name, b.Kind, wantKind)
		}
	}
	for n := range want {
		if !seen[n] {
			t.Errorf("no bound for %s", n)
		}
	}
}

func TestPlanErrors(t *testing.T) {
	ok := func(int) (uint64, error) { return 10, nil }
	if _, err := Plan(Source{SysctlDir: filepath.Join(t.TempDir(), "missing"), Getrlimit: ok}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing dir: %v", err)
	}
	for _, v := range []string{"lots", "12\n34", "12 34", ""} {
		bad := fakeSysctls(t, map[string]string{"max_inotify_watches": v})
		if _, err := Plan(Source{SysctlDir: bad, Getrlimit: ok}); err == nil {
			t.Errorf("unparsable value %q accepted", v)
		}
	}
	if len(rlimits) > 0 {
		good := fakeSysctls(t, map[string]string{"max_inotify_watches": "8"})
		fail := func(int) (uint64, error) { return 0, errors.New("boom") }
		if _, err := Plan(Source{SysctlDir: good, Getrlimit: fail}); err == nil {
			t.Error("getrlimit failure ignored")
		}
	}
}

// The real host: every counter the kernel has is bounded below its limit.
func TestPlanHost(t *testing.T) {
	if _, err := os.Stat("/proc/sys/user"); err != nil {
		t.Skip("no /proc/sys/user")
	}
	got, err := Plan(Source{})
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir("/proc/sys/user")
	n := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "max_") {
			n++
		}
	}
	users := 0
	for _, b := range got {
		if b.Kind == KindUserNS {
			users++
			// The value read through the directory's descriptor (one
			// read, ending at the newline) is the file's, as
			// os.ReadFile reads it.
			want, err := readUint(filepath.Join("/proc/sys/user", b.Name))
			if err != nil || b.Host != want {
				t.Errorf("%s: host %d, os.ReadFile says %d (%v)", b.Name, b.Host, want, err)
			}
		}
	}
	if users != n {
		t.Errorf("%d user namespace bounds for %d counters: %+v", users, n, got)
	}
}

// TestPlanInNameOrder: the counters come in name order (os.ReadDir's, the
// listing before it was read through the directory's descriptor), whatever
// order the directory lists them in, so that a start's spec is the same
// from one start to the next; on the fake directory and on the host's.
func TestPlanInNameOrder(t *testing.T) {
	fake := map[string]string{}
	for _, n := range []string{"max_d", "max_b", "max_e", "max_a", "max_c", "max_g", "max_f"} {
		fake[n] = "100"
	}
	ok := func(int) (uint64, error) { return 10, nil }
	for _, dir := range []string{fakeSysctls(t, fake), "/proc/sys/user"} {
		got, err := Plan(Source{SysctlDir: dir, Getrlimit: ok})
		if err != nil {
			if dir == "/proc/sys/user" && errors.Is(err, fs.ErrNotExist) {
				continue // a kernel without the counters: the fake's order holds
			}
			t.Fatal(err)
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var want, names []string
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "max_") {
				want = append(want, e.Name())
			}
		}
		for _, b := range got {
			if b.Kind == KindUserNS {
				names = append(names, b.Name)
			}
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s: counters %q, want %q", dir, names, want)
		}
	}
}

// BenchmarkPlanHost: the host's bounds, as every start reads them.
func BenchmarkPlanHost(b *testing.B) {
	if _, err := os.Stat("/proc/sys/user"); err != nil {
		b.Skip("no /proc/sys/user")
	}
	for b.Loop() {
		if _, err := Plan(Source{}); err != nil {
			b.Fatal(err)
		}
	}
}
