package audit

import "time"

// SchemaVersion is the version of the trail format; it is written as
// "schema" in the start event. Readers accept this version and older ones.
const SchemaVersion = 1

// Event types, in the order a human summary lists them.
const (
	TypeStart   = "start"
	TypeExec    = "exec"
	TypeDNS     = "dns"
	TypeNet     = "net"
	TypeDeny    = "deny"
	TypeLimit   = "limit"
	TypeSignal  = "signal"
	TypeKill    = "kill"
	TypeTimeout = "timeout"
	TypeExit    = "exit"
	TypeDropped = "dropped"
	// TypeQuarantine: something the agent left in a writable tree was moved
	// out of it (schema 1 readers that predate it list it as unknown).
	TypeQuarantine = "quarantine"
	// TypeUnmasked: the host deleted or renamed over a path the sandbox
	// had a mount on (a mask, a read-only bind, a pin) while it ran, and
	// the kernel took that mount away (schema 1 readers that predate it
	// list it as unknown).
	TypeUnmasked = "unmasked"
	TypeNotice   = "notice"
	// TypeAgent: a request the sandbox's ssh made of the user's ssh agent
	// through jail's relay (--ssh-agent): a signature, the list of keys,
	// or a refused change to the agent (schema 1 readers that predate it
	// list it as unknown).
	TypeAgent = "agent"
)

// Types lists every event type of SchemaVersion in summary order.
var Types = []string{TypeStart, TypeExec, TypeDNS, TypeNet, TypeAgent, TypeDeny, TypeQuarantine, TypeUnmasked, TypeLimit,
	TypeSignal, TypeKill, TypeTimeout, TypeExit, TypeDropped, TypeNotice}

// Decisions used in exec, dns and net events.
const (
	DecisionAllow = "allow"
	DecisionDeny  = "deny"
)

// Event is implemented by every typed event struct; Writer.Record uses it.
type Event interface {
	EventType() string
}

// Millis converts a duration to the float milliseconds used by *_ms fields.
func Millis(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// Start is the first event of every trail.
type Start struct {
	Schema  int      `json:"schema"`          // SchemaVersion
	Version string   `json:"version"`         // jail version
	ID      string   `json:"id"`              // sandbox id (also in the file name)
	Argv    []string `json:"argv"`            // jail's own argv
	Command []string `json:"command"`         // the agent command line
	Cwd     string   `json:"cwd"`             // working directory (the writable workspace)
	UID     int      `json:"uid"`             // invoking uid on the host
	GID     int      `json:"gid"`             // invoking gid on the host
	PID     int      `json:"pid"`             // supervisor pid on the host
	Root    bool     `json:"root"`            // started by root (agent runs as host nobody)
	Policy  any      `json:"policy"`          // the effective, validated policy
	Kernel  Kernel   `json:"kernel"`          // what the kernel offered and what is in force
	Notes   []string `json:"notes,omitempty"` // degraded modes, one sentence each
}

// EventType implements Event.
func (Start) EventType() string { return TypeStart }

// Kernel records kernel facts and the enforcement modes in force.
type Kernel struct {
	Release       string `json:"release"`        // uname -r
	LandlockABI   int    `json:"landlock_abi"`   // 0 = Landlock unavailable
	Seccomp       bool   `json:"seccomp"`        // seccomp filter installed
	SeccompNotify bool   `json:"seccomp_notify"` // exec auditing via SECCOMP_RET_USER_NOTIF
	CgroupMode    string `json:"cgroup_mode"`    // "v2", "v1" or "none" (rlimits only)
	NetworkMode   string `json:"network_mode"`   // "none", "allow" (transparent) or "proxy" (proxy-aware only)
}

// Exec is one execve/execveat seen by the seccomp notify loop.
type Exec struct {
	PID      int      `json:"pid"`              // pid inside the sandbox
	Path     string   `json:"path"`             // the path passed to execve
	Argv     []string `json:"argv"`             //
	Cwd      string   `json:"cwd,omitempty"`    //
	Decision string   `json:"decision"`         // DecisionAllow or DecisionDeny
	Rule     string   `json:"rule,omitempty"`   // guard-rail pattern that denied it
	Reason   string   `json:"reason,omitempty"` //
	// Missing: the path did not exist in the sandbox when the exec was
	// asked for, so the kernel failed it (ENOENT): an attempt, typically
	// one step of a PATH search, not an execution.
	Missing bool `json:"missing,omitempty"`
	// Set only when Argv was stored cut (see BoundArgv): the whole argv's
	// argument count, size (NUL-terminated arguments) and SHA-256.
	Argc       int    `json:"argc,omitempty"`
	ArgvBytes  int64  `json:"argv_bytes,omitempty"`
	ArgvSHA256 string `json:"argv_sha256,omitempty"`
}

// EventType implements Event.
func (Exec) EventType() string { return TypeExec }

// Bound cuts e.Argv to the stored bounds and fills the digest fields when it
// had to (see BoundArgv).
func (e *Exec) Bound() {
	argv, d := BoundArgv(e.Argv)
	e.Argv = argv
	if d != nil {
		e.Argc, e.ArgvBytes, e.ArgvSHA256 = d.Argc, d.Bytes, d.SHA256
	}
}

// DNS is one query answered by the sandbox's DNS server.
type DNS struct {
	Name     string   `json:"name"`              // queried name, lowercase, no trailing dot
	QType    string   `json:"qtype"`             // "A", "AAAA", ...
	Decision string   `json:"decision"`          // DecisionAllow (fake address given) or DecisionDeny (NXDOMAIN)
	Answers  []string `json:"answers,omitempty"` // fake addresses handed out
	Reason   string   `json:"reason,omitempty"`  //
}

// EventType implements Event.
func (DNS) EventType() string { return TypeDNS }

// Net is one outbound flow, written when it is refused or when it ends.
type Net struct {
	Decision   string  `json:"decision"`           // DecisionAllow or DecisionDeny
	Proto      string  `json:"proto"`              // "tcp" or "udp"
	Name       string  `json:"name,omitempty"`     // allowlisted name behind a fake IP
	Address    string  `json:"address"`            // destination address as the sandbox saw it
	Remote     string  `json:"remote,omitempty"`   // address actually dialed from the host
	Port       int     `json:"port"`               //
	BytesUp    int64   `json:"bytes_up"`           // sandbox -> remote
	BytesDown  int64   `json:"bytes_down"`         // remote -> sandbox
	DurationMS float64 `json:"duration_ms"`        // see Millis
	Reason     string  `json:"reason,omitempty"`   // why denied, or why the flow ended abnormally
	Requests   int     `json:"requests,omitempty"` // HTTP/1 requests checked and forwarded on a plaintext flow
	Via        string  `json:"via,omitempty"`      // the host's upstream proxy the flow was chained through (scheme://host:port)
	// Failed: the flow was allowed but the connection upstream could not
	// be made (the host could not resolve the name, or the dial failed;
	// reason says which). The sandbox's connection was reset.
	Failed bool `json:"failed,omitempty"`
}

// EventType implements Event.
func (Net) EventType() string { return TypeNet }

// Deny is anything else refused that jail can see (syscall, path, ioctl...).
type Deny struct {
	Layer  string `json:"layer"`            // "seccomp", "landlock", "mount", "proxy", "guard-rail", "policy", "terminal"
	What   string `json:"what"`             // "syscall", "path", "ioctl", "socket", ...
	Target string `json:"target,omitempty"` // syscall name, path, request...
	PID    int    `json:"pid,omitempty"`    //
	Reason string `json:"reason,omitempty"` //
}

// EventType implements Event.
func (Deny) EventType() string { return TypeDeny }

// Limit is a resource limit that was hit.
type Limit struct {
	Kind   string `json:"kind"`             // "oom", "pids", "memory", "cpu", "fsize", "nofile"
	Source string `json:"source"`           // "cgroup-v2", "cgroup-v1", "rlimit" or "watch" (sampled by the supervisor)
	Limit  int64  `json:"limit,omitempty"`  // configured limit (bytes, count...)
	Value  int64  `json:"value,omitempty"`  // usage or event counter when observed
	PID    int    `json:"pid,omitempty"`    // victim, when known
	Action string `json:"action,omitempty"` // "killed", "refused", "throttled"
}

// EventType implements Event.
func (Limit) EventType() string { return TypeLimit }

// Signal is a signal received by the supervisor or forwarded to the sandbox.
type Signal struct {
	Signal    string     `json:"signal"`              // "SIGINT", ...
	Number    int        `json:"number"`              //
	From      string     `json:"from"`                // "user", "terminal", "supervisor", "sandbox"
	To        string     `json:"to,omitempty"`        // "agent", "init", "supervisor"
	Forwarded bool       `json:"forwarded"`           // passed on into the sandbox
	Requester *Requester `json:"requester,omitempty"` // who asked, for jail kill (without --now)
}

// EventType implements Event.
func (Signal) EventType() string { return TypeSignal }

// Kill records the kill switch firing.
type Kill struct {
	By        string     `json:"by"`                  // "user" (jail kill, the kill key), "timeout", "supervisor", "oom"
	Reason    string     `json:"reason"`              //
	Method    string     `json:"method"`              // "cgroup.kill", "freezer", "pid1"
	Signal    string     `json:"signal,omitempty"`    //
	Processes int        `json:"processes,omitempty"` // processes killed, when known
	Requester *Requester `json:"requester,omitempty"` // who asked, for jail kill
}

// Requester is the process that asked for a kill or stop through jail's
// control socket, as the kernel reports it (SO_PEERCRED).
type Requester struct {
	PID int `json:"pid"` // in the host's pid namespace
	UID int `json:"uid"` // host uid
}

// EventType implements Event.
func (Kill) EventType() string { return TypeKill }

// Timeout records the wall-clock timeout firing.
type Timeout struct {
	LimitMS float64 `json:"limit_ms"` // configured timeout
	WallMS  float64 `json:"wall_ms"`  // elapsed when it fired
}

// EventType implements Event.
func (Timeout) EventType() string { return TypeTimeout }

// Exit is the last event of a complete trail.
type Exit struct {
	Code            int     `json:"code"`              // jail's exit code (the agent's, 128+N, 124, 125...)
	Signal          string  `json:"signal,omitempty"`  // signal that killed the agent
	Reason          string  `json:"reason"`            // "exited", "signaled", "timeout", "killed", "oom", "setup_failed"
	WallMS          float64 `json:"wall_ms"`           //
	CPUUserMS       float64 `json:"cpu_user_ms"`       //
	CPUSysMS        float64 `json:"cpu_sys_ms"`        //
	PeakMemoryBytes int64   `json:"peak_memory_bytes"` // 0 when unknown
	Error           string  `json:"error,omitempty"`   // setup failure, for setup_failed
	// TrailDropped is the number of this run's events not written to the
	// file (size budget reached, queue overflow), all counted by type in
	// dropped events; the writer fills it in.
	TrailDropped uint64 `json:"trail_dropped,omitempty"`
}

// EventType implements Event.
func (Exit) EventType() string { return TypeExit }

// Dropped records events lost because the writer (or a sink) fell behind.
type Dropped struct {
	Count uint64            `json:"count"`           // events lost since the previous dropped event
	Types map[string]uint64 `json:"types,omitempty"` // count per event type
	Sink  string            `json:"sink,omitempty"`  // set when a sink (e.g. "syslog"), not the file, lost them
	// Reason is "budget" when the trail reached its size budget: events are
	// then counted, not written ("" = the queue was full or a write failed).
	Reason string `json:"reason,omitempty"`
	// Budget is the trail's size budget in bytes, with reason "budget".
	Budget int64 `json:"budget,omitempty"`
	// Keys, with reason "budget", counts the most repeated of the refused
	// denials by what they refused ("deny LAYER/WHAT TARGET", "quarantine
	// RULE PATH", "net deny HOST:PORT", "dns deny NAME", "exec deny PATH";
	// at most MaxDroppedKeys of them).
	Keys map[string]uint64 `json:"keys,omitempty"`
	// Others, with reason "budget", says per kind ("deny LAYER/WHAT",
	// "quarantine RULE", "net deny", ...) the refused denials Keys does
	// not name: how many keys, how many events.
	Others map[string]OtherKeys `json:"others,omitempty"`
}

// OtherKeys counts, for one kind, the refused denials a dropped event's
// Keys does not name.
type OtherKeys struct {
	Keys   uint64 `json:"keys"`   // distinct keys among them (a floor when Uncounted is set)
	Events uint64 `json:"events"` // the events
	// Uncounted of Events had a key the writer had no room to count
	// (past 1,024 keys between two dropped events): their keys are not in
	// Keys, which is then at least, not exactly, the number of keys.
	Uncounted uint64 `json:"uncounted,omitempty"`
}

// EventType implements Event.
func (Dropped) EventType() string { return TypeDropped }

// Quarantine is an entry the agent left in a writable tree that the user's
// own tools would load or run later (a git control file, a .git file, a
// protected path that did not exist at start): moved out of the tree into
// the quarantine directory, replaced by a harmless version, or reported.
type Quarantine struct {
	Phase  string `json:"phase"`            // "run" (the moment it appeared), "exit", "leftover" (a killed run's, found at the next start)
	Path   string `json:"path"`             // where it was
	Rule   string `json:"rule"`             // which protection
	Reason string `json:"reason"`           // what it would have done
	Action string `json:"action"`           // "moved", "replaced", "renamed" (left in the tree under a neutral name), "reported", "failed"
	Stored string `json:"stored,omitempty"` // where it is now, in the quarantine directory
	Left   string `json:"left,omitempty"`   // its neutral name in the tree, for "renamed"
	Run    string `json:"run,omitempty"`    // the id of the run that left it, for "leftover"
	Error  string `json:"error,omitempty"`  //
}

// EventType implements Event.
func (Quarantine) EventType() string { return TypeQuarantine }

// Unmasked is a path whose mount in the sandbox the host took away while
// it ran (package maskwatch): from then on the sandbox sees what the host
// put at the path (a mask's secret is readable, a read-only file
// writable) until the run ends.
type Unmasked struct {
	Path   string `json:"path"`   // the host path
	Kind   string `json:"kind"`   // the mount it had: "mask", "read-only", "pin"
	Rule   string `json:"rule"`   // why it had it
	How    string `json:"how"`    // "deleted", "renamed away", "renamed over", "created", "replaced"
	Action string `json:"action"` // "reported" (the run goes on; the mount is not made again: nothing in the sandbox can mount any more), "ended" (--end-if-unmasked)
}

// EventType implements Event.
func (Unmasked) EventType() string { return TypeUnmasked }

// Agent is one request of the sandbox's ssh to the user's ssh agent
// (package sshagent): allowed ones were relayed to the agent, denied ones
// answered with a failure without reaching it.
type Agent struct {
	Request  string `json:"request"`       // "SIGN_REQUEST", "REQUEST_IDENTITIES", "ADD_IDENTITY", "LOCK", "EXTENSION NAME", ...
	Key      string `json:"key,omitempty"` // SIGN_REQUEST: the key's fingerprint (SHA256:..., as ssh-keygen -l prints it)
	Decision string `json:"decision"`      // "allow" or "deny"
}

// EventType implements Event.
func (Agent) EventType() string { return TypeAgent }

// Notice is a message jail gave the user (on stderr, or in the summary
// after a relayed terminal was restored), recorded when it first appears:
// later notices that are the same thing are counted, not recorded again.
type Notice struct {
	Kind     string `json:"kind"`     // "net", "exec", "fs", "limit", "terminal", "setup", "init", "job", "jail", "session"
	Severity string `json:"severity"` // "info", "warning", "error"
	Text     string `json:"text"`     // the line as shown, without "jail: "
}

// EventType implements Event.
func (Notice) EventType() string { return TypeNotice }
