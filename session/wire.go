package session

import "encoding/json"

// Operations.
const (
	OpKill    = "kill"    // kill everything now (Reason goes to the trail)
	OpStop    = "stop"    // SIGTERM to everything, SIGKILL after the grace
	OpExec    = "exec"    // start Argv in the sandbox
	OpSignal  = "signal"  // on an exec connection: Signal to the command's process group
	OpInspect = "inspect" // the sandbox's policy and live facts
	// OpAttach relays the terminal kept by jail run -d -t: on an attach
	// connection the client then sends OpInput and OpResize requests, and
	// gets EventOutput replies until EventExit or EventDetached.
	OpAttach = "attach"
	OpInput  = "input"  // on an attach connection: Data to the terminal
	OpResize = "resize" // on an attach connection: Rows and Cols
	// OpSuspended answers EventSuspend on an exec or attach connection:
	// the client stopped (with the command) and was continued, or
	// declined.
	OpSuspended = "suspended"
)

// Events of an exec connection's replies.
const (
	EventStarted  = "started"
	EventExit     = "exit"
	EventAttached = "attached" // an attach connection relays from now on
	EventOutput   = "output"   // Data is what the kept terminal printed
	// EventDetached ends an attach connection whose place another client
	// took (Error says so): a second jail attach takes over.
	EventDetached = "detached"
	// EventNotice on an attach connection, or on an exec connection whose
	// request asked (Notices), is an urgent notice of jail's (a mask the
	// host took away): Data is its line, "jail: " and the text escaped (no
	// control character), to show at once. Those said before the client
	// attached come right after EventAttached; before the command started,
	// right after EventStarted.
	EventNotice = "notice"
	// EventTimely on an exec connection whose request asked (Timely) is a
	// notice of jail's about the command that the user needs while it
	// runs (a server of its the host cannot reach): Data is its line, as
	// for EventNotice, to show where it harms nothing (a line of its own
	// on a screen of lines). Between EventStarted and EventExit.
	EventTimely = "timely"
	// EventGivenUp answers a client that gave up a start before it was
	// answered (any request, or its going away): the supervisor has it as
	// given up, its exec refused from now on, or its kill sent where it
	// had already run. The client waits for it (bounded) before telling
	// its caller the command did not start.
	EventGivenUp = "given-up"
	// EventSuspend, on an exec connection whose request offered it
	// (Suspends), says the command stopped itself (a SIGTSTP to itself or
	// its process group: vim's or an agent's suspend key), a stop the
	// kernel discards for a command that leads its pty's session. The
	// client stops the command and itself as for Ctrl-Z, continues it
	// once continued itself, and answers OpSuspended. On an attach
	// connection that offered it, the kept terminal's command has stopped
	// (a background sandbox has no shell to resume it): the client stops
	// itself as a job and answers OpSuspended once continued, and the
	// command is continued then.
	EventSuspend = "suspend"
)

// Request is one line from the client.
type Request struct {
	Op     string `json:"op"`
	Reason string `json:"reason,omitempty"`
	// Argv and Env (NAME=VALUE, added to the sandbox's environment) are
	// bytes: they need not be UTF-8 (JSON carries them as base64).
	Argv [][]byte `json:"argv,omitempty"`
	Env  [][]byte `json:"env,omitempty"`
	// Dir is where the command starts; "" is the sandbox's working directory.
	Dir string `json:"dir,omitempty"`
	// Tty asks for a pty of the sandbox's own (the master comes back with
	// the started reply); without it, three stdio fds come with the request.
	Tty    bool `json:"tty,omitempty"`
	Signal int  `json:"signal,omitempty"`
	// Notices asks, on an exec connection, for jail's urgent notices
	// (EventNotice) between EventStarted and EventExit: the client shows
	// them. A client that does not ask gets none (an older one would take
	// the first for the exit).
	Notices bool `json:"notices,omitempty"`
	// Timely asks, on an exec connection that asks Notices, for jail's
	// timely notices about the command (EventTimely). A client that does
	// not ask gets none (an older one would take the first for the exit).
	Timely bool `json:"timely,omitempty"`
	// Suspends offers, on an exec -t or attach connection, to carry out
	// the command's stops (EventSuspend). A client that does not offer
	// gets none: an exec'd command's own stop is discarded, as by the
	// kernel, and the kept terminal's command is continued at once.
	Suspends bool `json:"suspends,omitempty"`
	// Declined, with OpSuspended: the client did not stop (no shell could
	// resume it).
	Declined bool `json:"declined,omitempty"`
	// Data is an attach connection's input; Rows and Cols its window size.
	Data []byte `json:"data,omitempty"`
	Rows uint16 `json:"rows,omitempty"`
	Cols uint16 `json:"cols,omitempty"`
}

// Reply is one line from the supervisor.
type Reply struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	Event string `json:"event,omitempty"`
	Pid   int    `json:"pid,omitempty"`
	// Code is the command's exit code: its own, or 128+Signal. ExitCode,
	// with Error, is the code for a command that could not start (125,
	// 126 not executable, 127 not found).
	Code     int   `json:"code,omitempty"`
	Signal   int   `json:"signal,omitempty"`
	ExitCode int   `json:"exit_code,omitempty"`
	Info     *Info `json:"info,omitempty"`
	// Data is an attach connection's output.
	Data []byte `json:"data,omitempty"`
}

// Info is what inspect answers: the sandbox's policy and live facts.
type Info struct {
	Name      string   `json:"name,omitempty"`
	ID        string   `json:"id"`
	Pid       int      `json:"pid"`      // the supervisor
	InitPid   int      `json:"init_pid"` // the sandbox's pid 1, as the host sees it
	Started   string   `json:"started"`  // RFC 3339
	State     string   `json:"state"`    // starting, running, stopping
	Command   []string `json:"command"`  // empty: an idle sandbox
	Workspace string   `json:"workspace"`
	Net       string   `json:"net"`
	Audit     string   `json:"audit,omitempty"`
	Log       string   `json:"log,omitempty"`
	Control   string   `json:"control,omitempty"` // the control socket
	Cgroup    string   `json:"cgroup"`            // v2, v1, none
	Tty       bool     `json:"tty,omitempty"`     // a terminal is kept (jail attach)
	// Live facts.
	MemoryBytes int64 `json:"memory_bytes"` // resident memory of every process inside
	Pids        int   `json:"pids"`         // processes inside, init included
	Execs       int   `json:"execs"`        // exec'd commands running
	// Policy is the sandbox's policy as JSON (package policy's field tags).
	Policy json.RawMessage `json:"policy,omitempty"`
}
