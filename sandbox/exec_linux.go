package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/cachehint"
	"github.com/jail-sandbox/jail/procstat"
	"github.com/jail-sandbox/jail/seccomp"
)

// This file: the exec notifications: record, guard, answer.

// firstExec tells the exec the listener's first notification makes
// (seccomp.ServeFirst): the agent's own, path being the program init
// resolved for it in the sandbox (ns.Message.Path), argv and cwd those of
// the spec. nil for an init with no agent (its first exec is a jail exec
// command's) or no path; and its answer is nil once the agent has started:
// exec'd commands are sent to init only then (session_linux.go waits for
// startedCh), and the agent's own first notification always comes before
// (init reports the start only once its execve was answered, or its child
// died before it: then the next notification is a command's).
func (r *runner) firstExec(path string) func() *seccomp.ExecEvent {
	if r.spec == nil || len(r.spec.Argv) == 0 || path == "" {
		return nil
	}
	cwd := r.spec.Cwd
	if !filepath.IsAbs(path) && cwd != "" {
		path = filepath.Join(cwd, path) // as an answer makes a relative path absolute
	}
	ev := &seccomp.ExecEvent{Path: path, Argv: r.spec.Argv, Cwd: cwd}
	return func() *seccomp.ExecEvent {
		if r.agentStarted() {
			return nil
		}
		return ev
	}
}

// serveExecs answers the sandbox's exec notifications: record, guard, go.
// first, when known, is the agent's own exec (firstExec).
func (r *runner) serveExecs(l *os.File, first func() *seccomp.ExecEvent) {
	r.execsSeen.Store(true)
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		_ = seccomp.ServeWith(r.ctx, l, seccomp.Handlers{Guard: r.guard, First: first, OnSignal: r.onSignal, OnListen: r.onListen, OnExec: func(evp *seccomp.ExecEvent) {
			ev := *evp
			if cachehint.IsGoCompile(ev.Path) {
				r.goCompiles.Add(1) // one package its build cache lacked (sayCacheHints)
			}
			r.sawExec(ev.Path, ev.Argv)
			r.sayCannotWork(ev.Pid, ev.Path, ev.Argv)
			r.mu.Lock()
			started := r.agentPid != 0 || r.agentStarted()
			r.mu.Unlock()
			refused := ""
			if started {
				es, refuse := r.takePending(ev.Pid)
				if refuse {
					// A jail exec start its client was told did not
					// happen (given up at its deadline): it never runs.
					evp.Refuse = true
					refused = "a jail exec command started after its request was given up"
				}
				if es != nil {
					// An exec'd command's first execve, paused until we
					// answer: the sandbox's agent-only limits are in force
					// before it runs (as for the agent, below), and its
					// unreadable argv is the one jail asked init to run.
					for _, rl := range r.agentRlimits {
						lim := unix.Rlimit{Cur: rl.Cur, Max: rl.Max}
						_ = unix.Prlimit(ev.Pid, rl.Resource, &lim, nil)
					}
					if ev.Err != "" && len(ev.Argv) == 0 {
						ev.Path, ev.Argv, ev.Cwd, ev.Err = es.Argv[0], es.Argv, es.Cwd, ""
					}
				}
			}
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
				ev.Path, ev.Argv, ev.Cwd, ev.Err = r.pol.Command[0], r.pol.Command, r.plan.Cwd, ""
			}
			hostPid := ev.Pid
			ev.Pid = sandboxPid(ev.Pid)
			// Secret values out first, while the bytes are still raw; then
			// argv is bounded (a flood of huge failed execs must not fill
			// the host's disk), its digest taken over the redacted bytes
			// (a hash of a secret would let it be guessed), and only what is
			// kept is escaped. A fresh slice: ev.Argv may be the policy's.
			argv := make([]string, len(ev.Argv))
			for i, a := range ev.Argv {
				argv[i] = r.redact.str(a)
			}
			e := audit.Exec{PID: ev.Pid, Path: byteExact(r.redact.str(ev.Path)), Argv: argv, Cwd: byteExact(r.redact.str(ev.Cwd)),
				Decision: audit.DecisionAllow, Rule: ev.Rule, Reason: ev.Err, Missing: ev.Rule == "" && missingInSandbox(hostPid, ev.Path, ev.Cwd)}
			e.Bound()
			for i := range e.Argv {
				e.Argv[i] = byteExact(e.Argv[i])
			}
			if refused != "" {
				e.Decision, e.Reason = audit.DecisionDeny, refused
			}
			if ev.Rule != "" {
				e.Decision = audit.DecisionDeny
				r.deny(execDenial(e.Path, e.Argv, ev.Rule))
				// The run's, even if decided after the exit check began.
				r.recordRun(audit.Deny{Layer: "guard-rail", What: "exec", Target: e.Path, PID: ev.Pid, Reason: ev.Rule})
			}
			r.record(e)
		}})
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
// It runs while the exec waits for its answer: a pidfd's fdinfo (six short
// lines) costs about a third of /proc/PID/status (some fifty, with memory
// counters), which is read only where pidfds are missing (before 5.3).
func sandboxPid(hostPid int) int {
	if hostPid <= 0 {
		return hostPid
	}
	var buf [256]byte
	if fd, err := unix.PidfdOpen(hostPid, 0); err == nil {
		// The pidfd pins the process the notification named: it waits in
		// execve, so hostPid is still that process, not a reused pid.
		n, rerr := readSmall("/proc/self/fdinfo/"+strconv.Itoa(fd), buf[:])
		unix.Close(fd)
		if rerr == nil {
			if pid, ok := innermostNSpid(buf[:n]); ok {
				return pid
			}
		}
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(hostPid) + "/status")
	if err != nil {
		return hostPid
	}
	if pid, ok := innermostNSpid(b); ok {
		return pid
	}
	return hostPid
}

// readSmall reads a small proc file into buf with one read.
func readSmall(path string, buf []byte) (int, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	return unix.Read(fd, buf)
}

// innermostNSpid is the last pid of the "NSpid:" line of a proc status or
// pidfd fdinfo text: the pid in the innermost pid namespace.
func innermostNSpid(b []byte) (int, bool) { return innermostNS(b, "NSpid") }

// innermostNS is the last number of a /proc/PID/status NS line (NSpid,
// NStgid, NSpgid: the id in each pid namespace, outermost first).
func innermostNS(b []byte, key string) (int, bool) {
	v, _ := procstat.StatusField(b, key)
	f := bytes.Fields(v)
	if len(f) == 0 {
		return 0, false
	}
	pid, err := strconv.Atoi(string(f[len(f)-1]))
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

// missingInSandbox tells whether path (relative ones against cwd) does not
// exist as the process hostPid sees its file system, while that process
// waits in execve: the kernel will then fail the exec with ENOENT, a PATH
// search's miss rather than a command. Resolved in the process's own root
// (RESOLVE_IN_ROOT: its absolute symlinks stay inside it). Any other
// outcome, an unreadable root included, counts as present.
func missingInSandbox(hostPid int, path, cwd string) bool {
	if path == "" {
		return false
	}
	if path[0] != '/' {
		if cwd == "" {
			return false
		}
		path = cwd + "/" + path
	}
	root, err := unix.Open(fmt.Sprintf("/proc/%d/root", hostPid), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(root)
	fd, err := unix.Openat2(root, path, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT})
	if err == nil {
		unix.Close(fd)
		return false
	}
	return err == unix.ENOENT || err == unix.ENOTDIR
}

// warmExecAnswer runs, off the start's path (the spare goroutine, while
// init builds the sandbox), the steps of an exec answer that are slow
// only the first time in a process: the code of the reads (seccomp.Warm),
// the pid translation and the missing-command check (over this process's
// own /proc entries), the guard, the redaction, and encoding/json's
// encoder of the exec event where it is not generated (built by
// reflection once per process: the larger part of the agent's first
// answer, which its first instruction waits for). It reads only this
// process and records nothing.
func (r *runner) warmExecAnswer() {
	seccomp.Warm()
	self := os.Getpid()
	_ = sandboxPid(self)
	_ = missingInSandbox(self, "/", "/")
	_ = r.guard.Check([]string{"true"}, "/")
	e := audit.Exec{PID: 1, Path: byteExact(r.redact.str("/")), Argv: []string{"true"}, Cwd: "/", Decision: audit.DecisionAllow}
	e.Bound()
	audit.WarmEvents()
}
