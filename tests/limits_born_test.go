//go:build linux

package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// limitsSupervisorThreads lists the supervisor's threads with their
// /proc/.../cgroup files.
func limitsSupervisorThreads(sup int) map[string]string {
	out := map[string]string{}
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", sup))
	for _, tk := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/cgroup", sup, tk.Name()))
		if err == nil {
			out[tk.Name()] = string(b)
		}
	}
	return out
}

// limitsInitOf is the sandbox's init: the supervisor's one child.
func limitsInitOf(t *testing.T, sup int) string {
	t.Helper()
	var kids []string
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", sup))
	for _, tk := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", sup, tk.Name()))
		kids = append(kids, strings.Fields(string(b))...)
	}
	if len(kids) != 1 {
		t.Fatalf("the supervisor %d has children %v, want init alone", sup, kids)
	}
	return kids[0]
}

// Init and every process of the sandbox are in the sandbox's group in
// every hierarchy the limits use, and no thread of the supervisor is: as
// root on this host (cgroup v1) the thread that starts init joins the
// groups for init's clone and leaves them (ns.Config.JoinThread); a thread
// left there would be counted in pids.current, frozen and listed by the
// kill, and keep the group from being removed. At the end the groups are
// gone. Without a cgroup (an ordinary user here) no group is made at all;
// with v2, init is cloned into its group and the supervisor stays out.
//
// Seen failing (root): with leave writing nothing, "supervisor thread ...
// is in the sandbox's group" and the run's "remove cgroup" error; with
// JoinThread not wired (and no other join), "init ... is not in a
// jail-N-* group".
func TestLimitsInitBornInCgroup(t *testing.T) {
	m := marker()
	script := fmt.Sprintf(": %s\necho ready > ready\nuntil [ -e stop ]; do sleep 0.05; done", m)
	p := limitsSh(t, []string{"--memory", "256M", "--cpus", "1", "--pids", "64"}, script)
	limitsWaitFor(t, p, 10*time.Second, "ready", func() bool { return limitsFileHas(filepath.Join(p.ws, "ready"), "ready") })
	sup := p.cmd.Process.Pid
	init := limitsInitOf(t, sup)
	agents := procsWith(m)
	if len(agents) == 0 {
		t.Fatalf("no process of the sandbox found (marker %s)", m)
	}
	want := fmt.Sprintf("/jail-%d-", sup)
	mode := limitsMode(t)
	switch mode {
	case "v1":
		for _, pid := range append([]string{init}, agents...) {
			if ok, cg := limitsInJailCgroup(pid, sup, "memory", "pids", "cpu", "cpuacct", "freezer"); !ok && cg != "" {
				t.Errorf("process %s (init %s) is not in a jail-%d-* group in every hierarchy:\n%s", pid, init, sup, cg)
			}
		}
		dirs := limitsCgroupDirs(sup)
		if len(dirs) < 4 { // memory, pids, cpu(,cpuacct), freezer
			t.Errorf("the sandbox's groups: %v, want one in each of memory, pids, cpu, freezer", dirs)
		}
		threads := limitsSupervisorThreads(sup)
		for _, d := range dirs {
			b, _ := os.ReadFile(filepath.Join(d, "tasks"))
			for _, tid := range strings.Fields(string(b)) {
				if _, ok := threads[tid]; ok {
					t.Errorf("supervisor thread %s is in the sandbox's group %s", tid, d)
				}
			}
		}
	case "v2":
		for _, pid := range append([]string{init}, agents...) {
			if cg := limitsProcCgroup(pid); !strings.Contains(cg, want) && cg != "" {
				t.Errorf("process %s (init %s) is not in a jail-%d-* group:\n%s", pid, init, sup, cg)
			}
		}
	case "none":
		if dirs := limitsCgroupDirs(sup); len(dirs) > 0 {
			t.Errorf("no cgroup in force, yet groups were made: %v", dirs)
		}
	}
	for tid, cg := range limitsSupervisorThreads(sup) {
		if strings.Contains(cg, want) {
			t.Errorf("supervisor thread %s is in the sandbox's group:\n%s", tid, cg)
		}
	}
	if err := os.WriteFile(filepath.Join(p.ws, "stop"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p.wait(15 * time.Second)
	if p.code != 0 || strings.Contains(p.stderr.String(), "remove cgroup") {
		t.Errorf("jail exited %d:\n%s", p.code, p.dump())
	}
	limitsNoCgroupLeft(t, sup)
}
