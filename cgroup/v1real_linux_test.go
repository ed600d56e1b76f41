package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestV1CoMountedOneGroup: on a fake v1 tree where cpu and cpuacct are
// symlinks to one co-mounted hierarchy (cpu,cpuacct, as most distributions
// mount it), openV1 makes one group there, not two, and writes the quota
// into it; plain hierarchies keep the path as the host names it. Seen
// failing with v1Real resolving no symlink (four groups, two of them the
// same directory made twice: "make cgroup: ... file exists").
func TestV1CoMountedOneGroup(t *testing.T) {
	root := t.TempDir()
	for _, h := range []string{"pids", "freezer", "cpu,cpuacct"} {
		if err := os.MkdirAll(filepath.Join(root, h, "s"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, h, "cgroup.procs"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range []string{"cpu", "cpuacct"} {
		if err := os.Symlink("cpu,cpuacct", filepath.Join(root, l)); err != nil {
			t.Fatal(err)
		}
	}
	self := filepath.Join(root, "self-cgroup")
	if err := os.WriteFile(self, []byte("4:cpu,cpuacct:/s\n3:pids:/s\n2:freezer:/s\n1:name=systemd:/s\n0::/s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	oldMk, oldRm, oldE := mkdirGroup, rmdirGroup, geteuid
	t.Cleanup(func() { mkdirGroup, rmdirGroup, geteuid = oldMk, oldRm, oldE })
	geteuid = func() int { return 0 }
	mkdirGroup = func(p string) error {
		if err := os.Mkdir(p, 0o755); err != nil {
			return err
		}
		for _, f := range []string{"cgroup.procs", "tasks", "pids.max", "cpu.cfs_period_us", "cpu.cfs_quota_us", "freezer.state"} {
			if err := os.WriteFile(filepath.Join(p, f), nil, 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	rmdirGroup = func(p string) error { return os.RemoveAll(p) }
	g, rep, err := Open("x", Limits{CPUs: 1, Pids: 10}, Options{Root: root, SelfCgroup: self, DisableV2: true, Require: true})
	if err != nil {
		t.Fatal(err)
	}
	v1 := g.(*v1Group)
	cpuDir := v1.dirs["cpu"]
	if len(v1.order) != 3 || cpuDir != v1.dirs["cpuacct"] || filepath.Dir(cpuDir) != filepath.Join(root, "cpu,cpuacct", "s") {
		t.Fatalf("groups %v (%v), want three, cpu and cpuacct one in cpu,cpuacct/s", v1.order, v1.dirs)
	}
	if d := v1.dirs["pids"]; filepath.Dir(d) != filepath.Join(root, "pids", "s") {
		t.Errorf("pids group %s", d)
	}
	if q, _ := os.ReadFile(filepath.Join(cpuDir, "cpu.cfs_quota_us")); strings.TrimSpace(string(q)) != "100000" {
		t.Errorf("quota %q", q)
	}
	if rep.Mode != "v1" {
		t.Errorf("report %+v", rep)
	}
	if err := g.Delete(); err != nil {
		t.Fatal(err)
	}
}
