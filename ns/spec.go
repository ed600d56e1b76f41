package ns

import "encoding/json"

// NobodyID is the host uid and gid a sandbox started by root runs as: the
// agent then has exactly the rights of `nobody` on everything but the paths
// the user made visible (which are idmapped to it).
const NobodyID = 65534

// Mount kinds of a Spec's mount plan, applied in order on top of a read-only,
// nosuid recursive clone of the host's root.
// NotFoundInside ends init's error for a command it could not find on
// the sandbox's PATH ("NAME" + NotFoundInside, exit 127); the supervisor
// recognises it to say what the host has (sandbox's notFoundLine).
const NotFoundInside = ": command not found inside the sandbox"

const (
	// KindTmpfs mounts a private, empty, size-capped tmpfs (hides what is there).
	KindTmpfs = "tmpfs"
	// KindBind binds a host path read-write at the same path.
	KindBind = "bind"
	// KindROBind binds a host path read-only at the same path.
	KindROBind = "ro-bind"
	// KindMask covers a path with an empty, mode-0, read-only file or directory:
	// reads and writes fail with EACCES. Nothing is created on the host.
	KindMask = "mask"
	// KindReadOnly re-binds an already visible path onto itself read-only (for
	// write-protected files inside writable trees).
	KindReadOnly = "read-only"
	// KindFile places Data as a read-only file at Path (e.g. /etc/resolv.conf).
	KindFile = "file"
	// KindPin binds a directory of the sandbox's own tree onto itself, so it
	// becomes a mount point: it can then be neither renamed nor removed
	// (EBUSY), which keeps masks inside it where they are. It keeps the
	// attributes (writable, idmapped) of the mount it is in.
	KindPin = "pin"
	// KindRecord makes Path a read-only directory holding one file, File,
	// that only the supervisor can write (the sandbox's record of denials):
	// init makes a private tmpfs of Size bytes, attached under its staging
	// area in the old root's tree, creates the file there and opens it for
	// appending, attaches a read-only clone of the tmpfs at Path, detaches
	// the writable staging mount with the old root, and passes the open
	// file to the supervisor (named RecordName(Path, File)). Inside,
	// the file is reachable only through the read-only bind: it cannot be
	// written, truncated, chmod'ed, removed or replaced, and Path, a mount
	// point, cannot be renamed or removed.
	KindRecord = "record"
	// KindSymlink creates a symbolic link at Path saying Link, where the
	// sandbox's view has nothing (in a private tmpfs: a link of the host's
	// in a hidden place, on the way to a path made visible). Where the view
	// already shows something at Path (the host's own link), nothing is done.
	KindSymlink = "symlink"
)

// RecordName is the name under which init passes a KindRecord's writable
// file to the supervisor.
func RecordName(dir, file string) string { return "record:" + dir + "/" + file }

// Mount is one step of the mount plan. Paths are absolute and symlink-free on
// the host, and are mounted at the same path inside.
type Mount struct {
	Kind string `json:"kind"`
	Path string `json:"path"`
	// Source, for a bind, is the host path mounted at Path when it is not
	// Path itself (a jail-owned cache directory mounted where the tool
	// expects its cache); "" means Path.
	Source string `json:"source,omitempty"`
	// NoLinks, for a bind, says its source was resolved on the host and
	// checked with no symlink on the way (a write or read path): it is
	// opened with none (RESOLVE_NO_SYMLINKS), so a link that a command
	// running in another sandbox puts on the way after the check is
	// refused, not followed.
	NoLinks bool `json:"nolinks,omitempty"`
	// Dir tells whether Path is a directory (for masks and mount points).
	Dir bool `json:"dir,omitempty"`
	// Size caps a tmpfs, in bytes; Mode is its root's permissions (0755 when 0).
	Size int64  `json:"size,omitempty"`
	Mode uint32 `json:"mode,omitempty"`
	// FD, when >= 0, is the index among the message's passed fds of a detached
	// mount (open_tree) prepared by the supervisor, used instead of Path as the
	// bind source (idmapped mounts when started by root).
	FD int `json:"fd"`
	// Data is the content of a KindFile.
	Data []byte `json:"data,omitempty"`
	// File is the name of a KindRecord's file inside Path.
	File string `json:"file,omitempty"`
	// Link is what a KindSymlink says (its target, as read on the host).
	Link string `json:"link,omitempty"`
	// Why is shown by --dry-run and in the audit trail.
	Why string `json:"why,omitempty"`
}

// Rlimit is one resource limit set in init before the agent starts.
type Rlimit struct {
	Resource int    `json:"resource"`
	Cur      uint64 `json:"cur"`
	Max      uint64 `json:"max"`
}

// UserNSLimit is one limit of the sandbox's user namespace
// (/proc/sys/user/Name, e.g. max_inotify_instances).
type UserNSLimit struct {
	Name  string `json:"name"`
	Value uint64 `json:"value"`
}

// Spec is everything init needs, sent by the supervisor as the first message.
type Spec struct {
	Mounts   []Mount `json:"mounts"`
	Hostname string  `json:"hostname"`
	// LoopbackUp brings up lo in the sandbox's new network namespace (it
	// starts down), for --net none.
	LoopbackUp bool   `json:"loopback_up,omitempty"`
	Cwd        string `json:"cwd"`
	// Argv is the agent's command; empty, init starts none and stays idle
	// until stopped, serving exec requests (jail run -d without a command).
	Argv Strings `json:"argv"`
	Env  Strings `json:"env"`
	// Pty asks init to allocate a terminal in the sandbox's devpts for the agent
	// and pass its master to the supervisor.
	Pty bool `json:"pty,omitempty"`
	// PtyFDs, with Pty, lists which of the agent's fds 0, 1 and 2 are the
	// pty; the others stay init's (the host's). Empty means all three.
	// Only with fd 0 on the pty does the agent get it as its controlling
	// terminal; otherwise the pty is an output-only terminal (the host's
	// stdin is a pipe or a file), there only so the supervisor can filter
	// what reaches the host terminal.
	PtyFDs []int `json:"pty_fds,omitempty"`
	// Trace makes init print the time of each setup step on stderr
	// (JAIL_TRACE=1 in jail's environment; for profiling startup).
	Trace bool `json:"trace,omitempty"`
	// TraceOrigin is the supervisor's trace clock origin, in CLOCK_MONOTONIC
	// nanoseconds (one clock for every process of the host): init's trace
	// lines say when each step ended on the supervisor's clock.
	TraceOrigin int64    `json:"trace_origin,omitempty"`
	Rlimits     []Rlimit `json:"rlimits,omitempty"`
	// UserNSLimits are written to /proc/sys/user/NAME of the sandbox's own
	// user namespace after the setup made its namespaces and before init
	// drops CAP_SYS_RESOURCE (per-user counters; see package ucount).
	UserNSLimits []UserNSLimit `json:"userns_limits,omitempty"`
	// AgentRlimits apply to the agent only, set by prlimit(2) on it right
	// after the fork: RLIMIT_AS and RLIMIT_NPROC would starve init's own Go
	// runtime (its threads and its reserved address space count too). The
	// supervisor also sets them from the agent's first exec notification,
	// before that exec completes, which closes the window.
	AgentRlimits []Rlimit `json:"agent_rlimits,omitempty"`
	// IgnoreSIGXFSZ makes a write past RLIMIT_FSIZE fail with EFBIG instead of
	// killing the agent.
	IgnoreSIGXFSZ bool `json:"ignore_sigxfsz,omitempty"`
	// AgentTimerSlack is the timer slack (ns) of every process init
	// starts: the supervisor's own, as jail's caller gave it. Init itself
	// runs with InitTimerSlack; the agent must not inherit that (Finish
	// sets this field).
	AgentTimerSlack int64 `json:"agent_timer_slack,omitempty"`
	// Hooks carries feature configuration (landlock, seccomp, network) that init
	// hands to the registered Hooks; opaque to this package.
	Hooks map[string][]byte `json:"hooks,omitempty"`
	// Degraded: init was started without namespaces (jail --degraded on a
	// host that refuses them). It builds no mount tree, sets no hostname,
	// drops what capabilities it has, becomes the child subreaper of
	// everything the agent starts and, at the end, kills its descendants
	// (kill(-1) would reach the user's own processes: no pid namespace).
	// Landlock and seccomp (the hooks) are the walls.
	Degraded bool `json:"degraded,omitempty"`
}

// Strings is a string list that survives JSON byte for byte: arguments and
// environment values need not be UTF-8, and encoding/json would replace every
// invalid byte with U+FFFD (the agent would run a different command).
type Strings []string

// MarshalJSON encodes each string as base64 of its bytes.
func (s Strings) MarshalJSON() ([]byte, error) {
	b := make([][]byte, len(s))
	for i, v := range s {
		b[i] = []byte(v)
	}
	return json.Marshal(b)
}

// UnmarshalJSON decodes what MarshalJSON wrote.
func (s *Strings) UnmarshalJSON(data []byte) error {
	var b [][]byte
	if err := json.Unmarshal(data, &b); err != nil {
		return err
	}
	*s = make(Strings, len(b))
	for i, v := range b {
		(*s)[i] = string(v)
	}
	return nil
}

// Message types on the socket.
const (
	MsgSpec    = "spec"    // supervisor -> init: Spec
	MsgFiles   = "files"   // init -> supervisor: named fds (pty master, listeners)
	MsgStarted = "started" // init -> supervisor: the agent's pid (init's pid ns)
	MsgExit    = "exit"    // init -> supervisor: the agent's wait status
	MsgError   = "error"   // init -> supervisor: setup failed
	MsgGo      = "go"      // supervisor -> init: fds received, start the agent
	MsgDial    = "dial"    // supervisor -> init: connect to Port inside (for --publish)
	MsgDialed  = "dialed"  // init -> supervisor: the connected socket, or Error
	// MsgNetwork: supervisor -> init, before the spec and only then: a
	// Spec holding the network hook's configuration alone
	// (Hooks[HookNetwork]). Init sets the network up on it at once, while
	// the supervisor still plans; the spec that follows must carry the
	// very same configuration (Starting.Network).
	MsgNetwork = "network"
	// MsgLog carries one of init's messages for the user (Level, Text):
	// init never writes to the terminal, which may be the agent's screen;
	// the supervisor renders it (as runc's init forwards its logs).
	MsgLog = "log"
	// MsgStopped: init -> supervisor: the agent stopped (Signal: the
	// signal that stopped it). The supervisor gives the terminal back and
	// stops itself as a shell job, or, when nothing could resume it,
	// continues the agent. With ID: that exec'd command stopped.
	MsgStopped = "stopped"
	// MsgSignal: supervisor -> init: send Signal to the agent, or with
	// Group to its process group (SIGTSTP, SIGCONT, SIGWINCH of job control).
	// With ID, to the process group of that exec'd command (any signal:
	// the user's own command); with ID, Group and SIGKILL, to the command
	// and every process found to come from it (proctree): the kill of a
	// start given up at its deadline.
	MsgSignal = "signal"
	// MsgExec: supervisor -> init: start one more command (Exec) in the
	// sandbox, as the agent was started (same thread, namespaces, walls and
	// limits). Without Exec.Tty, exactly three fds travel with it: the
	// command's stdin, stdout and stderr (never a terminal: the supervisor
	// refuses one). With Tty, none: init allocates a pty in the sandbox's
	// devpts and answers with its master.
	MsgExec = "exec"
	// MsgExecStarted: init -> supervisor: command ID runs as Pid (with
	// Tty, the pty master is the one fd); or Error and ExitCode (126, 127,
	// 125) when it could not start.
	MsgExecStarted = "exec-started"
	// MsgExecExit: init -> supervisor: command ID ended (Code, Signal).
	MsgExecExit = "exec-exit"
	// MsgExecChild: init -> supervisor: a pidfd of the process init forked
	// for command ID (Exec.ReportChild), the one fd, sent before its first
	// exec is answered.
	MsgExecChild = "exec-child"
	// MsgStop: supervisor -> init: SIGTERM to the agent and every exec'd
	// command's process group; an idle init ends once none is left.
	MsgStop = "stop"
	// MsgHold: supervisor -> init: stop every process of the sandbox that
	// is not stopped already (SIGSTOP, proctree.Hold), before the
	// supervisor stops itself as a shell job: nothing of the sandbox runs
	// while jail cannot watch it. init answers MsgHeld (Code: how many it
	// stopped).
	MsgHold = "hold"
	MsgHeld = "held"
	// MsgRelease: supervisor -> init: continue what the last MsgHold
	// stopped (after fg or bg, before the agent is continued).
	MsgRelease = "release"
)

// ExecSpec is one more command to start in a running sandbox (jail exec).
type ExecSpec struct {
	ID   int     `json:"id"`
	Argv Strings `json:"argv"`
	Env  Strings `json:"env"`
	Cwd  string  `json:"cwd"`
	// Tty gives the command a pty of the sandbox's own devpts as its
	// controlling terminal and stdio (a session of its own).
	Tty bool `json:"tty,omitempty"`
	// Deadline (CLOCK_MONOTONIC ns; 0: none) is when the supervisor stops
	// waiting for the start: init refuses a request it reads later, so a
	// command whose client was told it did not start never runs.
	Deadline int64 `json:"deadline,omitempty"`
	// ReportChild asks init for a pidfd of the process it forks for the
	// command (MsgExecChild) while that process's first exec waits for the
	// supervisor's answer: where the supervisor cannot compare memory with
	// init (kcmp refused), it is the only word on which process is the
	// command.
	ReportChild bool `json:"report_child,omitempty"`
}

// Levels of a MsgLog.
const (
	LogTrace   = "trace"   // JAIL_TRACE=1 timings
	LogWarning = "warning" // shown unless --quiet
	LogError   = "error"   // always shown
)

// Message is the envelope of every message on the socket.
type Message struct {
	Type  string   `json:"type"`
	Spec  *Spec    `json:"spec,omitempty"`
	Names []string `json:"names,omitempty"` // one per passed fd, for MsgFiles
	Pid   int      `json:"pid,omitempty"`
	Port  int      `json:"port,omitempty"`
	// Exit status of the agent: Code, or Signal when killed by one.
	Code   int    `json:"code,omitempty"`
	Signal int    `json:"signal,omitempty"`
	Error  string `json:"error,omitempty"`
	// ExitCode is the exit code jail should use for an error (125, 126, 127).
	ExitCode int               `json:"exit_code,omitempty"`
	Info     map[string]string `json:"info,omitempty"`
	// Group sends a MsgSignal to the agent's process group.
	Group bool `json:"group,omitempty"`
	// ID names an exec'd command (MsgExec*, MsgSignal); Exec is MsgExec's.
	ID   int       `json:"id,omitempty"`
	Exec *ExecSpec `json:"exec,omitempty"`
	// Level and Text of a MsgLog.
	Level string `json:"level,omitempty"`
	Text  string `json:"text,omitempty"`
	// Path is the agent's program as init resolved it in the sandbox
	// (MsgFiles): what its first execve runs, which the supervisor's
	// exec answer records without reading the process (seccomp.ServeFirst).
	Path string `json:"path,omitempty"`
}

// BindSource is the host path a bind mounts: Source, or Path itself.
func (m Mount) BindSource() string {
	if m.Source != "" {
		return m.Source
	}
	return m.Path
}
