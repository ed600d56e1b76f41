package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/cgroup"
	"github.com/jail-sandbox/jail/notice"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/procstat"
	"github.com/jail-sandbox/jail/proctree"
	"github.com/jail-sandbox/jail/session"
)

// This file: commands exec'd into a running sandbox (jail exec, the Go
// API's Sandbox.Command). The client's request arrives on the control
// socket; the supervisor checks it and forwards it to init, which forks the
// command from the agent's thread (ns: initState.exec), and relays the
// start and the exit back.

// execs is the supervisor's book of exec'd commands.
type execs struct {
	mu   sync.Mutex
	next int
	wait map[int]chan execMsg // ID -> started, then exit (closed: init is gone)
	// startMu makes the starts one at a time: the command's first execve
	// comes from init's child, unreadable to the exec-notify server (it is
	// not dumpable until the exec completes), and is recorded with the
	// argv the supervisor asked for; with one start at a time, which one
	// it is cannot be mistaken.
	startMu sync.Mutex
	// pending is the command being started, until its first exec is seen:
	// the exec of init's own fork child, which shares init's address
	// space until it execs (initForkChild). Not "a direct child of init":
	// an orphan of the agent's (reparented to init) has that too, and took
	// the command's argv and limits. Where kcmp is refused, init's report
	// of the process it forked (reportedKid).
	pending *ns.ExecSpec
	// refusing: pending was given up by its client before init answered
	// (handleExec): its first exec is refused, and pending stays set so
	// that no later start's exec is mistaken for it.
	refusing bool
	// taken is the host pid and start time of the pending command's first
	// exec, once seen: the supervisor's own kill of a start given up after
	// its exec was allowed reaches it without init (stuck, the reason the
	// start was late).
	taken      int
	takenStart uint64
	// kids are the host pids init reported forking for the pending
	// command (MsgExecChild, asked for where kcmp cannot tell: reportKids),
	// and kidsNews is closed at each report and when pending changes.
	reportKids bool
	kids       map[int]bool
	kidsNews   chan struct{}
	// sub is each running command's cgroup below the sandbox's (by ID),
	// where the sandbox has one: the command is put in at its first exec,
	// before it can fork, so its kill reaches all it started, even a
	// double-forked setsid'd child whose parent exited (no link to the
	// command left in /proc for proctree to follow).
	sub    map[int]*cgroup.Sub
	closed bool
}

// execMsg is init's message about one command, with the pty master that
// came with its start (-t).
type execMsg struct {
	m      ns.Message
	master *os.File
}

func (x *execs) add() (int, chan execMsg, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return 0, nil, errors.New("the sandbox has ended")
	}
	if x.wait == nil {
		x.wait = map[int]chan execMsg{}
	}
	x.next++
	ch := make(chan execMsg, 2)
	x.wait[x.next] = ch
	return x.next, ch, nil
}

func (x *execs) remove(id int) {
	x.mu.Lock()
	delete(x.wait, id)
	x.mu.Unlock()
}

// deliver hands init's message about command m.ID to its waiter.
func (x *execs) deliver(m ns.Message, files []*os.File) {
	x.mu.Lock()
	ch := x.wait[m.ID]
	x.mu.Unlock()
	if ch == nil {
		closeAll(files)
		return
	}
	msg := execMsg{m: m}
	if len(files) > 0 {
		msg.master = files[0]
		closeAll(files[1:])
	}
	select {
	case ch <- msg:
	default:
		closeAll(files)
	}
}

// end tells every waiter that init is gone: their commands died with it.
func (x *execs) end() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.closed = true
	for id, ch := range x.wait {
		close(ch)
		delete(x.wait, id)
	}
}

func (x *execs) running() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.wait)
}

// setPending makes es the command being started (nil: none), under x.mu.
func (x *execs) setPending(es *ns.ExecSpec) {
	x.pending, x.refusing = es, false
	x.taken, x.takenStart = 0, 0
	x.reportKids = es != nil && es.ReportChild
	x.kids = nil
	if x.kidsNews != nil {
		close(x.kidsNews) // a wait for the last command's report ends
	}
	x.kidsNews = make(chan struct{})
}

// child takes init's report of the process it forked for command m.ID: a
// pidfd of it. The pid it names in this process's pid namespace (its
// fdinfo's Pid line), where the exec notifications name it too, is that
// process: the pidfd pins it.
func (x *execs) child(m ns.Message, files []*os.File) {
	pid := 0
	if len(files) > 0 {
		var buf [256]byte
		if n, err := readSmall(fmt.Sprintf("/proc/self/fdinfo/%d", files[0].Fd()), buf[:]); err == nil {
			pid = fdinfoPid(buf[:n])
		}
	}
	closeAll(files)
	x.mu.Lock()
	defer x.mu.Unlock()
	if pid <= 0 || x.pending == nil || x.pending.ID != m.ID || !x.reportKids {
		return
	}
	if x.kids == nil {
		x.kids = map[int]bool{}
	}
	x.kids[pid] = true
	close(x.kidsNews)
	x.kidsNews = make(chan struct{})
}

// fdinfoPid is the "Pid:" of a pidfd's fdinfo (0: none, or the process
// has exited: -1).
func fdinfoPid(b []byte) int {
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Pid:"); ok {
			pid, _ := strconv.Atoi(strings.TrimSpace(v))
			return pid
		}
	}
	return 0
}

// reportedKid tells whether hostPid is the process init forked for the
// pending command, by init's report (kids). A fresh child of init (the
// only kind that can be: the fork is init's, and its exec is the child's
// first) whose exec comes before the report waits for it, at most until
// the start's own bound: the command's exec waits for our answer, and
// init reports it from another thread meanwhile. Under x.mu, which it
// lets go while it waits.
func (x *execs) reportedKid(initPid, hostPid int) bool {
	deadline := time.Now().Add(execStartWait)
	for {
		if x.pending == nil || !x.reportKids {
			return false
		}
		if x.kids[hostPid] {
			return true
		}
		if len(x.kids) > 0 || !freshChildOf(initPid, hostPid) {
			// Reported, and not this one; or a process init did not just
			// fork (its parent is not init, or it has exec'd since).
			return false
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return false
		}
		news := x.kidsNews
		x.mu.Unlock()
		select {
		case <-news:
		case <-time.After(wait):
		}
		x.mu.Lock()
	}
}

// freshChildOf tells whether hostPid is initPid's child that has not
// exec'd since its fork (PF_FORKNOEXEC).
func freshChildOf(initPid, hostPid int) bool {
	st, err := procstat.Read("", hostPid)
	return err == nil && st.PPid == initPid && st.Flags&pfForkNoExec != 0
}

// takePending returns the command being started if hostPid's exec is its
// first one: once. refuse tells an exec of init's fork child when no
// command is pending: a start whose request was given up at its deadline
// (init read it just before), which must fail rather than run a command
// nobody waits for, without the limits set before its first instruction.
func (r *runner) takePending(hostPid int) (es *ns.ExecSpec, refuse bool) {
	r.ex.mu.Lock()
	defer r.ex.mu.Unlock()
	if r.sb == nil {
		return nil, false
	}
	child, known := initForkChild(r.sb.Pid, hostPid)
	if !known {
		// No kcmp (an outer jail's filter refuses it, the kernel lacks
		// it, or, degraded and unprivileged, init is not dumpable to
		// jail: EPERM): init's report of the process it forked says
		// (reportedKid). Not what the kernel shows of the process: one
		// the agent makes with clone(CLONE_PARENT) is init's forking
		// thread's fresh child as well (review17d), and took the
		// command's argv in the trail and its limits.
		child = r.ex.reportedKid(r.sb.Pid, hostPid)
	}
	if !child {
		return nil, false
	}
	if r.ex.pending == nil {
		return nil, known
	}
	if r.ex.refusing {
		// Its client went away before the start was answered: init's
		// child (known or reported) never runs it.
		return nil, true
	}
	p := r.ex.pending
	r.ex.pending = nil
	close(r.ex.kidsNews) // nothing waits for a report of it any more
	r.ex.kidsNews = make(chan struct{})
	r.ex.taken, r.ex.takenStart = hostPid, procstat.StartTick(hostPid)
	if sub := r.execSub(p.ID, hostPid); sub != nil {
		if r.ex.sub == nil {
			r.ex.sub = map[int]*cgroup.Sub{}
		}
		r.ex.sub[p.ID] = sub
	}
	return p, false
}

// execSub puts hostPid, a jail exec command paused at its first exec (it
// has forked nothing yet), into a cgroup of its own below the sandbox's:
// nil where the sandbox has none, or the move failed (then the kill walks
// /proc: proctree). Under r.ex.mu: the late start's kill (handleExec)
// finds the sub once the exec is taken.
func (r *runner) execSub(id, hostPid int) *cgroup.Sub {
	sm, ok := r.group.(cgroup.SubMaker)
	if !ok || r.group.Mode() == "none" {
		return nil
	}
	sub, err := sm.Sub(fmt.Sprintf("exec-%d", id))
	if err != nil {
		r.debugf("exec %d: no cgroup of its own: %v", id, err)
		return nil
	}
	if err := sub.Add(hostPid); err != nil {
		r.debugf("exec %d: no cgroup of its own: %v", id, err)
		_, _ = sub.Remove()
		return nil
	}
	return sub
}

// execSubOf is command id's cgroup (nil: none).
func (x *execs) subOf(id int) *cgroup.Sub {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.sub[id]
}

// endSub removes command id's cgroup once it has exited, if nothing it
// started runs on (a background job keeps it until the sandbox's end,
// whose kill and removal take it).
func (x *execs) endSub(id int) {
	x.mu.Lock()
	sub := x.sub[id]
	delete(x.sub, id)
	x.mu.Unlock()
	if sub != nil {
		_, _ = sub.Remove()
	}
}

// kcmpVM is KCMP_VM (linux/kcmp.h): do two processes share one mm.
const kcmpVM = 1

// initForkChild tells whether hostPid is a child init forked that has not
// exec'd yet. Go's ForkExec clones with CLONE_VM|CLONE_VFORK, so until its
// execve completes the child shares init's address space, which no other
// process of the sandbox can: an orphan of the agent's, reparented to init,
// has init as its parent but its own mm (review16a: it took a jail exec
// command's match, its argv and its limits). The exec waits for our
// answer, so hostPid is still that process. known is false where kcmp
// fails (refused by an outer jail's seccomp filter, a kernel without
// CONFIG_KCMP, no ptrace access).
func initForkChild(initPid, hostPid int) (child, known bool) {
	if initPid <= 0 || hostPid <= 0 {
		return false, false
	}
	ret, _, e := unix.Syscall6(unix.SYS_KCMP, uintptr(initPid), uintptr(hostPid), kcmpVM, 0, 0, 0)
	if e != 0 {
		return false, false
	}
	return ret == 0, true
}

// kcmpRefused tells whether kcmp cannot compare init with anything (an
// outer jail's filter refuses it, the kernel lacks it, no ptrace access to
// init: degraded and unprivileged, init is not dumpable to jail).
func kcmpRefused(initPid int) bool {
	_, known := initForkChild(initPid, initPid)
	return !known
}

// pfForkNoExec is PF_FORKNOEXEC (linux/sched.h): forked, not exec'd since.
const pfForkNoExec = 0x40

// checkStdio refuses what must never become an exec'd command's stdio.
func checkStdio(files []*os.File) error {
	for i, f := range files {
		// A host terminal handed in as it is lets the command push input
		// into the user's shell (TIOCSTI, CVE-2017-5226) or read it: a
		// terminal is relayed through a pty of the sandbox's (-t) or a pipe.
		if _, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err == nil {
			return fmt.Errorf("fd %d is a terminal: use -t, or a pipe", i)
		}
		if err := checkStdioKind(f); err != nil {
			return fmt.Errorf("fd %d %w", i, err)
		}
	}
	return nil
}

// checkStdioKind refuses a stdio fd that is a way out of the mount tree
// rather than a stream: a directory, or an O_PATH descriptor of anything.
// The sandbox reaches the host's tree below a directory with openat or
// /proc/self/fd/N/NAME, around every mask, the hidden $HOME and the
// read-only view (CVE-2024-21626's class); an O_PATH one is reopened
// through /proc/self/fd/N with rights its holder never had. A host
// network socket is a way around --net (checkStdioSocket). The error
// reads after "fd N" or "stdin".
func checkStdioKind(f *os.File) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fmt.Errorf("cannot be checked: %w", err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO, unix.S_IFREG, unix.S_IFCHR:
	case unix.S_IFSOCK:
		if err := checkStdioSocket(int(f.Fd())); err != nil {
			return err
		}
	case unix.S_IFDIR:
		return errors.New("is a directory: the sandbox would reach the host's files below it, around every mask")
	default:
		return errors.New("is not a pipe, socket, file or device")
	}
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err != nil || fl&unix.O_PATH != 0 {
		return errors.New("is an O_PATH descriptor: the sandbox could reopen it with rights it was not given")
	}
	return nil
}

// checkStdioSocket refuses a stdio socket that is a way onto the host's
// network (review15d). A socket keeps the network namespace it was made
// in, the host's: an IP socket, whatever its state, is a door to every
// address there -- a datagram one is connect(2)ed again or sendto(2)s
// anywhere, a listening or unconnected one accepts or connects, and even
// a connected TCP stream is taken off its peer with connect(AF_UNSPEC)
// and connected anew -- around --net none, the proxy's allow list and
// --no-local-tcp (bash's `< /dev/udp/HOST/PORT` or `/dev/tcp`, an inetd
// or socket-activated service's, a Go caller's net.Conn). Only Unix
// sockets pass (ssh's and journald's stdio): their paths resolve in the
// sandbox's mount tree, their abstract names under Landlock's scope; any
// other family (netlink, packet: the host's network configuration, its
// frames) is refused too. A pipe carries the same bytes (socat).
func checkStdioSocket(fd int) error {
	domain, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return fmt.Errorf("is a socket that cannot be checked: %w", err)
	}
	if domain != unix.AF_UNIX {
		return fmt.Errorf("is a host network socket (family %d): the sandbox could reach any address of the host's network through it, around --net; relay it through a pipe", domain)
	}
	return nil
}

// checkOwnStdio refuses a run whose stdin, stdout or stderr (init's, so
// the agent's) fails checkStdioKind: `jail -- agent < ~` would hand the
// agent the real home, .ssh included. Terminals are not refused: a run
// relays them or hands stdin on read-only (stdin_linux.go).
func checkOwnStdio() error {
	for i, f := range []*os.File{os.Stdin, os.Stdout, os.Stderr} {
		if err := checkStdioKind(f); err != nil {
			return fmt.Errorf("%s %w; give a file, a pipe or a terminal", [...]string{"stdin", "stdout", "stderr"}[i], err)
		}
	}
	return nil
}

// handleExec runs one jail exec request to its end.
func (r *runner) handleExec(c *session.Conn, req session.Request, files []*os.File, who *audit.Requester) {
	fail := func(code int, format string, a ...any) {
		closeAll(files)
		// The client prints the line as it comes: its option references
		// are spelled here, as its reader types them (--env).
		_ = c.Send(session.Reply{Error: Spell(fmt.Sprintf(format, a...)), ExitCode: code})
	}
	if len(req.Argv) == 0 {
		fail(ExitSetup, "no command given")
		return
	}
	if !req.Tty && len(files) != 3 {
		fail(ExitSetup, "exec needs the command's stdin, stdout and stderr (%d fds came)", len(files))
		return
	}
	if req.Tty && len(files) != 0 {
		fail(ExitSetup, "exec -t takes no fds: the command's terminal is the sandbox's")
		return
	}
	if err := checkStdio(files); err != nil {
		fail(ExitSetup, "refused: %v", err)
		return
	}
	// Wait until the sandbox is ready (an exec right after run -d).
	select {
	case <-r.startedCh:
	case <-r.sb.Done():
		fail(ExitSetup, "the sandbox has ended")
		return
	case <-time.After(30 * time.Second):
		fail(ExitSetup, "the sandbox did not start")
		return
	}
	es := &ns.ExecSpec{Cwd: r.plan.Cwd, Tty: req.Tty}
	for _, a := range req.Argv {
		es.Argv = append(es.Argv, string(a))
	}
	env := append([]string(nil), r.spec.Env...)
	for _, kv := range req.Env {
		s := string(kv)
		name, _, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			fail(ExitSetup, "`env` %q: give NAME=VALUE", s)
			return
		}
		env = setEnv(env, name, s)
	}
	es.Env = env
	if req.Dir != "" {
		if filepath.IsAbs(req.Dir) {
			es.Cwd = filepath.Clean(req.Dir)
		} else {
			es.Cwd = filepath.Join(r.plan.Cwd, req.Dir)
		}
	}
	if r.guard != nil {
		if rule := r.guard.Check(es.Argv, es.Cwd); rule != "" {
			fail(ExitNotExec, "blocked command: %s (guard rail %s)", strings.Join(es.Argv, " "), rule)
			return
		}
	}
	id, ch, err := r.ex.add()
	if err != nil {
		fail(ExitSetup, "%v", err)
		return
	}
	defer r.ex.remove(id)
	defer r.ex.endSub(id)
	// last is the client's last reply: the command is off the running
	// count first, so an Inspect (jail ps) the client makes once told the
	// command ended does not count it.
	last := func(rep session.Reply) {
		r.ex.remove(id)
		_ = c.Send(rep)
	}
	es.ID = id
	r.record(audit.Notice{Kind: "session", Severity: "info",
		Text: fmt.Sprintf("exec %d requested by pid %d, uid %d: %s", id, who.PID, who.UID, r.redact.str(strings.Join(es.Argv, " ")))})
	// Where kcmp cannot tell init's fork child (kcmpRefused), init
	// reports it.
	es.ReportChild = kcmpRefused(r.sb.Pid)
	r.ex.startMu.Lock()
	r.ex.mu.Lock()
	r.ex.setPending(es)
	r.ex.mu.Unlock()
	// The wait for init's answer is bounded: init serves the starts one
	// at a time, and one that never answers (init stopped, starved, or
	// hung by the agent: review15a's prlimit on init) held every later
	// jail exec of the sandbox forever. init refuses the request once
	// past the deadline, so a command the client was told did not start
	// does not start later.
	es.Deadline = ns.MonotonicNS() + int64(execStartWait)
	deadline := time.Now().Add(execStartWait)
	// The client's requests are read from now on, the start's wait
	// included: a client that goes away (or asks anything) before it is
	// told the command started has given the start up (jail exec got a
	// signal, the Go API's context ended). Its exec is refused, or it is
	// killed if it runs, so a command the client was never told of does
	// not run on unseen.
	reqs := make(chan session.Request)
	gone := make(chan struct{})
	handled := make(chan struct{})
	defer close(handled)
	go func() {
		defer close(gone)
		for {
			var q session.Request
			fs, err := c.Recv(&q)
			closeAll(fs)
			if err != nil {
				return
			}
			select {
			case reqs <- q:
			case <-handled:
				return
			}
		}
	}()
	err = r.sb.Conn.Send(ns.Message{Type: ns.MsgExec, Exec: es}, files...)
	closeAll(files)
	w := execWaiter{ch: ch, cancel: reqs, gone: gone}
	var sm execMsg
	var ok, late, cancelled, acked bool
	if err == nil {
		sm, ok, late = w.startedWithin(execStartWait)
		cancelled = w.cancelled
	}
	if cancelled {
		// init's answer is still awaited (within the deadline), the
		// starts' lock held: were pending cleared now, the exec of the
		// child init forks for this request could be taken for the next
		// start's, and that one's refused.
		r.ex.mu.Lock()
		refused := r.ex.pending == es
		if refused {
			r.ex.refusing = true
		}
		r.ex.mu.Unlock()
		if refused {
			// The client waits for this before its Start returns: from
			// here on the command's exec is refused (with the exec
			// audit), so a command whose start was given up does not
			// run for a moment because init was let go at once.
			acked = true
			_ = c.Send(session.Reply{Event: session.EventGivenUp})
		}
		w.cancel, w.gone = nil, nil
		sm, ok, late = w.startedWithin(time.Until(deadline))
	}
	r.ex.mu.Lock()
	// taken: the command's first exec was seen and answered (it runs).
	// Not taken, pending is cleared under the same lock the exec answer
	// takes: a start init makes from here on is refused at its exec
	// (takePending), so the client's "did not start" stays true.
	taken := r.ex.pending != es
	hostPid, hostStart := r.ex.taken, r.ex.takenStart
	r.ex.setPending(nil)
	r.ex.mu.Unlock()
	if late && taken && err == nil && !cancelled {
		// Its exec was allowed: init's answer follows at once unless init
		// is stuck right after it. Wait for that rather than tell the
		// client a running command did not start.
		sm, ok, late = w.startedWithin(execStartWait)
		cancelled = w.cancelled
	}
	started := sm.m
	r.ex.startMu.Unlock()
	if cancelled && !late && (!ok || started.Error != "") {
		r.record(audit.Notice{Kind: "session", Severity: "info", Text: fmt.Sprintf("exec %d: given up by its client before its start was answered: not run", id)})
		return
	}
	if late || cancelled {
		// Should init still start it (it read the request just before the
		// deadline), its exec is refused (takePending). Where that cannot
		// be told (no kcmp, no exec audit), or init stuck after an exec we
		// allowed, the client is told it did not start, so nothing of it
		// may stay: not its process group only (kill -pgid), which setsid
		// leaves, but every process found to come from it (proctree).
		// init's kill follows the request on the same ordered socket;
		// where its exec was seen (hostPid) the supervisor kills too,
		// without waiting for init, which may be the one stuck.
		_ = r.sb.Conn.Send(ns.Message{Type: ns.MsgSignal, ID: id, Signal: int(syscall.SIGKILL), Group: true})
		if sub := r.ex.subOf(id); sub != nil {
			// Its cgroup holds all it started, whatever session or parent
			// they have now.
			if err := sub.Kill(); err != nil {
				r.record(audit.Notice{Kind: "session", Severity: "warning", Text: fmt.Sprintf("exec %d: %v", id, err)})
			}
		} else if taken && hostPid > 0 {
			never := map[int]bool{os.Getpid(): true, r.sb.Pid: true}
			proctree.Kill("/proc", hostPid, hostStart, never, func(pid int, sig syscall.Signal) error { return unix.Kill(pid, sig) })
		}
		if cancelled {
			if !acked {
				_ = c.Send(session.Reply{Event: session.EventGivenUp}) // its kill is sent
			}
			what := "not run (init did not answer within the deadline)"
			if taken || !late {
				what = "killed" // it ran: no exec audit, or its exec came first
			}
			r.record(audit.Notice{Kind: "session", Severity: "info", Text: fmt.Sprintf("exec %d: given up by its client before its start was answered: %s", id, what)})
			return
		}
		ref := r.pol.Name
		if ref == "" {
			ref = r.id
		}
		msg := fmt.Sprintf("the sandbox's init did not start the command within %s (stopped, starved or stuck); `jail kill %s` ends the sandbox", execStartWait, ref)
		r.record(audit.Notice{Kind: "session", Severity: "warning", Text: fmt.Sprintf("exec %d: %s", id, msg)})
		last(session.Reply{Error: msg, ExitCode: ExitSetup})
		return
	}
	if err != nil || !ok {
		last(session.Reply{Error: "the sandbox has ended", ExitCode: ExitSetup})
		return
	}
	if started.Error != "" {
		code := started.ExitCode
		if code == 0 {
			code = ExitSetup
		}
		msg := started.Error
		if code == ExitNotFound {
			// What the host has, and how to run it (a new sandbox): the
			// client prints the line as it comes, so it is spelled here.
			if line := notFoundLine(msg, es.Argv[0], lookupEnv(es.Env, "PATH"), es.Cwd, r.plan.Home, true); line != "" {
				msg = Spell(line)
			}
		}
		last(session.Reply{Error: msg, ExitCode: code})
		return
	}
	rep := session.Reply{OK: true, Event: session.EventStarted, Pid: started.Pid}
	if sm.master != nil {
		_ = c.Send(rep, sm.master)
		sm.master.Close() // the client relays it; the supervisor keeps no copy
	} else {
		_ = c.Send(rep)
	}
	// jail's urgent lines (a mask the host took away) to a client that
	// shows them: the command's output is on the user's terminal, often
	// a full-screen one the Sink's stderr line would not reach (termmend).
	var sendMu sync.Mutex
	endNotices := func() {}
	if req.Notices {
		// The command's arguments that name a file the sandbox hides
		// (`jail exec dev -- cat ~/notes.txt`, `... cat .env`): said to
		// its client, as a run's are at start.
		var first []string
		if req.Timely {
			for _, n := range execArgNotes(es.Argv, es.Cwd, r.plan) {
				first = append(first, notice.Line(Spell(n)))
			}
		}
		endNotices = r.noticeExec(c, &sendMu, hostPid, req.Timely && taken, first)
	}
	// The command's own stops, carried out by a client that offered to
	// (selfstop_linux.go): a command on a pty leads its session, and the
	// kernel discards its SIGTSTP. hostPid is its first exec's, seen by
	// the exec audit, whose filter holds the stop (none without it).
	var stop *selfStop
	if req.Tty && req.Suspends && taken && hostPid > 0 {
		stop = &selfStop{id: id, onAsk: r.selfStopRecord(id), ask: func() bool {
			sendMu.Lock()
			defer sendMu.Unlock()
			return c.Send(session.Reply{OK: true, Event: session.EventSuspend}) == nil
		}, cont: func() {
			_ = r.sb.Conn.Send(ns.Message{Type: ns.MsgSignal, ID: id, Signal: int(syscall.SIGCONT)})
		}}
		r.stops.add(hostPid, stop)
		defer r.stops.remove(hostPid)
	}
	// The client's requests while the command runs: signals. When the
	// client goes away (killed, its terminal closed), the command gets
	// SIGHUP, as a shell's job does when its terminal hangs up, and then
	// SIGCONT, as the kernel sends an orphaned stopped job: one stopped
	// with jail exec (Ctrl-Z) and the client killed meanwhile stayed
	// stopped in the sandbox for good, its SIGHUP pending.
	go func() {
		for {
			var q session.Request
			select {
			case q = <-reqs:
			case <-gone:
				if stop != nil {
					stop.release()
				}
				_ = r.sb.Conn.Send(ns.Message{Type: ns.MsgSignal, ID: id, Signal: int(syscall.SIGHUP)})
				_ = r.sb.Conn.Send(ns.Message{Type: ns.MsgSignal, ID: id, Signal: int(syscall.SIGCONT)})
				return
			case <-handled:
				return
			}
			if q.Op == session.OpSuspended && stop != nil {
				stop.done(q.Declined)
				continue
			}
			if q.Op == session.OpSignal && q.Signal > 0 && q.Signal < 65 {
				if stop != nil {
					stop.signalled(q.Signal)
				}
				m := ns.Message{Type: ns.MsgSignal, ID: id, Signal: q.Signal}
				var sub *cgroup.Sub
				if q.Signal == int(syscall.SIGKILL) {
					// A kill of the command (the Go API's Cmd.Signal) is
					// of all it started, not only its process group, which
					// setsid leaves: its cgroup where it has one, else
					// init's walk of /proc (proctree, Group), as for a
					// start given up. Without a cgroup (no exec audit, or
					// none for the run) the setsid'd child ran on until
					// the run's end (review18c).
					sub = r.ex.subOf(id)
					m.Group = sub == nil
				}
				_ = r.sb.Conn.Send(m)
				if sub != nil {
					_ = sub.Kill()
				}
			}
		}
	}()
	em, ok := w.exit()
	exit := em.m
	if !ok {
		// init is gone, and every process of the sandbox with it.
		exit = ns.Message{Code: 128 + int(syscall.SIGKILL), Signal: int(syscall.SIGKILL)}
	}
	endNotices() // the exit reply comes last
	sendMu.Lock()
	last(session.Reply{OK: true, Event: session.EventExit, Code: exit.Code, Signal: exit.Signal})
	sendMu.Unlock()
}

// setEnv sets name in env to kv (NAME=VALUE), replacing an earlier one.
func setEnv(env []string, name, kv string) []string {
	out := env[:0:0]
	for _, e := range env {
		if n, _, _ := strings.Cut(e, "="); n != name {
			out = append(out, e)
		}
	}
	return append(out, kv)
}

// inspect answers jail inspect and jail ps: the policy and live facts.
func (r *runner) inspect() *session.Info {
	in := &session.Info{Name: r.pol.Name, ID: r.id, Pid: os.Getpid(), Started: r.started.Format(time.RFC3339),
		Command: r.pol.Command, Net: r.pol.Net, Log: r.logPath, Control: r.ctlPath, Cgroup: "none", Execs: r.ex.running(), Tty: r.sess.Tty}
	if in.Net == "" {
		in.Net = "none"
	}
	in.Policy, _ = json.Marshal(r.pol)
	if r.plan != nil {
		in.Workspace = r.plan.Workspace
	}
	if r.trail != nil {
		in.Audit = r.trail.Path()
	}
	if r.group != nil {
		in.Cgroup = r.group.Mode()
	}
	in.State = "starting"
	if r.agentStarted() {
		in.State = "running"
	}
	r.mu.Lock()
	if r.killedBy != "" || r.stopping {
		in.State = "stopping"
	}
	r.mu.Unlock()
	if r.sb != nil {
		in.InitPid = r.sb.Pid
		pids := append([]int{r.sb.Pid}, descendantsOf(r.sb.Pid)...)
		in.Pids = len(pids)
		for _, p := range pids {
			in.MemoryBytes += rssBytes(p)
		}
	}
	return in
}

// descendantsOf lists the host pids below root (from /proc).
func descendantsOf(root int) []int {
	all, _ := procstat.All("")
	return procstat.Descendants(all, root)
}

// rssBytes is a process's resident memory (statm's second field, in pages).
func rssBytes(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.ParseInt(f[1], 10, 64)
	return n * int64(os.Getpagesize())
}

// netMode is the network mode a policy runs with.
func netMode(p *policy.Policy) string {
	if p.Net == "" {
		return policy.NetNone
	}
	return p.Net
}

// watchLifeline kills the sandbox when its starter's end of the lifeline
// closes (the program that started it exited or closed it): a sandbox
// started by a program does not outlive it unless it was detached.
func (r *runner) watchLifeline() {
	b := make([]byte, 1)
	for {
		if _, err := r.sess.Lifeline.Read(b); err != nil {
			break
		}
	}
	call := ctlCall{op: ctlKill, reason: "the program that started the sandbox has exited", who: &audit.Requester{PID: os.Getppid(), UID: os.Getuid()}, done: make(chan struct{})}
	select {
	case r.ctlCh <- call:
	case <-r.ctx.Done():
	}
}

// validName is what a session may be called: it is a file name in the
// registry and a word on command lines.
// Compiled at first use: package init runs in every jail process (the
// regexp's {0,62} made it 852 allocations of each start).
var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`) })

// ValidName checks a session name.
func ValidName(name string) error {
	if !validName().MatchString(name) {
		return &policy.FieldError{Key: "name", Value: name, Reason: "use letters, digits, '.', '_' and '-' (at most 63, starting with a letter or digit)"}
	}
	return nil
}

// claimName makes name this supervisor's: a claim file created O_EXCL in
// the registry holds its pid and start time. A claim whose supervisor is
// gone (crashed, SIGKILLed) is stale: it is removed and claimed again.
func claimName(name string) (func(), error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	dir, err := ensureRegistry()
	if err != nil {
		return nil, err
	}
	p := filepath.Join(dir, "name."+name)
	me := fmt.Sprintf("%d %d\n", os.Getpid(), procstat.SelfStartTick())
	for try := 0; try < 3; try++ {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		if err == nil {
			_, werr := f.WriteString(me)
			f.Close()
			if werr != nil {
				os.Remove(p)
				return nil, werr
			}
			return func() {
				if b, err := os.ReadFile(p); err == nil && string(b) == me {
					os.Remove(p)
				}
			}, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("claim the name %s: %w", name, err)
		}
		if claimAlive(p) {
			return nil, &policy.FieldError{Key: "name", Value: name, Reason: "a sandbox of that name is running (jail ps); choose another name, or jail stop " + name}
		}
		os.Remove(p) // stale: its supervisor died without cleaning up
	}
	return nil, fmt.Errorf("claim the name %s: the claim keeps changing", name)
}

// claimAlive tells whether the claim file's supervisor still runs.
func claimAlive(p string) bool {
	b, err := os.ReadFile(p)
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	var pid int
	var tick uint64
	if _, err := fmt.Sscan(string(b), &pid, &tick); err != nil {
		// Being written this instant, or garbage: garbage older than a
		// second is stale.
		fi, serr := os.Stat(p)
		return serr == nil && time.Since(fi.ModTime()) < time.Second
	}
	return pid > 0 && tick != 0 && startTick(pid) == tick
}

// execWaiter takes one command's two messages from init, its start and its
// end, in that order whatever order they came in: init's exec handler sends
// the start after the fork, while its wait loop may already have reaped a
// command that ended at once and sent the end. Taken as they came, the end
// would pass for the start, and the start's empty code for the exit code.
type execWaiter struct {
	ch    chan execMsg
	early *execMsg // an end that came before the start
	// cancel and gone, where set, are the client's requests and its
	// going away: either, before the start is answered, gives the start
	// up (cancelled; startedWithin returns as at its deadline).
	cancel    <-chan session.Request
	gone      <-chan struct{}
	cancelled bool
}

// execStartWait bounds the wait for init's answer to a start (fork and
// exec, the exec audit's round trip included): milliseconds normally,
// seconds on a loaded host; past it init is not serving.
const execStartWait = 15 * time.Second

// startedWithin waits for the command's start (ok false: init is gone),
// at most d (late: none came).
func (w *execWaiter) startedWithin(d time.Duration) (m execMsg, ok, late bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		var m execMsg
		select {
		case m, ok = <-w.ch:
		case <-t.C:
			return execMsg{}, false, true
		case <-w.cancel:
			w.cancelled = true
			return execMsg{}, false, true
		case <-w.gone:
			w.cancelled = true
			return execMsg{}, false, true
		}
		if !ok {
			return execMsg{}, false, false
		}
		if m.m.Type == ns.MsgExecExit && w.early == nil {
			w.early = &m // kept for exit
			continue
		}
		return m, true, false
	}
}

// started waits for the command's start, unbounded (ok false: init is
// gone).
func (w *execWaiter) started() (execMsg, bool) {
	m, ok, _ := w.startedWithin(math.MaxInt64)
	return m, ok
}

// exit waits for the command's end (ok false: init is gone).
func (w *execWaiter) exit() (execMsg, bool) {
	if m := w.early; m != nil {
		w.early = nil
		return *m, true
	}
	m, ok := <-w.ch
	return m, ok
}
