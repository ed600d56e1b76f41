package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/cgroup"
	"github.com/jail-sandbox/jail/memwatch"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/ucount"
	"github.com/jail-sandbox/jail/userscope"
)

// This file: limits and the kill switch.

// initPidsReserve is added to --pids for init's own threads.
const initPidsReserve = 16

func (r *runner) openCgroup(spec *ns.Spec) error {
	lim := cgroup.Limits{MemoryBytes: r.pol.Memory, CPUs: r.pol.CPUs, Pids: r.pol.Pids, NoFile: r.pol.NoFile, FileSize: r.pol.MaxFileSize,
		// Without a cgroup the supervisor watches memory (watchMemory)
		// instead of RLIMIT_AS, which breaks node, the JVM and Go.
		WatchMemory: true, NprocHostWide: r.degraded}
	if lim.Pids > 0 {
		// pids.max and RLIMIT_NPROC count threads, and jail's own init (a Go
		// program) runs a few: they get a reserve on top of the command's
		// budget, so a fork bomb at the limit cannot starve init (which
		// would then die and take the sandbox with it, but not cleanly).
		lim.Pids += initPidsReserve
	}
	opts := cgroup.Options{Require: r.pol.RequireLimits}
	if os.Geteuid() != 0 {
		// An ordinary user gets real limits from a delegated scope of the
		// systemd user manager, which jail asks for itself when its own
		// cgroup is not one (package userscope).
		opts.Scope = r.userScope
	}
	g, rep, err := cgroup.Open(fmt.Sprintf("jail-%d-%s", os.Getpid(), audit.NewID()[:8]), lim, opts)
	if err != nil {
		if errors.Is(err, cgroup.ErrNoCgroup) {
			return fmt.Errorf("`require-limits`: %w", err)
		}
		return fmt.Errorf("limits: %w", err)
	}
	r.group, r.cgRep = g, rep
	if rep.Strategy == "scope" {
		// The trail's start event says where the limits live.
		r.startNotes = append(r.startNotes, "limits: cgroup v2 in "+r.scopeUnit+", a scope with Delegate=yes from the systemd user manager")
	}
	uid := os.Getuid()
	if uid == 0 && !r.degraded {
		uid = ns.NobodyID
	}
	rls, err := cgroup.Rlimits(lim, g.Mode() != "none", uid)
	if err != nil {
		return fmt.Errorf("limits: %w", err)
	}
	for _, rl := range rls {
		nr := ns.Rlimit{Resource: rl.Resource, Cur: rl.Cur, Max: rl.Max}
		if rl.Resource == unix.RLIMIT_AS || rl.Resource == unix.RLIMIT_NPROC {
			spec.AgentRlimits = append(spec.AgentRlimits, nr)
		} else {
			spec.Rlimits = append(spec.Rlimits, nr)
		}
	}
	r.agentRlimits = spec.AgentRlimits
	via := ""
	if rep.Strategy == "scope" {
		via = " in " + r.scopeUnit + " of the systemd user manager"
	}
	// Said by sayLimits, once the user's values have passed their check: a
	// start refused for a mistake says only the mistake, as when the check
	// came before the cgroup.
	r.limitsDebug = fmt.Sprintf("limits: cgroup %s (%s)%s %s", rep.Mode, rep.Strategy, via, strings.Join(rep.Enforced, " "))
	if r.pol.Memory > 0 || r.pol.CPUs > 0 || r.pol.Verbose {
		for _, w := range rep.Warnings {
			// With a cgroup, only a limit asked for and not enforced is
			// said (a delegated scope without the cpu controller).
			if g.Mode() == "none" || strings.HasPrefix(w, "cpus:") {
				r.limitsNotes = append(r.limitsNotes, w)
			}
		}
	}
	return nil
}

// sayLimits says what openCgroup found (-v) and the limits it could not
// enforce.
func (r *runner) sayLimits() {
	if r.limitsDebug != "" {
		r.debugf("%s", r.limitsDebug)
	}
	for _, w := range r.limitsNotes {
		r.notef("%s", w)
	}
	r.limitsDebug, r.limitsNotes = "", nil
}

// userScope is cgroup.Options.Scope: it asks the systemd user manager for
// a transient scope with Delegate=yes holding the supervisor and returns
// its cgroup (cgroup.Open checks that the kernel agrees).
func (r *runner) userScope() (string, error) {
	sc, err := userscope.Start(context.Background(), userscope.Options{})
	if err != nil {
		return "", err
	}
	r.scopeUnit = sc.Unit
	return sc.Cgroup, nil
}

// watchMemory, without a cgroup, samples the sandbox's memory (package
// memwatch: PSS of init and its descendants, plus the private tmpfs file
// systems seen through init's root) and kills it past --memory. Watched,
// not kernel-enforced: the exit says so.
func (r *runner) watchMemory(spec *ns.Spec) {
	if r.pol.Memory <= 0 || r.group == nil || r.group.Mode() != "none" {
		return
	}
	root := fmt.Sprintf("/proc/%d/root", r.sb.Pid)
	var tmpfs []string
	if !r.degraded {
		for _, m := range spec.Mounts {
			if m.Kind == ns.KindTmpfs {
				tmpfs = append(tmpfs, root+m.Path)
			}
		}
		tmpfs = append(tmpfs, root+"/dev/shm")
	}
	tree := memwatch.Tree{Root: r.sb.Pid, Tmpfs: tmpfs}
	r.memWatch = &memwatch.Watch{Limit: uint64(r.pol.Memory), Interval: memInterval, Measure: tree.Measure}
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		r.memWatch.Run(r.ctx, func(s memwatch.Sample) {
			r.mu.Lock()
			r.memOver = &s
			r.mu.Unlock()
			r.kill("limit", fmt.Sprintf("memory %s over memory %s (watched)", cgroup.FormatSize(int64(s.Bytes)), cgroup.FormatSize(r.pol.Memory)))
		})
	}()
}

// memInterval is how often watchMemory samples.
const memInterval = 100 * time.Millisecond

// deleteCgroup kills what is left in the sandbox's cgroup and removes it,
// or waits for removeCgroup's removal; a failure is said after the trail
// is closed (run defers it after finish).
func (r *runner) deleteCgroup() {
	if r.group == nil {
		return
	}
	var err error
	if r.cgRemoved != nil {
		err = <-r.cgRemoved
	} else {
		_ = r.group.Kill()
		err = r.group.Delete()
	}
	if err != nil {
		r.errorf("remove cgroup: %v", err)
	}
}

// removeCgroup starts deleteCgroup's kill and removal in the background,
// once init has exited and the cgroup's figures are read: it then runs
// while the exit event is written and synced (the removal of two v1
// groups is 0.2-0.4 ms here). run's deferred deleteCgroup waits for it:
// jail never exits before its groups are gone.
func (r *runner) removeCgroup() {
	if r.group == nil || r.cgRemoved != nil {
		return
	}
	g, done := r.group, make(chan error, 1)
	r.cgRemoved = done
	go func() {
		_ = g.Kill()
		done <- g.Delete()
	}()
}

// kill ends the sandbox at once: the cgroup's kill (cgroup.kill or
// freeze-kill-thaw) where there is one, and SIGKILL to init, whose death makes
// the kernel kill every process of its pid namespace.
func (r *runner) kill(by, why string) { r.killFor(by, why, nil) }

// killReason is why the supervisor killed the sandbox ("" if it did not).
func (r *runner) killReason() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.killedBy
}

// killFor is kill naming who asked (jail kill through the control socket).
func (r *runner) killFor(by, why string, who *audit.Requester) {
	r.mu.Lock()
	first := r.killedBy == ""
	if first {
		r.killedBy = why
	}
	r.mu.Unlock()
	method := "pid1"
	if r.group != nil && r.group.Mode() != "none" {
		method = "cgroup-" + r.group.Mode()
	}
	if first {
		r.record(audit.Kill{By: by, Reason: why, Method: method, Signal: "SIGKILL", Requester: who})
		if r.trail != nil {
			_ = r.trail.Sync()
		}
	}
	_ = unix.Kill(r.sb.Pid, unix.SIGKILL)
	if r.group != nil {
		_ = r.group.Kill()
	}
}

// addCounters puts the per-user counter bounds into init's spec: user
// namespace limits for init to write, rlimits for init to set on itself
// before it starts the agent (soft and hard: the agent may not raise them).
func addCounters(spec *ns.Spec, bounds []ucount.Bound) {
	for _, b := range bounds {
		switch b.Kind {
		case ucount.KindUserNS:
			spec.UserNSLimits = append(spec.UserNSLimits, ns.UserNSLimit{Name: b.Name, Value: b.Value})
		case ucount.KindRlimit:
			spec.Rlimits = append(spec.Rlimits, ns.Rlimit{Resource: b.Resource, Cur: b.Value, Max: b.Value})
		}
	}
}

// cleanupStaleCgroups removes the empty groups killed runs left (package
// cgroup: only groups whose supervisor is gone, never this run's). Pure
// housekeeping, so it runs once the agent runs (or the start is undone),
// neither before init's clone nor while init builds the sandbox (it lists
// the parent groups: ~0.5-1 ms of CPU, a core init needs then).
func (r *runner) cleanupStaleCgroups() {
	for _, err := range cgroup.CleanupStale() {
		r.debugf("cleanup of a stale cgroup: %v", err)
	}
}
