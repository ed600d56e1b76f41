package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"jail/audit"
	"jail/cgroup"
	"jail/netproxy"
	"jail/ns"
	"jail/policy"
	"jail/seccomp"
)

// Run runs the policy's command in a new sandbox and returns the exit code
// jail should exit with. Messages for the user go to stderr.
func Run(p *policy.Policy) int {
	// Whatever jail inherited beyond stdio stays with jail.
	ns.CloexecFrom(3)
	r := &runner{pol: p, stderr: os.Stderr, ptyCh: make(chan struct{}, 1), started: time.Now(), dialCh: make(chan dialReply, 1)}
	return r.run()
}

type runner struct {
	pol     *policy.Policy
	stderr  io.Writer
	plan    *Plan
	sb      *ns.Sandbox
	started time.Time
	ctx     context.Context
	cancel  context.CancelFunc

	trail        *audit.Writer
	id           string // the sandbox's id, also in the default trail's name
	group        cgroup.Group
	cgRep        cgroup.Report
	netPol       *netproxy.Policy
	guard        *seccomp.Guard
	pubs         []net.Listener // --publish listeners on the host
	dialMu       sync.Mutex     // one dial request to init at a time
	dialCh       chan dialReply
	pubPorts     []int
	agentRlimits []ns.Rlimit
	bg           sync.WaitGroup // proxy, DNS and exec-notify servers

	mu            sync.Mutex
	exit          *ns.Message // the agent's status, from init
	setupErr      *ns.Message
	agentPid      int
	killedBy      string // why the supervisor killed the sandbox
	timedOut      bool
	startRecorded bool
	trace         bool
	info          map[string]string
	pty           *os.File
	ptyCh         chan struct{} // signalled once the pty master has arrived
	ptyDone       chan struct{}
}

func (r *runner) tracef(step string) {
	if r.trace {
		fmt.Fprintf(r.stderr, "jail: supervisor %-14s %6.2f ms\n", step, float64(time.Since(r.started).Microseconds())/1000)
	}
}

func (r *runner) errorf(format string, a ...any) {
	fmt.Fprintf(r.stderr, "jail: "+format+"\n", a...)
}

func (r *runner) notef(format string, a ...any) {
	if !r.pol.Quiet {
		r.errorf(format, a...)
	}
}

func (r *runner) record(ev audit.Event) {
	if r.trail != nil {
		r.trail.Record(ev)
	}
}

// fail reports a setup failure: one line on stderr, a record, exit 125.
func (r *runner) fail(err error) int {
	r.errorf("%v", err)
	r.recordStart(nil)
	r.record(audit.Exit{Code: ExitSetup, Reason: "setup_failed", Error: err.Error(), WallMS: audit.Millis(time.Since(r.started))})
	r.closeTrail()
	return ExitSetup
}

func (r *runner) closeTrail() {
	if r.trail != nil {
		if err := r.trail.Close(); err != nil {
			r.errorf("audit trail %s: %v", r.trail.Path(), err)
		}
		r.trail = nil
	}
}

func (r *runner) run() int {
	plan, err := BuildPlan(r.pol, os.Environ())
	if err != nil {
		r.errorf("%v", err)
		return ExitSetup
	}
	r.plan = plan
	for _, n := range plan.Notes {
		if strings.HasPrefix(n, "--deny") {
			r.notef("%s", n)
		}
	}
	if r.pol.Net == policy.NetAllow {
		if r.netPol, err = buildNetPolicy(r.pol); err != nil {
			r.errorf("%v", err)
			return ExitSetup
		}
	}
	// Published ports are bound before anything starts: a busy port is a
	// setup error, not a surprise later.
	for _, spec := range r.pol.Publish {
		ps, err := netproxy.ParsePublish(spec)
		if err != nil {
			r.errorf("%v", err)
			return ExitSetup
		}
		if r.pol.DryRun {
			continue
		}
		ln, err := net.Listen("tcp", ps.HostAddr())
		if err != nil {
			r.errorf("--publish %s: %v (choose another host port)", spec, err)
			return ExitSetup
		}
		defer ln.Close()
		r.pubs = append(r.pubs, ln)
		r.pubPorts = append(r.pubPorts, int(ps.Port))
	}
	if !r.pol.NoExecAudit || len(r.pol.BlockCommand) > 0 {
		r.guard, err = seccomp.NewGuard(r.pol.BlockCommand, !r.pol.NoGuardRails, plan.Workspace, plan.Home)
		if err != nil {
			r.errorf("--block-command: %v", err)
			return ExitSetup
		}
		// The command itself is judged here, before anything starts.
		if rule := r.guard.Check(r.pol.Command, plan.Workspace); rule != "" {
			r.errorf("blocked command: %s (guard rail %s); drop it, or adjust --block-command/--no-guard-rails", strings.Join(r.pol.Command, " "), rule)
			return ExitNotExec
		}
	}
	spec := &ns.Spec{
		Mounts:   plan.Mounts,
		Hostname: r.pol.Hostname,
		Cwd:      plan.Workspace,
		Argv:     r.pol.Command,
		Env:      plan.Env,
		Hooks:    map[string][]byte{},
		// The network hook brings lo up itself; --net host has the host's.
		LoopbackUp: r.pol.Net == policy.NetNone,
	}
	if err := r.addHooks(spec); err != nil {
		r.errorf("%v", err)
		return ExitSetup
	}
	if r.pol.DryRun {
		plan.Print(os.Stdout)
		return 0
	}
	if err := r.openTrail(spec); err != nil {
		r.errorf("%v", err)
		return ExitSetup
	}
	if err := r.openCgroup(spec); err != nil {
		return r.fail(err)
	}
	defer r.deleteCgroup()

	if r.pol.Net == policy.NetHost {
		r.notef("--net host: the sandbox shares the host's network, with no filtering and no audit of connections")
	}
	interactive := term.IsTerminal(0) && term.IsTerminal(1)
	spec.Pty = interactive
	spec.Trace = os.Getenv("JAIL_TRACE") == "1"
	r.trace = spec.Trace
	r.tracef("before start")
	r.ctx, r.cancel = context.WithCancel(context.Background())
	defer r.cancel()

	// Signals are caught before the sandbox exists, so none is lost between
	// start and the relay loop.
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH)
	defer signal.Stop(sigs)

	cfg := ns.Config{
		Spec:     spec,
		Rootful:  os.Getuid() == 0,
		NetHost:  r.pol.Net == policy.NetHost,
		CgroupFD: -1,
		Stdin:    os.Stdin,
		Stdout:   os.Stdout,
		Stderr:   os.Stderr,
	}
	if fd, ok := r.group.FD(); ok {
		cfg.CgroupFD = fd
	} else if r.group.Mode() != "none" {
		cfg.BeforeSpec = r.group.Add
	}
	sb, err := ns.Start(cfg)
	if err != nil {
		return r.fail(err)
	}
	r.sb = sb
	r.tracef("init started")
	auditPath := ""
	if r.trail != nil {
		auditPath = r.trail.Path()
	}
	defer register(Entry{ID: r.id, Started: r.started, Command: r.pol.Command, Workspace: plan.Workspace, Audit: auditPath})()
	msgsDone := make(chan struct{})
	go r.readMessages(msgsDone)

	var restore func()
	defer func() {
		if restore != nil {
			restore()
		}
	}()
	var graceTimer, timeout <-chan time.Time
	if r.pol.Timeout > 0 {
		timeout = time.After(r.pol.Timeout)
	}
	interrupts := 0
	for {
		select {
		case s := <-sigs:
			sig := s.(syscall.Signal)
			if sig == syscall.SIGWINCH {
				r.resizePty()
				if r.ptyFile() != nil {
					continue
				}
			}
			r.record(audit.Signal{Signal: unix.SignalName(sig), Number: int(sig), From: "user", To: "agent", Forwarded: true})
			_ = unix.Kill(sb.Pid, sig)
			if sig == syscall.SIGINT || sig == syscall.SIGTERM || sig == syscall.SIGHUP {
				interrupts++
				if interrupts >= 2 && sig == syscall.SIGINT {
					r.kill("user", "second interrupt")
				} else if graceTimer == nil {
					graceTimer = time.After(r.pol.KillGrace)
				}
			}
		case <-timeout:
			r.mu.Lock()
			r.timedOut = true
			r.mu.Unlock()
			r.notef("timeout: %v elapsed, sending SIGTERM (SIGKILL in %v)", r.pol.Timeout, r.pol.KillGrace)
			r.record(audit.Timeout{LimitMS: audit.Millis(r.pol.Timeout), WallMS: audit.Millis(time.Since(r.started))})
			_ = unix.Kill(sb.Pid, unix.SIGTERM)
			timeout = nil
			if graceTimer == nil {
				graceTimer = time.After(r.pol.KillGrace)
			}
		case <-graceTimer:
			by := "user"
			if r.timedOut {
				by = "timeout"
			}
			r.kill(by, fmt.Sprintf("still running %v after SIGTERM", r.pol.KillGrace))
		case <-r.ptyCh:
			if restore == nil && interactive {
				restore = r.startRelay()
			}
		case <-sb.Done():
			<-msgsDone
			if r.ptyDone != nil {
				select {
				case <-r.ptyDone:
				case <-time.After(2 * time.Second):
				}
			}
			if restore != nil {
				restore()
				restore = nil
			}
			return r.finish()
		}
	}
}

// addHooks puts the feature configuration for init into the spec.
func (r *runner) addHooks(spec *ns.Spec) error {
	p := r.pol
	var err error
	set := func(name string, v any) {
		if err != nil {
			return
		}
		var b []byte
		b, err = json.Marshal(v)
		spec.Hooks[name] = b
	}
	set(ns.HookLandlock, r.plan.Landlock)
	sc := seccompHook{AllowPtrace: p.AllowPtrace, Replace: p.SeccompReplace, ExecNotify: !p.NoExecAudit || len(p.BlockCommand) > 0}
	if p.SeccompFile != "" {
		// Validated here, with errors naming the file; init parses the same
		// bytes again (the file may not be visible inside).
		data, rerr := os.ReadFile(p.SeccompFile)
		if rerr != nil {
			return fmt.Errorf("%w: --seccomp %s: %v", policy.ErrInvalid, p.SeccompFile, rerr)
		}
		if _, err := seccomp.ParsePolicy(p.SeccompFile, data); err != nil {
			return fmt.Errorf("%w: --seccomp: %v", policy.ErrInvalid, err)
		}
		sc.Extra, sc.ExtraName = data, p.SeccompFile
	} else if p.SeccompReplace {
		return fmt.Errorf("%w: --seccomp-replace needs --seccomp FILE", policy.ErrInvalid)
	}
	set(ns.HookSeccomp, sc)
	if p.Net == policy.NetAllow {
		set(ns.HookNetwork, netConfig{Fallback: p.ForceProxyAware})
	}
	if p.MaxFileSize > 0 {
		spec.IgnoreSIGXFSZ = true
	}
	return err
}

func buildNetPolicy(p *policy.Policy) (*netproxy.Policy, error) {
	cfg, err := netproxy.BuildConfig(netproxy.Flags{
		AllowDomains: p.AllowDomain, DenyDomains: p.DenyDomain, AllowIPs: p.AllowIP,
		AddHosts: p.AddHost, HostPorts: p.AllowHostPort,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", policy.ErrInvalid, err)
	}
	return netproxy.NewPolicy(cfg)
}

// openTrail creates the audit trail before anything runs, outside every path
// the sandbox can write, and hides it if it would be visible.
func (r *runner) openTrail(spec *ns.Spec) error {
	id := audit.NewID()
	r.id = id
	path := r.pol.AuditFile
	if path == "" {
		var err error
		if path, err = audit.DefaultPath(r.started, id); err != nil {
			return fmt.Errorf("audit trail: %w (pass --audit FILE)", err)
		}
	}
	// The agent must not be able to rewrite its own trail.
	if err := audit.CheckPlacement(path, r.plan.Writable); err != nil {
		return fmt.Errorf("--audit %s: %w", path, err)
	}
	w, err := audit.Create(path)
	if err != nil {
		return fmt.Errorf("audit trail: %w", err)
	}
	if r.pol.AuditSyslog {
		s, err := audit.NewSyslog()
		if err != nil {
			w.Close()
			return fmt.Errorf("--audit-syslog: %w", err)
		}
		w.AddSink(s)
	}
	r.trail = w
	spec.Mounts = append(spec.Mounts, hideTrail(w.Path(), spec.Mounts)...)
	return nil
}

// initPidsReserve is added to --pids for init's own threads.
const initPidsReserve = 16

// hideTrail returns the mounts that keep the trail out of the sandbox's
// sight. Where its directory is visible (the root's read-only view, or a
// --read bind), an empty, mode-0, read-only directory covers it, so neither
// this trail nor older ones can be listed, read or written. If the directory holds
// another mount of the plan (the workspace under it), covering it would hide
// that too: then the file alone is masked (its name stays visible).
func hideTrail(path string, plan []ns.Mount) []ns.Mount {
	dir := filepath.Dir(path)
	var deepest *ns.Mount
	for i := range plan {
		m := &plan[i]
		if dir == m.Path || strings.HasPrefix(dir, m.Path+"/") {
			if deepest == nil || len(m.Path) >= len(deepest.Path) { // later mounts cover earlier ones
				deepest = m
			}
		}
	}
	if deepest != nil && deepest.Kind == ns.KindTmpfs {
		return nil // under a private tmpfs already: not visible
	}
	for _, m := range plan {
		if m.Kind != ns.KindMask && m.Kind != ns.KindReadOnly && strings.HasPrefix(m.Path, dir+"/") {
			return []ns.Mount{{Kind: ns.KindMask, Path: path, FD: -1, Why: "the audit trail"}}
		}
	}
	return []ns.Mount{{Kind: ns.KindMask, Path: dir, Dir: true, FD: -1, Why: "the audit trail's directory"}}
}

func (r *runner) openCgroup(spec *ns.Spec) error {
	for _, err := range cgroup.CleanupStale() {
		if r.pol.Verbose {
			r.errorf("cleanup of a stale cgroup: %v", err)
		}
	}
	lim := cgroup.Limits{MemoryBytes: r.pol.Memory, CPUs: r.pol.CPUs, Pids: r.pol.Pids, NoFile: r.pol.NoFile, FileSize: r.pol.MaxFileSize}
	if lim.Pids > 0 {
		// pids.max and RLIMIT_NPROC count threads, and jail's own init (a Go
		// program) runs a few: they get a reserve on top of the command's
		// budget, so a fork bomb at the limit cannot starve init (which
		// would then die and take the sandbox with it, but not cleanly).
		lim.Pids += initPidsReserve
	}
	g, rep, err := cgroup.Open(fmt.Sprintf("jail-%d-%s", os.Getpid(), audit.NewID()[:8]), lim, cgroup.Options{Require: r.pol.RequireLimits})
	if err != nil {
		if errors.Is(err, cgroup.ErrNoCgroup) {
			return fmt.Errorf("--require-limits: %w", err)
		}
		return fmt.Errorf("limits: %w", err)
	}
	r.group, r.cgRep = g, rep
	uid := os.Getuid()
	if uid == 0 {
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
	if r.pol.Verbose {
		r.errorf("limits: cgroup %s (%s) %s", rep.Mode, rep.Strategy, strings.Join(rep.Enforced, " "))
	}
	if g.Mode() == "none" && (r.pol.Memory > 0 || r.pol.CPUs > 0 || r.pol.Verbose) {
		for _, w := range rep.Warnings {
			r.notef("%s", w)
		}
	}
	return nil
}

func (r *runner) deleteCgroup() {
	if r.group == nil {
		return
	}
	_ = r.group.Kill()
	if err := r.group.Delete(); err != nil {
		r.errorf("remove cgroup: %v", err)
	}
}

// kill ends the sandbox at once: the cgroup's kill (cgroup.kill or
// freeze-kill-thaw) where there is one, and SIGKILL to init, whose death makes
// the kernel kill every process of its pid namespace.
func (r *runner) kill(by, why string) {
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
		r.record(audit.Kill{By: by, Reason: why, Method: method, Signal: "SIGKILL"})
		if r.trail != nil {
			_ = r.trail.Sync()
		}
	}
	_ = unix.Kill(r.sb.Pid, unix.SIGKILL)
	if r.group != nil {
		_ = r.group.Kill()
	}
}

func (r *runner) readMessages(done chan struct{}) {
	defer close(done)
	for {
		m, files, err := r.sb.Conn.Recv()
		if err != nil {
			return
		}
		switch m.Type {
		case ns.MsgFiles:
			r.handleFiles(m, files)
			if err := r.sb.Conn.Send(ns.Message{Type: ns.MsgGo}); err != nil {
				return
			}
		case ns.MsgStarted:
			r.mu.Lock()
			r.agentPid = m.Pid
			r.mu.Unlock()
			r.servePublished()
		case ns.MsgDialed:
			var f *os.File
			if len(files) > 0 {
				f = files[0]
			}
			select {
			case r.dialCh <- dialReply{f: f, err: m.Error}:
			default:
				if f != nil {
					f.Close()
				}
			}
		case ns.MsgExit:
			r.mu.Lock()
			mm := m
			r.exit = &mm
			r.mu.Unlock()
		case ns.MsgError:
			r.mu.Lock()
			mm := m
			r.setupErr = &mm
			r.mu.Unlock()
		default:
			for _, f := range files {
				f.Close()
			}
		}
	}
}

// handleFiles takes init's report (kernel facts, fds) just before the agent
// starts: the moment to write the start event and start the servers.
func (r *runner) handleFiles(m ns.Message, files []*os.File) {
	r.mu.Lock()
	r.info = m.Info
	r.mu.Unlock()
	r.tracef("init ready")
	r.recordStart(m.Info)
	var tcp, dns *os.File
	for i, f := range files {
		name := ""
		if i < len(m.Names) {
			name = m.Names[i]
		}
		switch name {
		case "pty":
			r.mu.Lock()
			r.pty = f
			r.mu.Unlock()
			r.resizePty()
			r.ptyCh <- struct{}{}
		case "seccomp":
			r.serveExecs(f)
		case "net-tcp":
			tcp = f
		case "net-dns":
			dns = f
		default:
			f.Close()
		}
	}
	if tcp != nil {
		r.serveNet(tcp, dns, m.Info["net.mode"])
	}
}

func (r *runner) recordStart(info map[string]string) {
	r.mu.Lock()
	done := r.startRecorded
	r.startRecorded = true
	r.mu.Unlock()
	if done {
		return
	}
	if info["seccomp.notify"] == "false" && !r.pol.NoExecAudit {
		r.notef("exec auditing unavailable: %s", info["seccomp.reason"])
	}
	if miss := info["landlock.missing"]; miss != "" {
		var list []string
		_ = json.Unmarshal([]byte(miss), &list)
		r.notef("landlock ABI %s: not enforced: %s", info["landlock.abi"], strings.Join(list, "; "))
	}
	netMode := r.pol.Net
	if info["net.mode"] == "proxy-aware" {
		netMode = "proxy"
		r.notef("egress is proxy-aware only (%s): programs that ignore HTTP_PROXY/ALL_PROXY get no network", info["net.reason"])
	}
	if r.trail == nil {
		return
	}
	var uts unix.Utsname
	_ = unix.Uname(&uts)
	abi := 0
	fmt.Sscan(info["landlock.abi"], &abi)
	cgMode := "none"
	if r.group != nil {
		cgMode = r.group.Mode()
	}
	var notes []string
	notes = append(notes, r.plan.Notes...)
	notes = append(notes, r.cgRep.Warnings...)
	r.trail.Record(audit.Start{
		Schema: audit.SchemaVersion, Version: Version, ID: r.id,
		Argv: os.Args, Command: r.pol.Command, Cwd: r.plan.Workspace,
		UID: os.Getuid(), GID: os.Getgid(), PID: os.Getpid(), Root: os.Getuid() == 0,
		Policy: map[string]any{"policy": r.pol, "plan": r.plan, "cgroup": r.cgRep},
		Kernel: audit.Kernel{
			Release: unix.ByteSliceToString(uts.Release[:]), LandlockABI: abi,
			Seccomp: info["seccomp.arch"] != "", SeccompNotify: info["seccomp.notify"] == "true",
			CgroupMode: cgMode, NetworkMode: netMode,
		},
		Notes: notes,
	})
}

// serveExecs answers the sandbox's exec notifications: record, guard, go.
func (r *runner) serveExecs(l *os.File) {
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		_ = seccomp.Serve(r.ctx, l, r.guard, func(ev seccomp.ExecEvent) {
			r.mu.Lock()
			started := r.agentPid != 0
			r.mu.Unlock()
			if !started {
				// The agent's first exec, paused until we answer: its
				// address-space and process limits are in force before it
				// runs a single instruction of the command.
				for _, rl := range r.agentRlimits {
					lim := unix.Rlimit{Cur: rl.Cur, Max: rl.Max}
					_ = unix.Prlimit(ev.Pid, rl.Resource, &lim, nil)
				}
			}
			if ev.Err != "" && len(ev.Argv) == 0 && !started {
				// The agent's own execve comes from init's child, which is
				// not dumpable until the exec completes: its /proc/PID/mem is
				// root's. It is exactly the command jail was given (checked
				// against the guard rail before start).
				ev.Path, ev.Argv, ev.Cwd, ev.Err = r.pol.Command[0], r.pol.Command, r.plan.Workspace, ""
			}
			ev.Pid = sandboxPid(ev.Pid)
			ev.Path, ev.Cwd = byteExact(ev.Path), byteExact(ev.Cwd)
			for i := range ev.Argv {
				ev.Argv[i] = byteExact(ev.Argv[i])
			}
			dec := audit.DecisionAllow
			if ev.Rule != "" {
				dec = audit.DecisionDeny
				r.notef("blocked command: %s (guard rail %s)", strings.Join(ev.Argv, " "), ev.Rule)
				r.record(audit.Deny{Layer: "guard-rail", What: "exec", Target: ev.Path, PID: ev.Pid, Reason: ev.Rule})
			}
			r.record(audit.Exec{PID: ev.Pid, Path: ev.Path, Argv: ev.Argv, Cwd: ev.Cwd, Decision: dec, Rule: ev.Rule, Reason: ev.Err})
		})
	}()
}

// byteExact keeps argv, paths and cwd distinguishable in JSON, which would
// turn every byte that is not UTF-8 into U+FFFD. A string that is valid
// UTF-8 and has no "\x" in it is written as it is (nearly all); any other
// gets each backslash and each non-UTF-8 byte written as \xNN. So "\x" in
// the trail always starts an escape, and distinct inputs stay distinct.
func byteExact(s string) string {
	if utf8.ValidString(s) && !strings.Contains(s, `\x`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || s[i] == '\\' {
			fmt.Fprintf(&b, "\\x%02x", s[i])
			i++
			continue
		}
		b.WriteString(s[i : i+n])
		i += n
	}
	return b.String()
}

// sandboxPid translates a host pid into the sandbox's pid namespace (the
// innermost NSpid), as the agent itself sees it; the host pid when unknown.
func sandboxPid(hostPid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", hostPid))
	if err != nil {
		return hostPid
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "NSpid:" {
			var pid int
			if _, err := fmt.Sscan(f[len(f)-1], &pid); err == nil {
				return pid
			}
		}
	}
	return hostPid
}

type dialReply struct {
	f   *os.File
	err string
}

// servePublished forwards connections to the --publish host ports to the
// agent's servers: init connects inside the sandbox and passes the socket.
func (r *runner) servePublished() {
	for i, ln := range r.pubs {
		port := r.pubPorts[i]
		dial := func(ctx context.Context) (net.Conn, error) { return r.dialInside(ctx, port) }
		r.bg.Add(1)
		go func(ln net.Listener) {
			defer r.bg.Done()
			_ = netproxy.ServePublish(r.ctx, ln, dial)
		}(ln)
	}
}

func (r *runner) dialInside(ctx context.Context, port int) (net.Conn, error) {
	r.dialMu.Lock()
	defer r.dialMu.Unlock()
	if err := r.sb.Conn.Send(ns.Message{Type: ns.MsgDial, Port: port}); err != nil {
		return nil, err
	}
	select {
	case rep := <-r.dialCh:
		if rep.err != "" {
			return nil, errors.New(rep.err)
		}
		if rep.f == nil {
			return nil, fmt.Errorf("connect to port %d inside: no socket", port)
		}
		c, err := net.FileConn(rep.f)
		rep.f.Close()
		return c, err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-r.sb.Done():
		return nil, errors.New("the sandbox has exited")
	}
}

// serveNet runs the egress proxy and DNS on the sockets init made.
func (r *runner) serveNet(tcp, dns *os.File, mode string) {
	ln, err := net.FileListener(tcp)
	tcp.Close()
	if err != nil {
		r.errorf("egress proxy: %v", err)
		return
	}
	fakes := netproxy.NewFakeIPs()
	onEvent := func(ev netproxy.Event) { r.recordNet(ev) }
	px := &netproxy.Proxy{Policy: r.netPol, Fakes: fakes, OnEvent: onEvent, Log: r.stderr, Quiet: r.pol.Quiet}
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		if mode == "proxy-aware" {
			_ = px.ServeFallback(r.ctx, ln)
		} else {
			_ = px.Serve(r.ctx, ln)
		}
	}()
	if dns != nil {
		pc, err := net.FilePacketConn(dns)
		dns.Close()
		if err != nil {
			r.errorf("sandbox DNS: %v", err)
			return
		}
		d := netproxy.NewDNS(r.netPol, fakes, onEvent)
		r.bg.Add(1)
		go func() {
			defer r.bg.Done()
			_ = d.Serve(r.ctx, pc)
		}()
	}
}

func (r *runner) recordNet(ev netproxy.Event) {
	switch ev.Type {
	case "dns":
		var answers []string
		if ev.Addr != "" {
			answers = []string{ev.Addr}
		}
		r.record(audit.DNS{Name: ev.Name, QType: ev.QType, Decision: ev.Decision, Answers: answers, Reason: ev.Reason})
	default:
		r.record(audit.Net{Decision: ev.Decision, Proto: "tcp", Name: ev.Name, Address: ev.Addr, Port: int(ev.Port),
			BytesUp: ev.BytesUp, BytesDown: ev.BytesDown, DurationMS: float64(ev.DurationMs), Reason: ev.Reason})
	}
}

func (r *runner) ptyFile() *os.File {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pty
}

func (r *runner) resizePty() {
	pty := r.ptyFile()
	if pty == nil {
		return
	}
	if ws, err := unix.IoctlGetWinsize(0, unix.TIOCGWINSZ); err == nil {
		_ = unix.IoctlSetWinsize(int(pty.Fd()), unix.TIOCSWINSZ, ws)
	}
}

// startRelay puts the host terminal in raw mode and copies bytes both ways
// between it and the sandbox's own pty. Ctrl-C, Ctrl-Z and friends are then
// interpreted by the sandbox's line discipline for its foreground job, and
// nothing inside can reach the host terminal's ioctls (TIOCSTI injection).
func (r *runner) startRelay() func() {
	pty := r.ptyFile()
	old, err := term.MakeRaw(0)
	r.mu.Lock()
	r.ptyDone = make(chan struct{})
	done := r.ptyDone
	r.mu.Unlock()
	go func() {
		_, _ = io.Copy(pty, os.Stdin)
	}()
	go func() {
		defer close(done)
		buf := make([]byte, 32<<10)
		for {
			n, err := pty.Read(buf)
			if n > 0 {
				if _, werr := os.Stdout.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil { // EIO once every slave fd is closed
				return
			}
		}
	}()
	return func() {
		if err == nil {
			_ = term.Restore(0, old)
		}
	}
}

// finish turns init's report, the cgroup's events and the supervisor's own
// actions into jail's exit code, the exit report and the last audit event.
func (r *runner) finish() int {
	ws, werr := r.sb.Wait()
	r.tracef("init exited")
	defer r.tracef("done")
	r.cancel()
	r.bg.Wait()
	var ev cgroup.Events
	var st cgroup.Stats
	if r.group != nil {
		ev, _ = r.group.Events()
		st, _ = r.group.Stats()
	}
	r.recordStart(nil) // init failed before reporting: the trail still opens with start
	r.mu.Lock()
	defer r.mu.Unlock()
	exit := audit.Exit{WallMS: audit.Millis(time.Since(r.started)), PeakMemoryBytes: int64(st.MemoryPeak), CPUUserMS: audit.Millis(st.CPU)}
	if ru := r.sb.Rusage(); ru != nil && st.CPU == 0 {
		// No cgroup figures: init's rusage covers every process it reaped.
		st.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		exit.CPUUserMS, exit.CPUSysMS = audit.Millis(time.Duration(ru.Utime.Nano())), audit.Millis(time.Duration(ru.Stime.Nano()))
		if exit.PeakMemoryBytes == 0 {
			exit.PeakMemoryBytes = ru.Maxrss * 1024 // the largest single process
			st.MemoryPeak = uint64(exit.PeakMemoryBytes)
		}
	}
	if ev.PidsMaxHits > 0 {
		r.notef("process limit reached: --pids %d (%d forks refused)", r.pol.Pids, ev.PidsMaxHits)
		r.record(audit.Limit{Kind: "pids", Source: "cgroup-" + r.group.Mode(), Limit: r.pol.Pids, Value: int64(ev.PidsMaxHits), Action: "refused"})
	}
	code, reason := 0, "exited"
	switch {
	case r.setupErr != nil:
		r.errorf("%s", r.setupErr.Error)
		code, reason = r.setupErr.ExitCode, "setup_failed"
		if code == 0 {
			code = ExitSetup
		}
		exit.Error = r.setupErr.Error
	case r.timedOut:
		code, reason = ExitTimeout, "timeout"
		r.notef("timed out after %v", r.pol.Timeout)
	case ev.OOMKills > 0:
		code, reason = 128+int(syscall.SIGKILL), "oom"
		r.errorf("out of memory: limit %s reached", cgroup.FormatSize(r.pol.Memory))
		r.record(audit.Limit{Kind: "oom", Source: "cgroup-" + r.group.Mode(), Limit: r.pol.Memory, Value: int64(ev.OOMKills), Action: "killed"})
		if r.exit != nil && r.exit.Signal == 0 && r.exit.Code != 0 {
			code = r.exit.Code
		}
	case r.killedBy != "":
		code, reason = 128+int(syscall.SIGKILL), "killed"
		r.notef("killed the sandbox: %s", r.killedBy)
		if r.exit != nil && r.exit.Code != 0 {
			code = r.exit.Code
		}
	case r.exit != nil:
		code = r.exit.Code
		if r.exit.Signal != 0 {
			reason = "signaled"
			exit.Signal = unix.SignalName(syscall.Signal(r.exit.Signal))
		}
	case werr != nil:
		r.errorf("sandbox init: %v", werr)
		code, reason = ExitSetup, "setup_failed"
	case ws.Signaled():
		// Init died without reporting (killed from outside): never 0.
		code, reason = 128+int(ws.Signal()), "killed"
	default:
		code, reason = ws.ExitStatus(), "exited"
		if code == 0 {
			code = ExitSetup
		}
	}
	exit.Code, exit.Reason = code, reason
	if r.pol.Verbose {
		r.errorf("exit %d (%s) after %.0f ms; cpu %.0f ms; peak memory %s; limits via %s",
			code, reason, exit.WallMS, audit.Millis(st.CPU), cgroup.FormatSize(int64(st.MemoryPeak)), r.group.Mode())
	}
	r.record(exit)
	r.mu.Unlock()
	r.closeTrail()
	r.mu.Lock()
	return code
}
