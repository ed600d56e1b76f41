package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/jsonenc"
	"github.com/jail-sandbox/jail/procstat"
	"github.com/jail-sandbox/jail/session"
)

// Running sandboxes register themselves so that `jail ps` and `jail kill`
// can find them: one small JSON file per supervisor in jail's runtime
// directory (runtimedir_linux.go; the sandbox never sees it: the plan masks
// it wherever a visible path contains it; records are verified against
// /proc before anything is signalled).

// Entry describes one running sandbox.
type Entry struct {
	ID        string    `json:"id"`
	Pid       int       `json:"pid"`
	StartTick uint64    `json:"start_tick"` // /proc/PID/stat starttime: pid reuse check
	Started   time.Time `json:"started"`
	Command   []string  `json:"command"`
	Workspace string    `json:"workspace"`
	// Writable are the host trees the sandbox can write (its writable
	// binds): a policy file named by a flag in one of them, first named
	// after this run started, is refused (policyNamedLive).
	Writable []string `json:"writable,omitempty"`
	// Degraded: no mounts; its policy files are guarded, not read-only.
	Degraded bool   `json:"degraded,omitempty"`
	Audit    string `json:"audit,omitempty"`
	Control  string `json:"control,omitempty"` // the supervisor's control socket (jail kill)
	Name     string `json:"name,omitempty"`    // a session's name (jail run -d --name)
	Log      string `json:"log,omitempty"`     // where a detached supervisor's output goes
	Net      string `json:"net,omitempty"`
}

// startTick is pid's start time (0 when gone): with the pid it names one
// supervisor, so a reused pid is not taken for it. A zombie counts as gone:
// it runs no more, so its record, name claim or socket is stale (a
// SIGKILLed detached supervisor may wait a moment to be reaped).
func startTick(pid int) uint64 {
	s, err := procstat.Read("", pid)
	if err != nil || s.State == 'Z' || s.State == 'X' {
		return 0
	}
	return s.StartTime
}

// entryEncoder is zjson_linux.go's encoder of an Entry, nil without the
// file.
var entryEncoder func([]byte, *Entry) ([]byte, error)

// marshalEntry is json.Marshal's bytes of e, by the generated encoder when
// it is there (no reflection at a start).
func marshalEntry(e *Entry) []byte {
	b, _ := jsonenc.Marshal(entryEncoder, 512, e)
	return b
}

// register records this supervisor; the returned func removes the record.
func register(e Entry) func() {
	dir, err := ensureRegistry()
	if err != nil {
		return func() {}
	}
	e.Pid, e.StartTick = os.Getpid(), procstat.SelfStartTick()
	b := marshalEntry(&e)
	p := filepath.Join(dir, e.ID+".json")
	// Written aside, then renamed: a supervisor killed while it writes
	// leaves no empty or partial record, which no reader could judge
	// (jail gc removes a stray .tmp: removeUnreadableRecords).
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		os.Remove(tmp)
		return func() {}
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return func() {}
	}
	return func() { os.Remove(p) }
}

// readRecord reads one registry record; ok is false when it does not hold
// one (unreadable, not JSON, no pid).
func readRecord(path string) (e Entry, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &e) != nil || e.Pid <= 0 {
		return Entry{}, false
	}
	return e, true
}

// List returns the sandboxes of this user that are still running; records
// of dead supervisors are removed.
func List() ([]Entry, error) {
	dir, err := checkRegistry()
	if err != nil || dir == "" {
		return nil, err
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	self, _ := os.Executable()
	var out []Entry
	for _, f := range files {
		e, ok := readRecord(f)
		if !ok {
			continue
		}
		// Alive, the same process (start time), and either running this
		// very binary or serving the record's control socket itself (a
		// program embedding the Go API: one registry for both): a stale or
		// planted record can never make us signal, or send a command's
		// stdio to, something else.
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", e.Pid))
		if startTick(e.Pid) != e.StartTick || e.StartTick == 0 || (self != "" && exe != self && !servesControl(e, dir)) {
			if startTick(e.Pid) != e.StartTick {
				os.Remove(f)
				// Its control socket goes with it (only one in the
				// registry directory, where jail puts them).
				if e.Control != "" && filepath.Dir(e.Control) == dir {
					os.Remove(e.Control)
				}
			}
			continue
		}
		out = append(out, e)
	}
	removeDeadSockets(dir)
	removeDeadClaims(dir)
	return out, nil
}

// removeDeadClaims removes the name claims of supervisors that are gone
// (crashed, SIGKILLed): the name would be taken again at its next claim
// anyway, but nothing of a dead sandbox should stay behind.
func removeDeadClaims(dir string) {
	claims, _ := filepath.Glob(filepath.Join(dir, "name.*"))
	for _, c := range claims {
		if !claimAlive(c) {
			os.Remove(c)
		}
	}
}

// removeDeadSockets removes the control sockets no record names and no
// process listens on: a supervisor killed between its socket and its
// record (or whose record went first) leaves one. A socket no record
// names yet may be a supervisor's that is starting (and between its
// bind and its listen a connection is refused too): only one older than
// a minute that refuses a connection (nobody listens) is stale.
func removeDeadSockets(dir string) {
	socks, _ := filepath.Glob(filepath.Join(dir, "*.sock"))
	for _, s := range socks {
		if _, err := os.Stat(strings.TrimSuffix(s, ".sock") + ".json"); err == nil {
			continue
		}
		if fi, err := os.Lstat(s); err != nil || time.Since(fi.ModTime()) < time.Minute {
			continue
		}
		c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: s, Net: "unix"})
		if err == nil {
			c.Close()
			continue
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			os.Remove(s)
		}
	}
}

// PS prints the running sandboxes.
func PS(w io.Writer) int {
	es, err := List()
	if err != nil {
		fmt.Fprintf(w, "jail: %v\n", err)
		return 1
	}
	fmt.Fprintf(w, "%-14s %-8s %-10s %-30s %s\n", "ID", "PID", "UP", "WORKSPACE", "COMMAND")
	for _, e := range es {
		fmt.Fprintf(w, "%-14s %-8d %-10s %-30s %s\n", e.ID, e.Pid, time.Since(e.Started).Round(time.Second), e.Workspace, strings.Join(e.Command, " "))
	}
	return 0
}

// Kill asks the sandboxes named by ids (or all of this user's, with "all")
// to stop: SIGTERM to the command, and everything killed after its
// --kill-grace; with now, everything is killed at once. The request goes
// through each supervisor's control socket, which records who asked and
// answers once it acted; a sandbox that ends meanwhile counts as stopped.
func Kill(ids []string, now bool, w io.Writer) int { return KillWhy(ids, now, "", w) }

// KillWhy is Kill with the reason the trail records.
func KillWhy(ids []string, now bool, reason string, w io.Writer) int {
	es, err := List()
	if err != nil {
		fmt.Fprintf(w, "jail: %v\n", err)
		return 1
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	code, found := 0, map[string]bool{}
	var asked []Entry // every sandbox told to end, waited for below
	for _, e := range es {
		if !want["all"] && !want[e.ID] && !want[fmt.Sprint(e.Pid)] && (e.Name == "" || !want[e.Name]) {
			continue
		}
		found[e.ID], found[fmt.Sprint(e.Pid)] = true, true
		if e.Name != "" {
			found[e.Name] = true
		}
		if err := killOne(e, now, reason); err != nil {
			fmt.Fprintf(w, "jail: kill %s (pid %d): %v\n", e.ID, e.Pid, err)
			code = 1
			continue
		}
		asked = append(asked, e)
	}
	// Every sandbox was told first, then each is waited for: jail kill
	// returns once they have ended, so that what comes next (removing the
	// workspace, a HOME, starting the same name again) does not race a
	// supervisor still writing its last files and the trail's end.
	wait := killWait
	if now {
		wait = killNowWait
	}
	for _, e := range asked {
		if err := waitEnded(e, wait); err != nil {
			fmt.Fprintf(w, "jail: kill %s (pid %d): %v; jail ps lists it while it runs\n", e.ID, e.Pid, err)
			code = 1
		}
	}
	for _, id := range ids {
		if id != "all" && !found[id] {
			fmt.Fprintf(w, "jail: no running sandbox %q (see jail ps)\n", id)
			code = 1
		}
	}
	return code
}

func killOne(e Entry, now bool, reason string) error {
	op := ctlStop
	if now {
		op = ctlKill
	}
	if e.Control != "" {
		err := askControl(e.Control, op, reason)
		if err == nil || (gone(err) && !alive(e)) {
			return nil
		}
		if !gone(err) && !errors.Is(err, os.ErrDeadlineExceeded) {
			return err
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// No answer in time: a supervisor stopped (SIGSTOP, a job
			// stopped) or starved under load. The kill switch does not
			// give up there (it did: exit 1, and the sandbox ran on, even
			// once continued): continued, then the signals below, and
			// jail kill waits for its end as for any other. Not a pid
			// reused since (its start time says).
			if !alive(e) {
				return nil
			}
			if err := unix.Kill(e.Pid, syscall.SIGCONT); err != nil {
				return ignoreGone(err)
			}
		}
	}
	// A supervisor without a control socket, or one that did not answer:
	// signals (the trail then cannot say who asked).
	sig := syscall.SIGTERM
	if now {
		sig = syscall.SIGINT // the supervisor kills at once on a second interrupt
		if err := unix.Kill(e.Pid, sig); err != nil {
			return ignoreGone(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return ignoreGone(unix.Kill(e.Pid, sig))
}

// How long jail kill waits for a sandbox to end: with --now init kills
// everything at once and the supervisor only ends the run (seconds for an
// agent with a large memory to free); without it the supervisor waits its
// kill grace (--kill-grace, 5 s by default) before the SIGKILL, so the bound
// is jail stop's.
const (
	killNowWait = 30 * time.Second
	killWait    = 2 * time.Minute
)

// waitEnded waits until the supervisor e names has exited (a zombie counts:
// it runs no more), or timeout passes.
func waitEnded(e Entry, timeout time.Duration) error {
	fd, err := unix.PidfdOpen(e.Pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	if err != nil {
		// No pidfd (before Linux 5.3): the registry's own check, polled.
		return pollEnded(e, timeout)
	}
	defer unix.Close(fd)
	// The pidfd holds whichever process the pid named at its open: a
	// supervisor that ended before and a pid reused since would be waited
	// for in its place. Its start time, checked after the open, says.
	if !alive(e) {
		return nil
	}
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("still running after %v", timeout)
		}
		// A pidfd polls readable once its process has exited, reaped or not.
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left.Milliseconds())+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("wait for pid %d: %w", e.Pid, err)
		}
		if n > 0 {
			return nil
		}
	}
}

// pollEnded is waitEnded without a pidfd.
func pollEnded(e Entry, timeout time.Duration) error {
	for deadline := time.Now().Add(timeout); alive(e); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("still running after %v", timeout)
		}
	}
	return nil
}

// ignoreGone: a supervisor that exited between the listing and the signal
// has stopped, which is what was asked.
func ignoreGone(err error) error {
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	return err
}

// alive tells whether the registered supervisor still runs.
func alive(e Entry) bool { return e.StartTick != 0 && startTick(e.Pid) == e.StartTick }

// runningTrail returns the trail of the running sandbox ref names (its id,
// a unique prefix of 4 or more characters, or its supervisor's pid), or "".
func runningTrail(ref string) string {
	es, err := List()
	if err != nil {
		return ""
	}
	var pre []Entry
	for _, e := range es {
		if e.ID == ref || fmt.Sprint(e.Pid) == ref {
			return e.Audit
		}
		if len(ref) >= 4 && strings.HasPrefix(e.ID, ref) {
			pre = append(pre, e)
		}
	}
	if len(pre) == 1 {
		return pre[0].Audit
	}
	return ""
}

// liveTrails lists the trails of the running sandboxes (retention keeps them).
func liveTrails() []string {
	es, _ := List()
	var out []string
	for _, e := range es {
		if e.Audit != "" {
			out = append(out, e.Audit)
		}
	}
	return out
}

// RunDir is the registry's directory (records, control sockets, name
// claims, session logs), created and checked (0700, the user's own).
func RunDir() (string, error) { return ensureRegistry() }

// Find returns the running sandbox named name (a session's name, or an id
// or supervisor pid as jail ps shows them).
func Find(name string) (Entry, error) {
	es, err := List()
	if err != nil {
		return Entry{}, err
	}
	for _, e := range es {
		if e.Name == name {
			return e, nil
		}
	}
	for _, e := range es {
		if e.ID == name || fmt.Sprint(e.Pid) == name {
			return e, nil
		}
	}
	return Entry{}, fmt.Errorf("no running sandbox %q (jail ps lists them)", name)
}

// Alive tells whether the supervisor pid of sandbox id still runs.
func Alive(pid int, id string) bool {
	es, err := List()
	if err != nil {
		return false
	}
	for _, e := range es {
		if e.Pid == pid && e.ID == id {
			return true
		}
	}
	return false
}

// servesControl tells whether e's supervisor itself listens on e's control
// socket: the kernel's word (SO_PEERCRED of a connection) that the socket
// is that process's and this user's.
func servesControl(e Entry, dir string) bool {
	if e.Control == "" || filepath.Dir(e.Control) != dir {
		return false
	}
	c, err := session.Dial(e.Control)
	if err != nil {
		return false
	}
	defer c.Close()
	cred, err := peerCred(c.Unix())
	return err == nil && int(cred.Pid) == e.Pid && int(cred.Uid) == os.Getuid()
}
