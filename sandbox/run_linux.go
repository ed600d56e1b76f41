package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/cgroup"
	"github.com/jail-sandbox/jail/credswap"
	"github.com/jail-sandbox/jail/denials"
	"github.com/jail-sandbox/jail/dircache"
	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/gitkeep"
	"github.com/jail-sandbox/jail/homeleft"
	"github.com/jail-sandbox/jail/hostcheck"
	"github.com/jail-sandbox/jail/initbin"
	"github.com/jail-sandbox/jail/internal/blockio"
	"github.com/jail-sandbox/jail/internal/seam"
	"github.com/jail-sandbox/jail/maskwatch"
	"github.com/jail-sandbox/jail/memwatch"
	"github.com/jail-sandbox/jail/netproxy"
	"github.com/jail-sandbox/jail/netproxy/nsnet"
	"github.com/jail-sandbox/jail/notice"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/prefault"
	"github.com/jail-sandbox/jail/ptyrelay"
	"github.com/jail-sandbox/jail/sandbox/inithooks"
	"github.com/jail-sandbox/jail/seccomp"
	"github.com/jail-sandbox/jail/session"
	"github.com/jail-sandbox/jail/statedir"
	"github.com/jail-sandbox/jail/termfilter"
)

// Run runs the policy's command in a new sandbox and returns the exit code
// jail should exit with. Messages for the user go through one notice sink
// to stderr: at once, or, while a terminal is relayed, after it is restored.
func Run(p *policy.Policy) int { return RunSession(p, SessionOptions{}) }

// RunChecked is Run for a caller that has not made Check: the supervisor
// makes it itself, after init's clone (init's exec and Go start take
// longer than the check, and init needs the plan anyway), and before the
// plan. A mistake fails the start as Check's caller would have, one line
// naming the value (through Explain) and ExitSetup, and init, which has
// had no spec, is killed.
func RunChecked(p *policy.Policy) int {
	return RunSession(p, SessionOptions{check: true, exiting: true})
}

// SessionOptions make a run a session: named, reachable by jail exec, and
// telling its starter when it is ready (jail run -d, the Go API).
type SessionOptions struct {
	// Ready is called once: with nil when the sandbox runs (the command
	// started, or init is idle) and its control socket serves, or with why
	// it could not start.
	Ready func(info *session.Info, err error)
	// Lifeline, when set, is watched: its end (EOF: the program that
	// started the sandbox exited, or closed it) kills the sandbox.
	Lifeline *os.File
	// LogPath is where this supervisor's stdout and stderr go (jail logs).
	LogPath string
	// Tty keeps a terminal for the command (jail run -d -t): a pty of the
	// sandbox's own devpts whose master the supervisor holds, writing its
	// output to stdout (the log) and relaying it to jail attach.
	Tty bool
	// check: Check the policy after init's clone (RunChecked).
	check bool
	// exiting: the caller exits with the returned code at once (jail's
	// CLI, RunChecked): the signal handlers are left to go with the
	// process. Each signal.Stop is a round trip to the runtime's signal
	// thread (9 signals: 0.25-0.4 ms of the end), and a signal that came
	// after them would end jail by its default action instead of the code.
	exiting bool
}

// RunSession is Run with session options.
func RunSession(p *policy.Policy, so SessionOptions) int {
	// Whatever jail inherited beyond stdio stays with jail.
	ns.CloexecFrom(3)
	if so.Lifeline != nil {
		unix.CloseOnExec(int(so.Lifeline.Fd()))
	}
	r := &runner{pol: p, sess: so, logPath: so.LogPath, stderr: blockio.NewWriter(os.Stderr), ptyCh: make(chan struct{}, 1), started: time.Now(), dialCh: make(chan dialReply, 1),
		startedCh: make(chan struct{}), exitCh: make(chan struct{}), wallsUp: make(chan struct{}), controlUp: make(chan struct{}), stopCh: make(chan syscall.Signal, 1), heldCh: make(chan int, 1), contCh: make(chan os.Signal, 1), hupCh: make(chan struct{}, 1), ctlCh: make(chan ctlCall)}
	r.trace = os.Getenv("JAIL_TRACE") == "1"
	r.traceHeapOn = r.trace && os.Getenv("JAIL_TRACE_HEAP") == "1"
	// No collection during the setup; from the agent's start on, as usual.
	r.releaseGC = ns.HoldGC()
	defer r.releaseGC()
	r.notes = notice.New(r.stderr, notice.Options{Quiet: p.Quiet, Verbose: p.Verbose, Trace: r.trace, Record: r.recordNotice})
	r.notes.AlsoUrgent(r.urgent.say)
	r.tracef("flags, config")
	code := r.run()
	r.closeWatches()
	r.tracef("watches closed")
	r.awaitTrail() // the exit event on disk before anyone learns the end
	r.tracef("trail synced")
	r.awaitMounts()
	r.tracef("mounts dropped")
	// The starter (the Go API's Start) hears why, not only that: the log
	// it could read is removed for a sandbox with no name.
	why := ""
	if e := r.firstError.Load(); e != nil {
		why = ": " + *e
	} else if k := r.killReason(); k != "" {
		why = ": killed the sandbox: " + k
	}
	r.ready(fmt.Errorf("the sandbox ended before it was ready (exit %d)%s", code, why))
	r.endAttach(code)
	// The terminal is the user's again: what was held is said now.
	footer := ""
	if r.trailPath != "" {
		footer = "audit trail: " + r.trailPath
	}
	if r.screen != nil && r.notes.Pending() && r.screen.MidLine() {
		// The command ended mid-line (a prompt it waited at when the
		// user pressed Ctrl-C): the summary starts a line of its own.
		_, _ = io.WriteString(r.stderr, "\r\n")
	}
	r.notes.Release(footer)
	r.tracef("returned")
	return code
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
	trailPath    string
	notes        *notice.Sink // every message to the user
	redact       *redactor    // --env/--setenv values out of every record
	id           string       // the sandbox's id, also in the default trail's name
	group        cgroup.Group
	cgRemoved    chan error // removeCgroup's result: the groups are gone
	cgRep        cgroup.Report
	scopeUnit    string // the systemd user scope jail runs in, when it made one
	netPol       *netproxy.Policy
	upstream     *netproxy.Upstream // the host's proxy allowed flows are chained through
	guard        *seccomp.Guard
	acfg         *agentGuard     // agent configuration guard (agentcfg_linux.go)
	creds        []credswap.Snap // agent credential files at start (credswap_linux.go)
	credRec      *credswap.Record
	pubs         []net.Listener // publish listeners on the host
	dialMu       sync.Mutex     // one dial request to init at a time
	dialCh       chan dialReply
	pubPorts     []int
	agentRlimits []ns.Rlimit
	bg           sync.WaitGroup         // proxy, DNS and exec-notify servers
	firstError   atomic.Pointer[string] // the first error said (errorf), for ready
	goCompiles   atomic.Int64           // the Go compiler's execs (cachehint_linux.go)
	execsSeen    atomic.Bool            // the exec notifications are served: goCompiles counts
	toolsRan     atomic.Uint32          // the package tools whose programs ran, a bit each (registryhint_linux.go)

	mu            sync.Mutex
	refused       []netproxy.Event // refused names an allow-domain rule would let through (registryhint_linux.go)
	exit          *ns.Message      // the agent's status, from init
	setupErr      *ns.Message
	agentPid      int
	killedBy      string // why the supervisor killed the sandbox
	timedOut      bool
	startClaimed  bool          // recordStart has begun
	startWritten  chan struct{} // closed once recordStartBeside's goroutine has written it
	startRecorded bool          // the start event is in the trail
	early         []heldEvent   // events before the start event, held until it is written
	trace         bool
	traceHeapOn   bool // JAIL_TRACE_HEAP=1 too: traceHeap's lines
	info          map[string]string
	pty           *os.File
	ptyCh         chan struct{} // signalled once the pty master has arrived
	ptyDone       <-chan struct{}
	relayCut      int // the relay was still writing at the end and was cut: bytes left in the pty plus one (0 not cut; awaitRelay)
	relay         *ptyrelay.Relay
	startedCh     chan struct{}       // the agent exists (MsgStarted)
	exitCh        chan struct{}       // init's exit message came: the rest of the sandbox is gone (MsgExit)
	unwatch       func()              // raiseWalls, before the reader starts: removes the walls' watches (readMessages, on MsgExit)
	checked       bool                // endCheck ran (the main loop's goroutine only)
	serversDone   chan struct{}       // stopServers: the servers are done, the trail fsynced
	trailClosed   chan error          // recordExit: the trail's fsync and close (awaitTrail)
	trailEnd      string              // its path, for awaitTrail's error
	mntFD         int                 // init's mount namespace, held from its exit message (mntns_linux.go; under mu)
	mntHeld       bool                // mntFD is open (under mu)
	homeLeft      homeleft.Dir        // the sandbox's own home, held from MsgStarted (homeleft_linux.go; under mu)
	homeDropped   chan struct{}       // dropHome: the home's descriptor is closed
	mntDropped    chan struct{}       // dropMounts: the namespace's teardown is done
	sentryDropped chan struct{}       // endCheck: the sentinel's run record is removed
	watchCloses   []func()            // closeLater: inotify descriptors to close at the end (closeWatches)
	wallsUp       chan struct{}       // closed by raiseWalls: the go may be sent
	controlUp     chan struct{}       // closed once the control socket is served and the sandbox registered: so may it
	stopCh        chan syscall.Signal // the agent stopped (MsgStopped)
	heldCh        chan int            // init stopped the sandbox's processes (MsgHeld: how many)
	held          bool                // some are stopped until resume (suspend's goroutine only)
	contCh        chan os.Signal      // SIGCONT: jail was continued
	hupCh         chan struct{}       // the user's terminal hung up (ptyrelay's OnHangup)
	ctlCh         chan ctlCall        // jail kill, from the control socket
	term          *termfilter.Writer  // filters the pty relay's output
	screen        *ptyrelay.Screen    // the terminal the filter writes to, shared with urgent notices
	ttyFD         int                 // the host terminal the relay writes to
	stdinTerm     *stdinTermState     // the terminal on stdin handed on read-only, as it was (stdin_linux.go)
	noticed       map[string]bool     // notices said once (kind, key)
	noticeCount   map[string]int      // notices said, by kind
	denials       *denials.Writer     // the sandbox's record of its denials; nil without one
	denialsFile   *os.File            // its writable file (from init)

	degraded    bool         // no namespaces (--degraded on a host refusing them)
	degradedWhy string       // the host's refusal, one line
	startNotes  []string     // for the start event: degraded mode, exec audit off
	gitKept     []keptRepo   // the repositories whose history the start kept (keepGitHistory)
	gitRun      *gitkeep.Run // this run's window (gitkeep.BeginRun), ended at the end
	gitPacks    []keptRepo   // every repository whose new packs the end reads (madePacks)

	spec     *ns.Spec
	memWatch *memwatch.Watch // --memory without a cgroup
	memOver  *memwatch.Sample

	limitsDebug string   // openCgroup's -v line, said by sayLimits
	limitsNotes []string // the limits it cannot enforce, said by sayLimits

	sentry *sentry          // what must not appear in the writable trees
	masks  *maskwatch.Watch // the host taking the sandbox's mounts away (masks_linux.go)
	// maskBefore: the watched paths' identities before init had its spec
	// (identifyMasks), which the watch compares with once armed.
	maskBefore *maskwatch.Before

	releaseGC func()  // ends ns.HoldGC: the agent has started
	traceLast float64 // the trace clock at the last step (under mu)

	startPolicy <-chan any     // the start event's policy, made while init starts
	spare       chan<- func()  // runs the start's work off its path, in order (nil: none)
	initCh      chan initStart // init, cloned while the supervisor plans (beginInit)
	// dirs remembers what the walks kept of each directory (package
	// dircache, in the state directory): nil on --dry-run.
	dirs              *dircache.Cache
	dirHits, dirReads int // the cache's counts at the last trace line

	// Sessions (session_linux.go).
	sess      SessionOptions
	readyOnce sync.Once
	ex        execs
	stops     selfStops    // exec -t commands' own stops (selfstop_linux.go)
	listens   listenHints  // the servers' ports named (listenhint_linux.go)
	loops     loopRefusals // the loopback's refusals weighed (hostloop_linux.go)
	// sshHosts: the user's ssh Host aliases (sshHostOf), read once.
	sshHostsOnce sync.Once
	sshHosts     map[string]string
	logPath      string
	ctlPath      string
	stopping     bool     // jail stop asked (guarded by mu)
	kept         *keptTty // the terminal of jail run -d -t (attach_linux.go; under mu)
	// urgent: jail's urgent lines for the screens that are not the Sink's
	// (the attached client, jail exec clients: urgent_linux.go).
	urgent urgentLines
	// timelyExecs: the jail exec clients that take their command's
	// timely lines (urgent_linux.go).
	timelyExecs timelyExecs
}

// ready tells the session's starter, once, whether the sandbox runs.
func (r *runner) ready(err error) {
	r.readyOnce.Do(func() {
		if r.sess.Ready == nil {
			return
		}
		if err != nil {
			r.sess.Ready(nil, err)
			return
		}
		r.sess.Ready(r.inspect(), nil)
	})
}

// tracef says, with JAIL_TRACE=1, when a step of the start ended: ms
// since main began (MainStarted; else since Run), and since the step
// before. make bench reads these lines for its breakdown of the start.
func (r *runner) tracef(step string) {
	if !r.trace {
		return
	}
	now := r.traceNow()
	r.mu.Lock()
	prev := r.traceLast
	r.traceLast = now
	r.mu.Unlock()
	r.notes.Notef("trace", notice.Trace, "supervisor %-14s %7.2f ms (+%.2f)", step, now, now-prev)
}

// traceNow is the trace clock: ms since main began.
func (r *runner) traceNow() float64 {
	t0 := MainStarted
	if t0.IsZero() {
		t0 = r.started
	}
	return float64(time.Since(t0).Microseconds()) / 1000
}

// errorf says what went wrong; always shown (--quiet too).
func (r *runner) errorf(format string, a ...any) {
	msg := Spell(fmt.Sprintf(format, a...))
	r.firstError.CompareAndSwap(nil, &msg)
	r.notes.Notef("jail", notice.Error, "%s", msg)
}

// notef is a notice shown unless --quiet.
func (r *runner) notef(format string, a ...any) {
	r.notes.Notef("jail", notice.Warning, "%s", Spell(fmt.Sprintf(format, a...)))
}

// sayDegraded says, before a refusal, why the run is degraded: a start
// degraded mode refuses (checkDegraded, or the plan's "--degraded cannot
// pin ...") exited before the "degraded mode: ..." line of degradedSpec,
// and the user saw a refusal naming --degraded without why this host
// needed it (session 19).
func (r *runner) sayDegraded() {
	if r.degraded {
		r.notef("degraded mode: %s", r.degradedWhy)
	}
}

// debugf is shown with -v only (and never recorded): without -v it is
// not even formatted (Spell's first use compiles its patterns).
func (r *runner) debugf(format string, a ...any) {
	if !r.pol.Verbose {
		return
	}
	r.notes.Notef("jail", notice.Debug, "%s", Spell(fmt.Sprintf(format, a...)))
}

// say sends a typed notice (kind and group chosen by the caller).
func (r *runner) say(n notice.Notice) { r.notes.Add(n) }

// recordNotice puts a notice into the trail (the sink calls it once per
// group, before the notice is shown or held).
func (r *runner) recordNotice(n notice.Notice) {
	ev := audit.Notice{Kind: n.Kind, Severity: n.Severity.String(), Text: n.Text}
	switch n.Kind {
	case noticeNet, noticeNetFail, noticeExec, noticePublishFull:
		// The run's servers' refusals (denial.go): the agent can have
		// them decided after the exit check began; they are the run's,
		// never the end's room (recordRun).
		r.recordRun(ev)
	default:
		r.record(ev)
	}
}

// fail reports a setup failure: one line on stderr, a record, exit 125
// (128+N when a signal interrupted the setup).
func (r *runner) fail(err error) int {
	r.errorf("%s", Explain(err))
	r.recordStart(nil)
	r.exitSentry()
	code, reason := ExitSetup, "setup_failed"
	var in *interrupted
	if errors.As(err, &in) {
		code, reason = 128+int(in.sig), "interrupted"
	}
	r.record(audit.Exit{Code: code, Reason: reason, Error: err.Error(), WallMS: audit.Millis(time.Since(r.started))})
	r.closeTrail()
	return code
}

// interrupted is the setup's end by a signal.
type interrupted struct{ sig syscall.Signal }

func (e *interrupted) Error() string {
	return fmt.Sprintf("interrupted by %s before the command started", unix.SignalName(e.sig))
}

// interruptedSetup takes the signals that came during the setup: an
// interrupt (INT, TERM, HUP) ends it; the others are of no use before the
// agent exists.
func interruptedSetup(sigs chan os.Signal) (syscall.Signal, bool) {
	for {
		select {
		case s := <-sigs:
			switch sig := s.(syscall.Signal); sig {
			case syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP:
				return sig, true
			}
		default:
			return 0, false
		}
	}
}

func (r *runner) run() int {
	// Signals are caught from the start: one that comes during the setup
	// ends it with a complete trail (Go's default would exit at once,
	// leaving an empty file), and none is lost between start and the relay
	// loop. SIGTSTP is job control: the agent stops, then jail with it
	// (see jobctl_linux.go), which waits for SIGCONT.
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	// The others are of no use before the agent exists (interruptedSetup
	// drops them; uncaught, Go's runtime ignores SIGUSR1, SIGUSR2 and
	// SIGWINCH, and SIGTSTP stops jail as it did before run): enabled
	// beside the setup and joined before the go (below), since each
	// signal enabled is a round trip to the runtime's signal thread, a
	// thread's wake-up: the nine were 0.2-1.9 ms of the start's path here.
	lateSigs := make(chan struct{})
	go func() {
		defer close(lateSigs)
		signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH, syscall.SIGTSTP)
		signal.Notify(r.contCh, syscall.SIGCONT)
	}()
	if !r.sess.exiting {
		defer signal.Stop(sigs)
		defer signal.Stop(r.contCh)
	}
	// First of the defers: the Stops above come after the late Notify.
	defer func() { <-lateSigs }()

	// The limits and init come first, and init's clone, exec and Go start
	// run while the supervisor plans (below): init only waits for its spec
	// until then, and everything that must be in place before the agent
	// runs still is before the spec (or, for the servers, before the go).
	var limits ns.Spec // the rlimits openCgroup decides, for the spec
	var cgErr error    // reported once the trail is open, as before
	if !r.pol.DryRun {
		// Before anything is made: init inherits these three as they are.
		if err := checkOwnStdio(); err != nil {
			r.errorf("%v", err)
			return ExitSetup
		}
		if r.degraded, r.degradedWhy = r.decideDegraded(); r.degraded {
			if err := checkDegraded(r.pol); err != nil {
				r.sayDegraded()
				r.errorf("%s", Explain(err))
				return ExitSetup
			}
		}
		if !r.degraded {
			// Before the first thing this start creates (the cgroup, then
			// the state directory with init's copy, the walks' cache): a
			// home the plan refuses gets nothing made in it. The callers
			// refused it already unless degraded mode was asked for.
			if err := refuseHomePlace(os.Environ()); err != nil {
				r.errorf("%s", Explain(err))
				return ExitSetup
			}
		}
		cgErr = r.openCgroup(&limits)
		r.tracef("cgroup")
		r.traceHeap("cgroup")
		defer func() {
			r.deleteCgroup()
			r.tracef("cgroup removed")
		}()
		if cgErr == nil {
			// Registered after deleteCgroup, so it runs first: an init
			// that never had its spec is killed before its group goes.
			defer r.beginInit()()
		}
	}
	var chk *checked // what the check built, for the plan and the run
	if r.sess.check {
		var err error
		// The user's values, checked while init starts rather than before
		// its clone: still before the killed runs' repair and the plan, and
		// before anything of the sandbox exists (init has no spec, and the
		// deferred abort kills it), with the message and status the
		// caller's check would give, and nothing else said before it.
		if chk, err = check(r.pol, os.Environ()); err != nil {
			r.errorf("%s", Explain(err))
			return ExitSetup
		}
		r.tracef("check")
		r.traceHeap("check")
	}
	r.sayLimits()
	if !r.pol.DryRun {
		// Before the plan: what a killed run left is gone before this
		// run's protections are decided. After init's clone: init's start
		// does not wait for it (init has nothing of the sandbox's before
		// its spec, which needs the plan).
		if r.killedRuns() {
			// The check resolved this run's paths before that repair:
			// a .git a killed run's agent left made the directory above
			// the one jail started in a "work tree", and the workspace
			// (TestKilledRunGitDoesNotWidenWorkspace). The plan resolves
			// them again, as they are now.
			chk.forgetRoots()
		}
		r.tracef("killed runs")
	}
	if r.pol.DryRun {
		// What --dry-run prints for a host without namespaces (a run
		// decided it before the plan, with its limits): decided before the
		// plan too, which refuses paths at init's own places only where
		// there are namespaces.
		if r.degraded, r.degradedWhy = r.decideDegraded(); r.degraded {
			if err := checkDegraded(r.pol); err != nil {
				r.sayDegraded()
				r.errorf("%s", Explain(err))
				return ExitSetup
			}
		}
	}
	var dirs fsrules.DirReader
	if !r.pol.DryRun {
		r.dirs = openDirCache()
		dirs = r.dirs
	}
	// The heap's window past its first chunk (package prefault), made
	// once the runtime grows its heap there: before and after the plan,
	// the start's biggest user of the heap.
	prefault.More()
	plan, err := planChecked(r.pol, os.Environ(), dirs, chk, r.degraded)
	prefault.More()
	r.saveDirCache("plan")
	if err != nil {
		r.sayDegraded()
		r.errorf("%s", Explain(err))
		return ExitSetup
	}
	r.plan = plan
	r.tracef("plan")
	r.traceHeap("plan")
	if !r.pol.DryRun {
		// Before anything of the sandbox can write: a supervisor killed
		// later still leaves this run's trees recorded.
		if err := recordWritten(plan); err != nil {
			r.errorf("%s", Explain(err))
			return ExitSetup
		}
		r.tracef("written trees")
		// An earlier run's policy file this run leaves writable through
		// its other names: marked before anything of the sandbox runs.
		// (No run ID yet: the run is named by its workspace and start.)
		by := "a run in " + plan.Workspace + " started " + r.started.Format(time.DateTime)
		if err := markPolicyExposed(plan.StateDir, plan.policyExposed, by); err != nil {
			r.errorf("%s", Explain(err))
			return ExitSetup
		}
		// The files this run was given by a flag to read its policy from:
		// recorded, so every later run keeps them read-only too; refused
		// when a live run that started before any run named one can write
		// it (policynamed.go).
		if all := allPolicyFiles(r.pol); len(all) > 0 {
			flagged := flagPolicyFiles(r.pol)
			first, err := recordPolicyNamed(plan.StateDir, flagged)
			if err == nil {
				live, _ := List()
				err = policyNamedLive(flagged, all, first, live)
			}
			if err != nil {
				r.errorf("%s", Explain(err))
				return ExitSetup
			}
		}
	}
	// The loose objects and refs of the writable trees' repositories, kept
	// where the user can fetch them back from (package gitkeep): on
	// another goroutine, beside the rest of the setup (a stat of each of
	// up to 256 objects/xx directories a repository), joined before init
	// starts, so kept before anything of the sandbox runs.
	keepDone := make(chan func(), 1)
	if r.pol.DryRun || plan.Git == nil {
		keepDone <- func() {}
	} else {
		stateDir, repos, degraded := plan.StateDir, append([]string(nil), plan.Git.Repos...), r.degraded
		packsLeft := append([]string(nil), plan.Git.PacksLeft...)
		roots := append([]string(nil), plan.Writable...)
		go func() {
			notes, kept, checked, run := keepGitHistory(stateDir, roots, repos, degraded, packsLeft)
			keepDone <- func() {
				r.gitKept, r.gitPacks, r.gitRun = kept, checked, run
				for _, n := range notes {
					r.notef("%s", n)
				}
			}
		}()
	}
	if !r.pol.DryRun {
		// One goroutine does the start's work that is off its path, in
		// order: the walls' warm-up now, the start event's policy once
		// init starts (below). Both build encoding/json's encoders, by deep
		// recursion: on one goroutine the stack grows once (2 to 32 KiB,
		// four copies, each new size a fresh span here), not on each.
		spare := make(chan func(), 2)
		r.spare = spare
		go func() {
			for f := range spare {
				f()
			}
		}()
		defer close(spare)
		spare <- warmWalls
	}
	r.redact = newRedactor(r.pol, plan.Env)
	if r.pol.Name != "" && !r.pol.DryRun {
		release, err := claimName(r.pol.Name)
		if err != nil {
			r.errorf("%s", Explain(err))
			r.ready(err)
			return ExitSetup
		}
		defer release()
	}
	// The readers' notices (an unset env name, a created profile path, a
	// settings key with no equivalent) go through the one notice channel.
	said := make(map[string]bool, len(r.pol.Notices))
	for _, n := range r.pol.Notices {
		r.notef("%s", n)
		said[n] = true
	}
	for _, n := range plan.Notes {
		// A deny that matched nothing, a path the agent cannot write, a
		// directory hidden whole because it cannot be read, and what the
		// everyday-tools rules changed (see shownNote). The readers'
		// notices are in plan.Notes too (for the trail): said above.
		if shownNote(n) && !said[n] && !saidBefore(plan.StateDir, n, plan.onceNotes[n], r.pol.DryRun) {
			r.notef("%s", n)
		}
	}
	if r.pol.Net == policy.NetAllow {
		if r.netPol, err = chk.netPolicy(r.pol); err != nil {
			r.errorf("%s", Explain(err))
			return ExitSetup
		}
		r.upstream = r.hostProxy()
	}
	r.tracef("net policy")
	// Published ports are bound before anything starts: a busy port is a
	// setup error, not a surprise later.
	for i, spec := range append(slices.Clip(r.pol.Publish), r.pol.PublishIfFree...) {
		ifFree := i >= len(r.pol.Publish)
		ps, err := netproxy.ParsePublish(spec)
		if err != nil {
			r.errorf("%s", Explain(err))
			return ExitSetup
		}
		if r.pol.DryRun {
			continue
		}
		ln, err := net.Listen("tcp", ps.HostAddr())
		if err != nil && ifFree && errors.Is(err, syscall.EADDRINUSE) {
			// Another sandbox (or program) holds it: a sign-in callback
			// port is needed only while signing in, so the run goes on
			// without it, and says so.
			r.notef("%s is in use (another sandbox's sign-in callback?), so it is not published: a sign-in through it would not complete; this run goes on without it", ps.HostAddr())
			continue
		}
		if err != nil {
			r.errorf("`publish` %s: %v (choose another host port)", spec, err)
			return ExitSetup
		}
		defer ln.Close()
		r.pubs = append(r.pubs, ln)
		r.pubPorts = append(r.pubPorts, int(ps.Port))
	}
	if !r.pol.NoExecAudit || len(r.pol.BlockCommand) > 0 {
		r.guard, err = chk.newGuard(r.pol.BlockCommand, !r.pol.NoGuardRails, plan.Workspace, plan.Home)
		if err != nil {
			r.errorf("%s", Explain(err))
			return ExitSetup
		}
		// The command itself is judged here, before anything starts.
		if rule := r.guard.Check(r.pol.Command, plan.Cwd); rule != "" {
			r.errorf("blocked command: %s (guard rail %s); drop it, or adjust `block-command` or `no-guard-rails`", strings.Join(r.pol.Command, " "), rule)
			return ExitNotExec
		}
	}
	r.tracef("exec guard")
	spec := &ns.Spec{
		Mounts:   plan.Mounts,
		Hostname: r.pol.Hostname,
		Cwd:      plan.Cwd,
		Argv:     r.pol.Command,
		Env:      plan.Env,
		Hooks:    map[string][]byte{},
		// The network hook brings lo up itself (also under --net none);
		// --net host has the host's; degraded mode has no network namespace.
		LoopbackUp: false,
	}
	addCounters(spec, plan.Counters)
	if err := r.addHooks(spec); err != nil {
		r.errorf("%s", Explain(err))
		return ExitSetup
	}
	r.tracef("hooks")
	// The agent's terminal: a pty of its own when stdin and stdout are
	// terminals; an output-only pty when only stdout or stderr is one, so
	// that what it prints there passes the same filter (a tty handed over
	// as it is would receive every byte).
	interactive := term.IsTerminal(0) && term.IsTerminal(1)
	termOut := os.Stdout
	for _, fd := range []int{0, 1, 2} {
		if term.IsTerminal(fd) && (interactive || fd > 0) {
			spec.PtyFDs = append(spec.PtyFDs, fd)
		}
	}
	if r.sess.Tty {
		// The kept terminal is the command's stdin, stdout and stderr;
		// the supervisor's own (the log) never reach the sandbox.
		interactive, spec.PtyFDs = false, []int{0, 1, 2}
	}
	spec.Pty = len(spec.PtyFDs) > 0
	if spec.Pty && !interactive && !term.IsTerminal(1) {
		termOut = os.Stderr // only stderr is a terminal
	}
	r.ttyFD = int(termOut.Fd())
	r.screen = ptyrelay.NewScreen(termOut)
	if r.term, err = newTermFilter(r.pol, r.screen); err != nil {
		r.errorf("%s", Explain(err))
		return ExitSetup
	}
	if r.pol.DryRun {
		// The trail's place is checked as a start checks it (trail16):
		// an --audit FILE a real start refuses (in a writable tree, in
		// one an earlier run wrote, seen through another mount) is
		// refused here too, in the same words, rather than planned as
		// if it would run.
		if _, _, err := r.trailPlace(spec, audit.NewID()); err != nil {
			r.errorf("%s", Explain(err))
			return ExitSetup
		}
		plan.Print(os.Stdout)
		if r.degraded {
			out := safeLines{os.Stdout} // names in the notes, as in Print
			fmt.Fprintf(out, "note       degraded: %s\n", r.degradedWhy)
			for _, n := range degradedNotes {
				fmt.Fprintf(out, "note       %s\n", n)
			}
		}
		return 0
	}
	if spec.Pty && term.IsTerminal(2) {
		// From here to the exit the terminal is the agent's screen: jail
		// writes no byte of its own into it. What it has to say is kept
		// and said once the terminal is restored.
		r.notes.Hold()
	}
	if plan.StateDirMasked {
		// The mask needs a directory to cover; left absent under a writable
		// path, the agent could create it with planted content (a key, a
		// symlinked audit/) for the next run to trust. jail would create it
		// at its first trail anyway.
		if err := os.MkdirAll(plan.StateDir, 0o700); err != nil {
			r.errorf("jail's state directory %s: %v (set XDG_STATE_HOME to a writable place)", plan.StateDir, err)
			return ExitSetup
		}
	}
	if plan.RuntimeDirMasked {
		// As the state directory: the mask needs a directory to cover.
		if err := os.MkdirAll(plan.RuntimeDir, 0o700); err != nil {
			r.errorf("jail's runtime directory %s: %v (set XDG_RUNTIME_DIR to a private directory)", plan.RuntimeDir, err)
			return ExitSetup
		}
	}
	if plan.ConfigDirMasked {
		// As the state directory: left absent under a writable path, the
		// agent could create it with a config or a trust record of its own.
		if err := os.MkdirAll(plan.ConfigDir, 0o700); err != nil {
			r.errorf("jail's config directory %s: %v (set XDG_CONFIG_HOME to a writable place)", plan.ConfigDir, err)
			return ExitSetup
		}
	}
	if err := r.openTrail(spec); err != nil {
		r.errorf("%s", Explain(err))
		return ExitSetup
	}
	r.tracef("trail")
	defer r.closeGuard()
	if err := r.recoverGuard(); err != nil {
		return r.fail(err)
	}
	r.recoverCreds()
	if cgErr != nil {
		return r.fail(cgErr)
	}
	spec.Rlimits, spec.AgentRlimits = limits.Rlimits, limits.AgentRlimits
	if r.degraded {
		cleanup, err := r.setupDegraded(spec)
		if err != nil {
			return r.fail(err)
		}
		defer cleanup()
	}

	if r.pol.Net == policy.NetHost {
		msg := "`net` host: the sandbox shares the host's network, with no filtering and no audit of connections"
		if abi, _ := landlockABI(); abi < 6 || r.pol.LandlockMaxABI > 0 && r.pol.LandlockMaxABI < 6 {
			// Abstract Unix sockets live in the network namespace: in the
			// host's, only Landlock's scope (ABI 6) keeps the sandbox from
			// the host's (X11, D-Bus, container shims), and the scope's own
			// notice says the namespaces isolate, which is not so here.
			msg += "; and Landlock here cannot scope abstract Unix sockets (ABI 6, Linux 6.12): the host's (X11, D-Bus, container shims) are reachable"
		}
		r.notef("%s", msg)
	}
	spec.Trace = r.trace
	if r.trace {
		// The origin of the supervisor's trace clock on CLOCK_MONOTONIC:
		// init's lines are then on the same timeline.
		spec.TraceOrigin = ns.MonotonicNS() - int64(r.traceNow()*1e6)
	}
	(<-keepDone)()
	r.tracef("git kept")
	r.tracef("before start")
	r.traceHeap("before start")
	r.ctx, r.cancel = context.WithCancel(context.Background())
	defer r.cancel()

	if sig, ok := interruptedSetup(sigs); ok {
		// Interrupted before anything ran: the trail still says what was
		// asked and how it ended.
		return r.fail(&interrupted{sig})
	}

	// The ssh agent's relay (--ssh-agent) listens before init binds it.
	stopRelay, err := r.startAgentRelay(spec)
	if err != nil {
		return r.fail(err)
	}
	defer stopRelay()
	r.identifyMasks()
	sb, err := r.finishInit(spec)
	if err != nil {
		return r.fail(err)
	}
	r.sb = sb
	r.spec = spec
	r.tracef("init started")
	if r.degraded {
		// No pid namespace: the agent can stop init (keepInitGoing).
		go r.keepInitGoing(sb)
	}
	if err := r.raiseWalls(); err != nil {
		return r.failStarted(err)
	}
	// The start event's policy (a JSON pass over the policy and the plan;
	// where a value is redacted, a decode and two passes more) is made
	// while init starts, off the path to the agent's start: nothing it
	// reads changes from here on (raiseWalls added its notes). The event
	// itself is written once init has reported, beside the go
	// (recordStartBeside).
	pc := make(chan any, 1)
	r.startPolicy = pc
	startPolicy := func() { pc <- r.redact.preparedStartPolicy(r.pol, r.plan, r.cgRep) }
	if r.spare != nil {
		// After the warm-up, on its stack: first the exec answer's own
		// warm-up (the agent's first execve waits for its answer, just
		// after the go), then the policy, which only the start event's
		// goroutine waits for.
		r.spare <- func() { r.warmExecAnswer(); startPolicy() }
	} else {
		go startPolicy()
	}
	// init's report is read from now on: the start event and the servers
	// (handleFiles) are made while the control socket and the registry
	// entry are (each makes a file: ~1 ms apiece here), and the go waits
	// for both (controlUp): an agent that runs is always one jail kill
	// and jail ps can find.
	msgsDone := make(chan struct{})
	go r.readMessages(msgsDone)
	auditPath := ""
	if r.trail != nil {
		auditPath = r.trail.Path()
	}
	ctlPath, stopControl := r.serveControl()
	r.ctlPath = ctlPath
	unregister := register(Entry{ID: r.id, Name: r.pol.Name, Started: r.started, Command: r.pol.Command, Workspace: plan.Workspace,
		Writable: plan.Writable, Degraded: r.degraded, Audit: auditPath, Control: ctlPath, Log: r.logPath, Net: netMode(r.pol)})
	defer func() {
		unregister()
		stopControl()
		r.tracef("unregistered")
	}()
	if !r.pol.DryRun && plan.StateDir != "" {
		// After the registration, before the go: a policy file another
		// start named while this one planned (policynamed.go).
		if err := policyNamedSince(plan.StateDir, plan.policyKept, plan.Writable); err != nil {
			return r.failStarted(err)
		}
	}
	r.tracef("control")
	<-lateSigs // every signal the run relays is caught before the go
	close(r.controlUp)
	if r.sess.Lifeline != nil {
		go r.watchLifeline()
	}
	// Housekeeping (trail retention, other runs' stale cgroups: 0.5 ms
	// median, 1.5 ms p90 of CPU here) waits until the agent runs: done
	// while init builds the sandbox, it took a core from init on this
	// 2-core host, and no wall needs it. It still runs at every start
	// that gets this far: a start undone before its agent runs cancels
	// r.ctx (stopServers, or the deferred cancel) and the sweep runs
	// then. Under r.bg: stopServers cancels r.ctx before it waits.
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		select {
		case <-r.startedCh:
		case <-r.ctx.Done():
		}
		r.pruneTrails()
		if r.group != nil {
			r.cleanupStaleCgroups()
		}
		r.tracef("retention")
	}()

	defer r.restoreTerminal()
	var graceTimer, timeout <-chan time.Time
	if r.pol.Timeout > 0 {
		timeout = time.After(r.pol.Timeout)
	}
	interrupts := 0
	relayed := false
	var pending []syscall.Signal // forwarded once the agent exists
	startedCh, exitCh := r.startedCh, r.exitCh
	forward := func(sig syscall.Signal) {
		if !r.agentStarted() {
			// init is pid 1 of its namespace: a signal it has no handler
			// for yet (it may still be starting) would be dropped.
			pending = append(pending, sig)
			return
		}
		_ = unix.Kill(sb.Pid, sig)
	}
	for {
		select {
		case <-r.hupCh:
			// The user's terminal is gone and no SIGHUP came (jail has no
			// controlling terminal: su -c, setsid): the kernel's word for
			// a shell's job, given here. Before, the sandbox ran on with
			// no terminal for ever. Then as a SIGHUP from the user.
			r.notef("terminal: the terminal hung up; the command gets SIGHUP, then SIGKILL after the kill grace (%v)", r.pol.KillGrace)
			select {
			case sigs <- syscall.SIGHUP:
			default:
				r.kill("user", "the terminal hung up")
			}
		case s := <-sigs:
			sig := s.(syscall.Signal)
			switch sig {
			case syscall.SIGTSTP:
				// Someone asked jail to stop (kill -TSTP, or Ctrl-Z on a
				// terminal jail does not relay): the agent stops first, and
				// jail follows when init reports it stopped.
				r.record(audit.Signal{Signal: "SIGTSTP", Number: int(sig), From: "user", To: "agent", Forwarded: true})
				r.signalAgent(sig, true)
				continue
			case syscall.SIGWINCH:
				r.resizePty()
				if r.ptyFile() != nil && interactive {
					continue // the pty, the agent's terminal, signals it
				}
			}
			r.record(audit.Signal{Signal: unix.SignalName(sig), Number: int(sig), From: "user", To: "agent", Forwarded: true})
			forward(sig)
			if sig == syscall.SIGINT || sig == syscall.SIGTERM || sig == syscall.SIGHUP {
				interrupts++
				if interrupts >= 2 && sig == syscall.SIGINT {
					r.kill("user", "second interrupt")
				} else if graceTimer == nil {
					graceTimer = time.After(r.pol.KillGrace)
				}
			}
		case call := <-r.ctlCh:
			who := fmt.Sprintf("pid %d, uid %d", call.who.PID, call.who.UID)
			switch call.op {
			case ctlKill:
				why := "jail kill --now from " + who
				if call.reason != "" {
					why += ": " + call.reason
				}
				r.killFor("user", why, call.who)
			case ctlStop:
				r.record(audit.Signal{Signal: "SIGTERM", Number: int(syscall.SIGTERM), From: "user", To: "agent", Forwarded: true, Requester: call.who})
				if call.reason != "" {
					r.record(audit.Notice{Kind: "session", Severity: "info", Text: "stop requested by " + who + ": " + call.reason})
				}
				r.mu.Lock()
				r.stopping = true
				r.mu.Unlock()
				if r.agentStarted() {
					// The agent and every exec'd command (an idle sandbox:
					// everything in it) get SIGTERM from init.
					_ = sb.Conn.Send(ns.Message{Type: ns.MsgStop})
				} else {
					forward(syscall.SIGTERM)
				}
				interrupts++
				if graceTimer == nil {
					graceTimer = time.After(r.pol.KillGrace)
				}
			}
			close(call.done)
		case <-startedCh:
			startedCh = nil // closed: once
			r.ready(nil)
			for _, sig := range pending {
				_ = unix.Kill(sb.Pid, sig)
			}
			pending = nil
		case <-exitCh:
			exitCh = nil // closed: once
			r.tracef("exit message")
			// init reaped every other process of the sandbox before it
			// said so: once the kernel agrees (sandboxQuiet), the exit
			// check runs now, while the kernel tears init and its
			// namespaces down (1.5-3 ms here), not after.
			r.stopServers() // whatever sandboxQuiet says: nothing is left to serve
			quiet := r.sandboxQuiet()
			r.tracef("quiet")
			if quiet {
				r.endCheck()
			}
		case sig := <-r.stopCh:
			r.suspend(sig, interactive)
		case <-timeout:
			r.mu.Lock()
			r.timedOut = true
			r.mu.Unlock()
			r.notef("timeout: %v elapsed, sending SIGTERM (SIGKILL in %v)", r.pol.Timeout, r.pol.KillGrace)
			r.record(audit.Timeout{LimitMS: audit.Millis(r.pol.Timeout), WallMS: audit.Millis(time.Since(r.started))})
			// Held until the agent exists, as a relayed signal is: init
			// (pid 1 of its namespace) drops a signal it has no handler
			// for yet, and then only the kill grace would end the run.
			forward(syscall.SIGTERM)
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
			if !relayed && spec.Pty {
				relayed = true
				if r.sess.Tty {
					r.keepTty(r.ptyFile())
				} else {
					r.startRelay(interactive, termOut)
				}
			}
		case <-sb.Done():
			<-msgsDone
			if startedCh != nil {
				select {
				case <-startedCh:
					// The agent started (init said so before it ended) and
					// has ended too: a short command's end and its start
					// were ready at once, and select took the end. The
					// starter (the Go API's Start, jail run -d) hears that
					// it started, then the exit, not "ended before it was
					// ready (exit 0)" (trail16: the TestStartRelativeAuditFile
					// flake under load).
					r.ready(nil)
				default:
				}
			}
			r.mu.Lock()
			ptyDone := r.ptyDone
			r.mu.Unlock()
			if ptyDone != nil {
				r.awaitRelay(ptyDone)
			}
			r.restoreTerminal()
			r.mu.Lock()
			killed := r.killedBy != ""
			r.mu.Unlock()
			if killed && relayed && interactive {
				// A killed agent could not leave its screen: the modes it set
				// that would keep the shell's screen from working (mouse and
				// focus reports, bracketed paste, a hidden cursor, colours)
				// are reset, and the summary starts on a line of its own.
				_, _ = r.screen.WriteString(ptyrelay.SaneModes)
			}
			return r.finish()
		}
	}
}

// raiseWalls starts the protections the supervisor keeps while the sandbox
// runs: the agent-configuration guard's snapshot, record and watch, and
// the sentinel's watch of the writable trees (with its run record). Only
// the agent can change what they guard, and it does not exist before the
// go, so they run here, after init has its spec and while it builds the
// sandbox (mounts, capabilities, Landlock, seccomp: 10-15 ms), not before
// it. The go is sent only once they are up: readMessages, which sends it,
// starts after this, and waits for wallsUp too. Nothing else can write in
// the sandbox before the go: init runs only its own setup, and jail exec
// is served (serveControl) after this as well.
func (r *runner) raiseWalls() error {
	// Why every start, degraded too (its agent can still rename a
	// socket's file in its write paths): the far socket search's record of
	// each file system this run writes on is dropped, and not trusted or
	// written while this supervisor lives (farRecord). Before the go: an
	// entry the plan's own search recorded for such a file system is
	// dropped here, before the agent could move a socket into view.
	farWriting(farRecordFile(r.plan.StateDir), r.plan.Mounts, r.plan.hostMounts)
	if err := r.openGuard(); err != nil {
		return err
	}
	r.takeCreds()
	r.tracef("agentcfg")
	for _, n := range r.plan.gitNotes {
		r.notef("%s", n)
	}
	r.startSentry()
	r.tracef("sentinel")
	if seam.MaskWatch != nil {
		seam.MaskWatch(r.sb.Pid) // a test's: the host acts while init mounts
	}
	if err := r.startMaskWatch(); err != nil {
		return err
	}
	r.tracef("mask watch")
	var ws []interface{ Unwatch() }
	if r.acfg != nil && r.acfg.g != nil {
		ws = append(ws, r.acfg.g)
	}
	if r.sentry != nil {
		ws = append(ws, r.sentry.s)
	}
	if r.masks != nil {
		ws = append(ws, r.masks)
	}
	if len(ws) > 0 {
		r.unwatch = func() {
			for _, w := range ws {
				w.Unwatch()
			}
		}
	}
	close(r.wallsUp)
	return nil
}

// failStarted ends a start that failed after init had its spec: init (and
// with it its pid namespace) is killed and reaped before the failure is
// recorded, so that nothing of the sandbox outlives the message.
func (r *runner) failStarted(err error) int {
	// init waits for the go, which never comes: nothing of the agent ran.
	_ = unix.Kill(r.sb.Pid, unix.SIGKILL)
	_, _ = r.sb.Wait()
	return r.fail(err)
}

// beginInit clones init in the background (ns.Begin: into the sandbox's
// cgroup v2 directly, born in its v1 groups by a thread that joins them
// for the clone, else joined before its spec), so that its clone, exec
// and Go start overlap the plan; finishInit waits for it and sends the
// spec. The returned function kills an init that never got its spec: every
// return before finishInit runs it.
func (r *runner) beginInit() (abort func()) {
	// A terminal on stdin alone is handed on read-only (stdin_linux.go).
	stdin, closeStdin := r.agentStdin()
	cfg := ns.Config{
		Rootful:  os.Getuid() == 0,
		NetHost:  r.pol.Net == policy.NetHost,
		CgroupFD: -1,
		Stdin:    stdin,
		Stdout:   os.Stdout,
		Stderr:   os.Stderr,
		Degraded: r.degraded,
	}
	if fd, ok := r.group.FD(); ok {
		// No moment in which init runs outside its limits.
		cfg.CgroupFD = fd
	} else if j, ok := r.group.(cgroup.ThreadJoiner); ok {
		// cgroup v1: the thread that clones init joins the groups for
		// the clone and leaves them, so that init is born inside (no
		// moment outside its limits either), without the RCU grace
		// period that writing init's pid into them waits for (12-16 ms
		// of every rootful start here).
		cfg.JoinThread = j.JoinThread
	} else if r.group.Mode() != "none" {
		// Joined before init has its spec: it has run nothing of the
		// sandbox's then, and the agent and every process init makes are
		// born inside (init's cgroup namespace is made after, rooted there).
		cfg.BeforeSpec = r.group.Add
	}
	ch := make(chan initStart, 1)
	r.initCh = ch
	netCfg := r.netHook()
	goNow(func() {
		// The lean init's checked copy, or this binary (the trace says
		// which, and why).
		sd, _ := statedir.Dir()
		var t0 float64 // when Begin was called, for the trace
		if r.trace {
			t0 = r.traceNow()
		}
		exe, how, extract := initbin.Open(sd)
		cfg.Exe = exe
		// Its own entry starts init without a fork of this process
		// (ns.Config.Entry); --x-fork-init tests the fork.
		cfg.Entry = exe != nil && initbin.HasEntry() && !r.pol.ForkInit
		st, err := ns.Begin(cfg)
		closeStdin() // init has its own copy now
		if err == nil && netCfg != nil && !r.pol.DryRun {
			// Init sets up its network (5-9 ms with the proxy) while this
			// process plans, instead of after the spec. A failure to send
			// is left to Finish, which sends on the same socket.
			_, _ = st.Network(netCfg)
		}
		var at float64 // when init existed (its pid known), for the trace
		if r.trace {
			at = r.traceNow()
		}
		took := at - t0
		if exe != nil {
			exe.Close()
			if st != nil && st.ExeErr != nil {
				how = fmt.Sprintf("%s (exec of the lean init failed: %v)", initbin.Own, st.ExeErr)
			}
		}
		// How it was started, for the trace.
		start := "a fork of jail"
		switch {
		case st != nil && st.Entry:
			start = "the lean init's entry (no fork of jail)"
		case st != nil && st.EntryErr != nil:
			start = fmt.Sprintf("a fork of jail (%v)", st.EntryErr)
		case r.degraded:
			start = "a vfork of jail (degraded: no namespace)"
		}
		if extract != nil {
			// For the next runs, while this one's init starts.
			how += "; " + extract()
		}
		ch <- initStart{st, err, how, start, at, took}
	})
	return func() {
		if r.initCh == nil {
			return // finishInit took it
		}
		if is := <-r.initCh; is.st != nil {
			is.st.Abort()
		}
	}
}

// goNow runs f on a new goroutine that starts now: this one yields its
// thread to it. Go would run f when another thread steals it from this
// one's queue, which took 1-7 ms at the start's beginning (a thread to
// create, while this goroutine kept its own busy with the check and the
// plan): init's clone waited that long. f runs until it blocks (init's
// start waits in system calls from its first steps), then this goroutine
// goes on.
func goNow(f func()) {
	go f()
	runtime.Gosched()
}

// initStart is ns.Begin's result.
type initStart struct {
	st    *ns.Starting
	err   error
	how   string  // which program init is (initbin.Open), for the trace
	start string  // how it was started: by the lean init's entry or a fork
	at    float64 // the trace clock when Begin returned
	took  float64 // how long Begin took (ms)
}

// finishInit waits for beginInit's init and hands it the spec.
func (r *runner) finishInit(spec *ns.Spec) (*ns.Sandbox, error) {
	is := <-r.initCh
	r.initCh = nil
	if r.trace {
		r.notes.Notef("trace", notice.Trace, "supervisor init program: %s", is.how)
		r.notes.Notef("trace", notice.Trace, "supervisor init start: %s", is.start)
		// When init existed, and how long its start took (initbin's
		// checks, the exec, the namespaces, the clone), in the step lines'
		// format: make bench puts it in its place by its time.
		r.notes.Notef("trace", notice.Trace, "supervisor %-14s %7.2f ms (+%.2f)", "init cloned", is.at, is.took)
	}
	err := is.err
	var sb *ns.Sandbox
	if err == nil {
		sb, err = is.st.Finish(spec)
	}
	if err != nil && errors.Is(err, ns.ErrUserNS) {
		// One line: the host's cause and its fix.
		f := hostcheck.Read("", os.Environ(), os.Getuid())
		err = fmt.Errorf("cannot create the sandbox's namespaces: %s", hostcheck.Diagnose(f, probeErr(err)).Line)
	}
	return sb, err
}

// netHook is the network hook's configuration for init, nil for none. It
// depends on the policy alone, so that beginInit can hand it to init before
// the plan (ns.Starting.Network) and the spec carry the same bytes.
func (r *runner) netHook() []byte {
	p := r.pol
	var noProxy []string
	if p.Hostname != "" {
		noProxy = []string{p.Hostname}
	}
	switch p.Net {
	case policy.NetAllow:
		return inithooks.NetConfig{Fallback: p.ForceProxyAware, Fake: netproxy.FakeRange.String(), NoProxy: noProxy, HostPorts: r.hostPorts()}.Wire()
	case policy.NetNone:
		if r.degraded {
			return nil // no network namespace to put them in: seccomp refuses IP sockets
		}
		// No route out, but jail's DNS and refusal listeners inside, so
		// that a refused name fails at once and says so.
		return inithooks.NetConfig{Mode: nsnet.ModeNone, Fake: netproxy.FakeRange.String(), NoProxy: noProxy}.Wire()
	}
	return nil
}

// addHooks puts the feature configuration for init into the spec.
func (r *runner) addHooks(spec *ns.Spec) error {
	p := r.pol
	// In ns's wire format (inithooks/wire.go): init reads them without encoding/json.
	set := func(name string, b []byte) { spec.Hooks[name] = b }
	set(ns.HookLandlock, inithooks.LandlockWire(r.plan.Landlock))
	sc := inithooks.SeccompHook{AllowPtrace: p.AllowPtrace, Replace: p.SeccompReplace, ExecNotify: !p.NoExecAudit || len(p.BlockCommand) > 0,
		SimulateBusy: p.SimulateNotifyBusy, RequireNotify: p.RequireExecAudit,
		// Degraded: the walls the network and mount namespaces would be.
		NoInet: r.degraded && p.Net == policy.NetNone, NoUnix: r.degraded}
	if p.SeccompFile != "" {
		// Validated here, with errors naming the file; init parses the same
		// bytes again (the file may not be visible inside).
		data, rerr := seccomp.ReadPolicyFile(p.SeccompFile)
		if rerr != nil {
			return &policy.FieldError{Key: "seccomp", Value: p.SeccompFile, Reason: rerr.Error()}
		}
		if _, err := seccomp.ParsePolicy(p.SeccompFile, data); err != nil {
			return &policy.FieldError{Key: "seccomp", Value: p.SeccompFile, Reason: err.Error()}
		}
		sc.Extra, sc.ExtraName = data, p.SeccompFile
	} else if p.SeccompReplace {
		return &policy.FieldError{Key: "seccomp-replace", Reason: "needs `seccomp` FILE: the filter to use instead"}
	}
	set(ns.HookSeccomp, sc.Wire())
	if cfg := r.netHook(); cfg != nil {
		set(ns.HookNetwork, cfg)
	}
	if p.MaxFileSize > 0 {
		spec.IgnoreSIGXFSZ = true
	}
	return nil
}

func (r *runner) readMessages(done chan struct{}) {
	defer close(done)
	defer r.ex.end() // init is gone: so is every exec'd command
	for {
		m, files, err := r.sb.Conn.Recv()
		if err != nil {
			return
		}
		switch m.Type {
		case ns.MsgFiles:
			// The walls first (raiseWalls): no go, and so no agent, before
			// the guard's snapshot and the sentinel's watches are in place.
			select {
			case <-r.wallsUp:
			case <-r.ctx.Done():
				return
			}
			r.handleFiles(m, files)
			// And the kill switch: the control socket and the registry
			// entry, made meanwhile (run).
			select {
			case <-r.controlUp:
			case <-r.ctx.Done():
				return
			}
			// Before the go: nothing of the agent's can write a file
			// yet (gitkeep.Stamps.Settle).
			settleStamps(r.gitPacks)
			if err := r.sb.Conn.Send(ns.Message{Type: ns.MsgGo}); err != nil {
				return
			}
		case ns.MsgExecStarted, ns.MsgExecExit:
			r.ex.deliver(m, files)
		case ns.MsgExecChild:
			r.ex.child(m, files)
		case ns.MsgStarted:
			// init's mount namespace is complete: held from now on,
			// its teardown is the supervisor's, beside the rest of the
			// run's end, instead of a part of init's exit. First: a
			// short agent (/bin/true) has init exiting 1-2 ms later.
			r.holdMounts(r.sb.Pid)
			r.holdHome(r.sb.Pid)
			r.mu.Lock()
			r.agentPid = m.Pid
			r.mu.Unlock()
			close(r.startedCh)
			r.releaseGC()
			r.servePublished()
		case ns.MsgStopped:
			if m.ID != 0 {
				// An exec'd command: its jail exec may stop with it
				// (selfstop_linux.go); not on this loop, which must not
				// wait for a client.
				go r.stops.execStopped(m.ID, syscall.Signal(m.Signal))
				continue
			}
			select {
			case r.stopCh <- syscall.Signal(m.Signal):
			default: // one is being handled; the agent is stopped either way
			}
		case ns.MsgHeld:
			select {
			case r.heldCh <- m.Code:
			default:
			}
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
			first := r.exit == nil
			r.exit = &mm
			r.mu.Unlock()
			if first {
				// The watches go first, here, on the thread that read
				// the message: the main loop's goroutine, which the
				// channel wakes, may wait for a processor (another
				// thread's steal sleeps up to the supervisor's 1 ms
				// timer slack: 0.77 ms seen under load), and the
				// descriptors' close at the end waits for fsnotify's
				// reaper for as long as the removals came late
				// (stopServers). The same point of the run: the main
				// loop's stopServers removes them on this message too.
				r.unwatchNow()
				close(r.exitCh)
			}
		case ns.MsgError:
			r.mu.Lock()
			mm := m
			r.setupErr = &mm
			r.mu.Unlock()
		case ns.MsgLog:
			r.initLog(m)
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
	r.recordStartBeside(m.Info)
	// The sandbox's tmpfs file systems exist now (init built its tree).
	r.watchMemory(r.spec)
	var tcps, refusers, hostPorts []*os.File
	var dns, resets *os.File
	// The record first: exec notifications may refuse a command as soon as
	// their listener is served below.
	for i, f := range files {
		if i < len(m.Names) && m.Names[i] == ns.RecordName(denials.Dir, denials.File) {
			r.openDenials(f)
			files[i] = nil
		}
	}
	for i, f := range files {
		if f == nil {
			continue
		}
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
			r.serveExecs(f, r.firstExec(m.Path))
		case "net-tcp":
			tcps = append(tcps, f)
		case "net-refuse":
			refusers = append(refusers, f)
		case "net-hostport":
			hostPorts = append(hostPorts, f)
		case "net-dns":
			dns = f
		case "net-resets":
			resets = f
		default:
			f.Close()
		}
	}
	if len(tcps)+len(refusers) > 0 || dns != nil {
		r.serveNet(tcps, refusers, hostPorts, dns, resets, m.Info)
	} else {
		for _, f := range append(hostPorts, resets) {
			if f != nil {
				f.Close()
			}
		}
	}
}

// finish turns init's report, the cgroup's events and the supervisor's own
// actions into jail's exit code, the exit report and the last audit event.
func (r *runner) finish() int {
	ws, werr := r.sb.Wait()
	r.tracef("init exited")
	if r.degraded {
		r.killLeft()
	}
	r.dropMounts() // init is reaped: the namespace's teardown, beside the rest
	defer r.tracef("done")
	r.endCheck() // unless init's exit message came first
	var ev cgroup.Events
	var st cgroup.Stats
	if r.group != nil {
		ev, _ = r.group.Events()
		st, _ = r.group.Stats()
	}
	r.tracef("cgroup stats")
	r.removeCgroup()
	<-r.serversDone
	r.tracef("servers done")
	// Every writer of these (the message reader, the signal loop, the
	// servers) is done.
	r.mu.Lock()
	exitMsg, setupErr, timedOut, killedBy, memOver := r.exit, r.setupErr, r.timedOut, r.killedBy, r.memOver
	r.mu.Unlock()
	if r.memWatch != nil && int64(r.memWatch.Peak().Bytes) > int64(st.MemoryPeak) {
		st.MemoryPeak = r.memWatch.Peak().Bytes // the whole sandbox, sampled
	}
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
		r.notef("process limit reached: `pids` %d (%d forks refused)", r.pol.Pids, ev.PidsMaxHits)
		r.record(audit.Limit{Kind: "pids", Source: "cgroup-" + r.group.Mode(), Limit: r.pol.Pids, Value: int64(ev.PidsMaxHits), Action: "refused"})
	}
	code, reason := 0, "exited"
	switch {
	case setupErr != nil:
		if line := r.diagnoseSetup(setupErr.Error); line != "" {
			setupErr.Error = line
		}
		if setupErr.ExitCode == ExitNotFound && len(r.pol.Command) > 0 {
			if line := notFoundLine(setupErr.Error, r.pol.Command[0], lookupEnv(r.plan.Env, "PATH"), r.plan.Cwd, r.plan.Home, false); line != "" {
				setupErr.Error = line
			}
		}
		r.errorf("%s", Explain(errors.New(setupErr.Error)))
		code, reason = setupErr.ExitCode, "setup_failed"
		if code == 0 {
			code = ExitSetup
		}
		exit.Error = setupErr.Error
	case timedOut:
		code, reason = ExitTimeout, "timeout"
		r.notef("timed out after %v", r.pol.Timeout)
	case ev.OOMKills > 0:
		code, reason = 128+int(syscall.SIGKILL), "oom"
		r.errorf("out of memory: limit %s reached", cgroup.FormatSize(r.pol.Memory))
		r.record(audit.Limit{Kind: "oom", Source: "cgroup-" + r.group.Mode(), Limit: r.pol.Memory, Value: int64(ev.OOMKills), Action: "killed"})
		if exitMsg != nil && exitMsg.Signal == 0 && exitMsg.Code != 0 {
			code = exitMsg.Code
		}
	case memOver != nil:
		code, reason = 128+int(syscall.SIGKILL), "oom"
		r.errorf("out of memory: limit %s reached (watched, not kernel-enforced: the sandbox held %s at the last sample)", cgroup.FormatSize(r.pol.Memory), cgroup.FormatSize(int64(memOver.Bytes)))
		r.record(audit.Limit{Kind: "oom", Source: "watch", Limit: r.pol.Memory, Value: int64(memOver.Bytes), Action: "killed"})
	case killedBy != "":
		code, reason = 128+int(syscall.SIGKILL), "killed"
		r.notef("killed the sandbox: %s", killedBy)
		if exitMsg != nil && exitMsg.Code != 0 {
			code = exitMsg.Code
		}
	case exitMsg != nil:
		code = exitMsg.Code
		if exitMsg.Signal != 0 {
			reason = "signaled"
			exit.Signal = unix.SignalName(syscall.Signal(exitMsg.Signal))
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
	r.reportTerminal()
	exit.Code, exit.Reason = code, reason
	r.debugf("exit %d (%s) after %.0f ms; cpu %.0f ms; peak memory %s; limits via %s",
		code, reason, exit.WallMS, audit.Millis(st.CPU), cgroup.FormatSize(int64(st.MemoryPeak)), r.group.Mode())
	if r.sentryDropped != nil {
		<-r.sentryDropped
	}
	r.recordExit(exit)
	return code
}

// endCheck is the part of the run's end that needs only every process of
// the sandbox gone: the servers stopped, then the exit checks. Its two
// callers vouch for that. The main loop calls it on init's exit message,
// which init sends only after it killed the rest of the sandbox and reaped
// every child until none was left (ns: reap), and once the kernel agrees
// (sandboxQuiet): a reaped process has made its last write, and init
// forks nothing from then on. finish calls it once init has exited, when
// the kernel has killed and reaped the whole pid namespace (a killed init
// sends no message). Called once; the second call does nothing.
func (r *runner) endCheck() {
	if r.checked {
		return
	}
	r.checked = true
	r.stopServers()
	r.recordStart(nil) // init failed before reporting: the trail still opens with start
	// From here on what the trail records is jail's own look at the end
	// (quarantines, agent configuration put back, git refs deleted): it
	// has a room of its own in the trail's budget, which what the agent
	// caused while it ran could not spend (audit.Writer.Ending).
	r.trailEnding()
	// The sandbox has ended: no writer is left for the last check.
	r.closeGuard()
	r.settleCreds()
	r.tracef("agentcfg check")
	if drop := r.exitSentryChecks(); drop != nil {
		// The run's record goes while finish waits for init and writes
		// the exit event; it is gone before that event is (finish).
		done := make(chan struct{})
		r.sentryDropped = done
		go func() {
			defer close(done)
			drop()
		}()
	}
	r.sayCacheHints()
	r.sayRegistryHints()
	if r.sayHomeLeft() {
		r.tracef("home left")
	}
	// The agent has ended: a ref or a git dir it deleted is said, with
	// the command that fetches it back from what the start kept.
	for _, n := range lostGitHistory(r.gitKept) {
		r.notef("%s", n)
	}
	// Then the stores are pruned (bounded; what the repository holds in
	// its own packs again, what is past gitkeep.Age).
	for _, n := range pruneGitKept(r.gitKept) {
		r.notef("%s", n)
	}
	r.gitKept = nil
	// The run's window ends after its agent did (gitkeep.BeginRun).
	if err := r.gitRun.End(time.Now()); err != nil {
		r.notef("git: this run's window is not recorded as ended (a later start ends it): %v", err)
	}
	r.gitRun = nil
	r.tracef("exit check")
}

// closeLater keeps an inotify descriptor's close for closeWatches.
func (r *runner) closeLater(close func()) {
	r.watchCloses = append(r.watchCloses, close)
}

// closeWatches closes the inotify descriptors of the agent-config guard
// and of the sentinel, once the run is over (RunSession). Their watches
// were removed when the sandbox was quiet (stopServers): the kernel's mark
// reaper (1 jiffy, then an SRCU grace period, in a kworker) has run by
// now, and each close costs ~0.03 ms. A close with watches left waits for
// it: 14-20 ms of "exit check" in most runs, the second of the two closes
// (its grace period right after the first's is not expedited). Closed
// sooner (right after the exit check, ~1 ms after the removals), the first
// close forces the reaper early, and its grace period was then at times
// not expedited either: up to 12 ms.
func (r *runner) closeWatches() {
	for _, c := range r.watchCloses {
		c()
	}
	r.watchCloses = nil
}

// unwatchNow removes the walls' watches (Unwatch: safe to call again).
func (r *runner) unwatchNow() {
	if r.unwatch != nil {
		r.unwatch()
	}
}

// stopServers stops the sandbox's servers (proxy, DNS, exec
// notifications, memory watch: nothing is left to serve) and, once they
// are done, closes the denials record and fsyncs the trail, in the
// background: that runs while the exit checks do, so that the exit
// event's own fsync, which ends the run, has only its line to put on disk
// (the fsyncs were 1.2-2.6 ms of the run's end, here). serversDone is
// closed then: every event of the servers is queued, and the state they
// write (memOver, killedBy) is final. Called once; the second call does
// nothing.
func (r *runner) stopServers() {
	if r.serversDone != nil {
		return
	}
	done := make(chan struct{})
	r.serversDone = done
	// The watches of the agent-config guard and of the sentinel are
	// removed first, before anything else of the end is started (on
	// init's exit message the reader has removed them already, and this
	// does nothing; without a message, here): the kernel frees their
	// marks in its reaper (an SRCU grace period, beside the checks), and
	// their descriptors' close (closeWatches, the last step) waits for
	// that reaper unless it has run, 2-2.5 ms after the removals here
	// (endtail rows). Removed in the goroutines below, they came after the
	// servers' shutdown and the trail's fsync, which held the other P:
	// 0.6-1 ms after the exit message, and the close waited that much
	// longer. The watch loops end on their own and the heartbeats stop in
	// the background, while the kernel answers sandboxQuiet; the checks
	// wait for them (Close, Stop).
	r.unwatchNow()
	if r.acfg != nil && r.acfg.g != nil {
		go r.acfg.g.StopWatching()
	}
	if r.sentry != nil {
		go r.sentry.s.Stop()
	}
	r.cancel()
	tr := r.trail
	go func() {
		defer close(done)
		r.bg.Wait()
		r.tracef("bg wait")
		r.closeDenials()
		if tr != nil {
			_ = tr.Sync()
		}
	}()
}

// initLog renders one of init's structured log messages (init writes
// nothing to the terminal itself: it may be the agent's screen).
func (r *runner) initLog(m ns.Message) {
	sev := notice.Warning
	switch m.Level {
	case ns.LogTrace:
		if !r.trace {
			return
		}
		sev = notice.Trace
	case ns.LogError:
		sev = notice.Error
	}
	r.say(notice.Notice{Kind: "init", Severity: sev, Text: m.Text})
}
