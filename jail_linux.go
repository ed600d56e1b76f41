package jail

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/internal/termsafe"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/ptyrelay"
	"github.com/jail-sandbox/jail/sandbox"
	"github.com/jail-sandbox/jail/session"
	"github.com/jail-sandbox/jail/sessionlog"
)

// supervisorArg0 is argv[0] of the re-executed program when it is to be a
// sandbox's supervisor: never a valid command (it has a colon, and needs
// its pipes on fds 3 and 4).
const supervisorArg0 = "jail:supervise"

// Fds of the supervisor's re-exec: the request (read to EOF), the ready
// line, and the optional lifeline.
const (
	fdRequest  = 3
	fdReady    = 4
	fdLifeline = 5
)

// Init runs this process as a sandbox's supervisor or init when it was
// started as one (by Start, or by the supervisor), and never returns then;
// otherwise it returns at once. Call it first thing in main, and in
// TestMain of tests that start sandboxes.
func Init() {
	if len(os.Args) > 0 && os.Args[0] == supervisorArg0 {
		os.Exit(superviseMain())
	}
	if sandbox.IsInit() {
		sandbox.InitMain() // never returns
	}
}

// startRequest is what Start hands its supervisor.
type startRequest struct {
	Policy   *policy.Policy `json:"policy"`
	Notices  []string       `json:"notices,omitempty"`
	Quiet    bool           `json:"quiet,omitempty"`
	Verbose  bool           `json:"verbose,omitempty"`
	LogPath  string         `json:"log"`
	Lifeline bool           `json:"lifeline,omitempty"`
	Tty      bool           `json:"tty,omitempty"`
	LogLimit int64          `json:"log_limit,omitempty"`
	// RemoveLog: the log is jail's choice and the sandbox has no name to
	// read it by: it goes when the sandbox ends.
	RemoveLog bool `json:"remove_log,omitempty"`
	// ProfileHints and RegistryHints carry the policy's fields of those
	// names, which its JSON leaves out: the hints themselves, and whether
	// the caller asked for registry hints (the supervisor asks its own
	// RegistryHints, a function, for them).
	ProfileHints  []policy.ProfileHint `json:"profile_hints,omitempty"`
	RegistryHints bool                 `json:"registry_hints,omitempty"`
}

type readyLine struct {
	Info  *session.Info `json:"info,omitempty"`
	Error string        `json:"error,omitempty"`
}

func superviseMain() int {
	req := os.NewFile(fdRequest, "jail-request")
	ready := os.NewFile(fdReady, "jail-ready")
	var sr startRequest
	err := json.NewDecoder(io.LimitReader(req, 64<<20)).Decode(&sr)
	req.Close()
	if err != nil || sr.Policy == nil {
		_ = json.NewEncoder(ready).Encode(readyLine{Error: fmt.Sprintf("supervisor: bad start request: %v", err)})
		return sandbox.ExitSetup
	}
	p := sr.Policy
	p.Notices, p.Quiet, p.Verbose = sr.Notices, sr.Quiet, sr.Verbose
	p.ProfileHints = sr.ProfileHints
	if sr.RegistryHints && RegistryHints != nil {
		p.RegistryHints = RegistryHints(p)
	}
	so := sandbox.SessionOptions{LogPath: sr.LogPath, Tty: sr.Tty}
	var once sync.Once
	var failed *readyLine
	so.Ready = func(info *session.Info, err error) {
		once.Do(func() {
			if err != nil {
				// Said once the log is drained (below): Start reads the
				// log's tail with the error, and the copier may not have
				// written the sandbox's last lines yet.
				failed = &readyLine{Error: err.Error()}
				return
			}
			_ = json.NewEncoder(ready).Encode(readyLine{Info: info})
			ready.Close()
		})
	}
	if sr.Lifeline {
		so.Lifeline = os.NewFile(fdLifeline, "jail-lifeline")
	}
	endLog := func() {}
	if sr.LogPath != "" {
		endLog = captureLog(sr.LogPath, sr.LogLimit)
	}
	code := sandbox.RunSession(p, so)
	endLog()
	if failed != nil {
		_ = json.NewEncoder(ready).Encode(failed)
		ready.Close()
	}
	if sr.RemoveLog {
		sessionlog.Remove(sr.LogPath)
	}
	return code
}

// captureLog bounds the log the supervisor was started with on fds 1 and 2
// (package sessionlog): those become a pipe that a goroutine copies into
// the log, rotating it; the main command, the kept terminal and jail's
// notices all write there. The returned func drains it once the sandbox
// has ended (everything inside is gone, so nothing else holds the pipe).
func captureLog(path string, limit int64) func() {
	logFD, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return func() {} // unbounded, as it was opened
	}
	r, w, err := os.Pipe()
	if err != nil {
		unix.Close(logFD)
		return func() {}
	}
	_ = unix.Dup3(int(w.Fd()), 1, 0)
	_ = unix.Dup3(int(w.Fd()), 2, 0)
	w.Close()
	lw := sessionlog.NewWriter(os.NewFile(uintptr(logFD), path), path, limit)
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(lw, r)
		close(done)
	}()
	return func() {
		if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
			_ = unix.Dup3(int(null.Fd()), 1, 0)
			_ = unix.Dup3(int(null.Fd()), 2, 0)
			null.Close()
		}
		select {
		case <-done:
		case <-time.After(2 * time.Second):
		}
		lw.Close()
	}
}

// Sandbox is a running sandbox: one started here (Start) or found by name
// (Open).
type Sandbox struct {
	info     session.Info
	lifeline *os.File      // Start without Detach: closing it kills the sandbox
	proc     *exec.Cmd     // the supervisor, when started here
	done     chan struct{} // closed when the supervisor started here has exited
	code     int
}

// Start starts a sandbox for p (p.Command may be empty: an idle sandbox
// that runs only what is exec'd into it) and returns once it runs. ctx
// bounds the start only; the sandbox lives until Stop, Kill, its command's
// end, or (without opts.Detach) this program's exit.
func Start(ctx context.Context, p *policy.Policy, opts Options) (*Sandbox, error) {
	pol := *p
	if opts.Name != "" {
		pol.Name = opts.Name
	}
	if pol.Name != "" {
		if err := sandbox.ValidName(pol.Name); err != nil {
			return nil, err
		}
		if _, err := sandbox.Find(pol.Name); err == nil {
			return nil, fmt.Errorf("a sandbox named %s is running (jail ps); choose another name, or stop it", pol.Name)
		}
	}
	if pol.Cwd == "" {
		// Where the sandbox starts: this program's directory, as for jail.
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("no current directory: %w (set the policy's Cwd)", err)
		}
		pol.Cwd = wd
	}
	if err := pol.Check(); err != nil {
		return nil, err
	}
	// Before the log's directory is made (RunDir: the state directory
	// without a runtime one): a home the plan refuses gets nothing.
	if err := sandbox.RefuseHomePlace(&pol, os.Environ()); err != nil {
		return nil, err
	}
	if opts.Tty && len(pol.Command) == 0 {
		return nil, errors.New("a kept terminal (Tty) needs a command: an idle sandbox has nothing to attach to")
	}
	logPath, removeLog := opts.LogPath, false
	if logPath == "" {
		dir, err := sandbox.RunDir()
		if err != nil {
			return nil, err
		}
		base := pol.Name
		if base == "" {
			base, removeLog = "sandbox-"+randomHex(6), true
		}
		logPath = filepath.Join(dir, base+".log")
	}
	logFile, err := sessionlog.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("open the sandbox's log %s: %w", logPath, err)
	}
	defer logFile.Close()
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer devNull.Close()
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer reqR.Close()
	readyR, readyW, err := os.Pipe()
	if err != nil {
		reqW.Close()
		return nil, err
	}
	defer readyR.Close()
	extra := []*os.File{reqR, readyW}
	var lifeR, lifeW *os.File
	if !opts.Detach {
		if lifeR, lifeW, err = os.Pipe(); err != nil {
			reqW.Close()
			readyW.Close()
			return nil, err
		}
		defer lifeR.Close()
		extra = append(extra, lifeR)
	}
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{supervisorArg0},
		Env:        os.Environ(),
		Dir:        pol.Cwd,
		Stdin:      devNull,
		Stdout:     logFile,
		Stderr:     logFile,
		ExtraFiles: extra,
		// A session of its own: the supervisor has no terminal, and the
		// starter's job control and hangups never reach it.
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	err = cmd.Start()
	readyW.Close()
	if err != nil {
		reqW.Close()
		if lifeW != nil {
			lifeW.Close()
		}
		return nil, fmt.Errorf("start the supervisor: %w", err)
	}
	s := &Sandbox{lifeline: lifeW, proc: cmd, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		s.code = cmd.ProcessState.ExitCode()
		if err != nil && s.code < 0 {
			s.code = 128 + int(syscall.SIGKILL)
		}
		close(s.done)
	}()
	sr := startRequest{Policy: &pol, Notices: p.Notices, Quiet: p.Quiet, Verbose: p.Verbose, LogPath: logPath, Lifeline: !opts.Detach, Tty: opts.Tty,
		LogLimit: opts.LogLimit, RemoveLog: removeLog, ProfileHints: p.ProfileHints, RegistryHints: p.RegistryHints != nil}
	go func() {
		_ = json.NewEncoder(reqW).Encode(sr)
		reqW.Close()
	}()
	type result struct {
		line readyLine
		err  error
	}
	got := make(chan result, 1)
	go func() {
		var line readyLine
		err := json.NewDecoder(readyR).Decode(&line)
		got <- result{line, err}
	}()
	var res result
	select {
	case res = <-got:
	case <-ctx.Done():
		s.abort()
		return nil, ctx.Err()
	}
	if res.err != nil || res.line.Error != "" || res.line.Info == nil {
		why := res.line.Error
		if why == "" {
			why = "the supervisor exited"
		}
		s.abort()
		return nil, fmt.Errorf("the sandbox did not start: %s%s", why, logTail(logPath, why))
	}
	s.info = *res.line.Info
	if s.info.Control == "" {
		s.abort()
		return nil, fmt.Errorf("the sandbox has no control socket (is jail's state directory path too long for a Unix socket? set XDG_STATE_HOME)")
	}
	return s, nil
}

// abort ends a sandbox whose start failed.
func (s *Sandbox) abort() {
	if s.proc != nil && s.proc.Process != nil {
		_ = s.proc.Process.Kill()
		<-s.done
	}
	if s.lifeline != nil {
		s.lifeline.Close()
	}
}

// logTail is the end of the supervisor's log, for an error message; ""
// when it is only the error why already says (the supervisor's ready line
// carries its first error).
func logTail(path, why string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 || strings.HasSuffix(why, strings.TrimPrefix(strings.TrimSpace(string(b)), "jail: ")) {
		return ""
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return "; its log says: " + string(b)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Open finds the running sandbox named name (a session of this user's).
func Open(name string) (*Sandbox, error) {
	e, err := sandbox.Find(name)
	if err != nil {
		return nil, err
	}
	// The registry's record is enough to reach it; Inspect asks for more.
	return &Sandbox{info: session.Info{Name: e.Name, ID: e.ID, Pid: e.Pid, Control: e.Control, Audit: e.Audit, Log: e.Log, Net: e.Net,
		Started: e.Started.Format(time.RFC3339), Command: e.Command, Workspace: e.Workspace}}, nil
}

// Name is the sandbox's name ("" for an unnamed one).
func (s *Sandbox) Name() string { return s.info.Name }

// ID is the sandbox's id (in its trail's name and jail ps).
func (s *Sandbox) ID() string { return s.info.ID }

// TrailPath is the sandbox's audit trail.
func (s *Sandbox) TrailPath() string { return s.info.Audit }

// LogPath is where the supervisor's output (the main command's) goes.
func (s *Sandbox) LogPath() string { return s.info.Log }

// Events reads the sandbox's audit trail as it is now.
func (s *Sandbox) Events() ([]*audit.Record, error) {
	if s.info.Audit == "" {
		return nil, errors.New("the sandbox has no audit trail")
	}
	f, err := os.Open(s.info.Audit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, _, err := audit.ReadAll(f)
	return recs, err
}

// Inspect asks the supervisor for the sandbox's policy and live facts.
func (s *Sandbox) Inspect() (*session.Info, error) {
	c, err := session.Dial(s.info.Control)
	if err != nil {
		return nil, s.goneErr(err)
	}
	defer c.Close()
	_ = c.Unix().SetDeadline(time.Now().Add(5 * time.Second))
	if err := c.Send(session.Request{Op: session.OpInspect}); err != nil {
		return nil, err
	}
	var rep session.Reply
	if _, err := c.Recv(&rep); err != nil {
		return nil, s.goneErr(err)
	}
	if rep.Error != "" || rep.Info == nil {
		return nil, fmt.Errorf("inspect: %s", rep.Error)
	}
	return rep.Info, nil
}

// ErrGone is returned for a sandbox that is no longer running.
var ErrGone = errors.New("the sandbox is not running")

func (s *Sandbox) goneErr(err error) error {
	if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
		return ErrGone
	}
	return err
}

// Stop asks everything in the sandbox to end (SIGTERM), and kills what is
// left after the policy's kill grace. It returns once asked; Wait waits.
func (s *Sandbox) Stop() error { return s.ask(session.OpStop, "") }

// Kill kills everything in the sandbox at once; reason goes to the trail.
func (s *Sandbox) Kill(reason string) error { return s.ask(session.OpKill, reason) }

func (s *Sandbox) ask(op, reason string) error {
	c, err := session.Dial(s.info.Control)
	if err != nil {
		return s.goneErr(err)
	}
	defer c.Close()
	_ = c.Unix().SetDeadline(time.Now().Add(6 * time.Second))
	if err := c.Send(session.Request{Op: op, Reason: reason}); err != nil {
		return err
	}
	var rep session.Reply
	if _, err := c.Recv(&rep); err != nil {
		return s.goneErr(err)
	}
	if !rep.OK {
		return fmt.Errorf("%s: %s", op, rep.Error)
	}
	return nil
}

// Wait waits for the sandbox to end and returns the supervisor's exit
// code (the main command's, under jail's exit-code rules). For a sandbox
// found with Open it polls, and the code is 0 unless it is still running
// when ctx ends.
func (s *Sandbox) Wait(ctx context.Context) (int, error) {
	if s.done != nil {
		select {
		case <-s.done:
			if s.lifeline != nil {
				s.lifeline.Close()
			}
			return s.code, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	for {
		if !sandbox.Alive(s.info.Pid, s.info.ID) {
			return 0, nil
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// Close lets go of a sandbox started without Detach: it is killed (the
// lifeline closes), and Close waits for its end. For others it does
// nothing.
func (s *Sandbox) Close() error {
	if s.lifeline == nil {
		return nil
	}
	s.lifeline.Close()
	if s.done != nil {
		<-s.done
	}
	return nil
}

// Command returns a Cmd that runs name with args in the sandbox.
func (s *Sandbox) Command(name string, args ...string) *Cmd {
	return &Cmd{sb: s, Args: append([]string{name}, args...), ctx: context.Background()}
}

// CommandContext is Command with a context: when ctx ends before the
// command, the command is killed (SIGKILL to its process group). When it
// ends while Start waits for the start, Start returns ctx's error once the
// supervisor has the start given up (a second later at most), and the
// command does not run (refused at its exec, or killed).
func (s *Sandbox) CommandContext(ctx context.Context, name string, args ...string) *Cmd {
	c := s.Command(name, args...)
	c.ctx = ctx
	return c
}

// Cmd is a command run in a sandbox, shaped like os/exec's.
type Cmd struct {
	// Args is the command and its arguments (Args[0] is looked up in the
	// sandbox's PATH).
	Args []string
	// Env is added to the sandbox's environment (NAME=VALUE).
	Env []string
	// Dir is where it starts; "" is the sandbox's working directory.
	Dir string
	// Stdin, Stdout and Stderr are as os/exec's: nil is the null device;
	// an *os.File that is not a terminal is passed as it is; anything else
	// (a terminal included, never handed in: CVE-2017-5226) is copied
	// through a pipe. Output to a terminal passes jail's terminal filter
	// (no clipboard writes, title or font changes, answerback), as the
	// main command's relayed output does. A directory, an O_PATH
	// descriptor or a network socket's *os.File (net.Conn.File) is
	// refused (*ExitError, code 125): the command would reach the host's
	// tree or network through it; give a pipe instead.
	//
	// Only an *os.File is seen to be a terminal: a writer that wraps one
	// (io.MultiWriter(os.Stdout, log), a bufio.Writer, a logger) gets the
	// command's bytes as they come, escape sequences included, and so
	// does the terminal behind it. Filter it yourself, one filter per
	// stream: io.MultiWriter(sb.TerminalFilter(os.Stdout), log) -- see
	// TerminalFilter.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Tty runs the command on a pty of the sandbox's own: Stdin feeds it,
	// Stdout gets its output (Stderr is unused).
	Tty bool
	// OnNotice, when set, gets jail's urgent lines while the command runs
	// (a protection that fell: a mask the host took away), those said
	// before it started first: "jail: " and the text, no control character
	// in it. The caller shows them where the user looks (jail exec -t: one
	// line at the bottom of the command's screen, ptyrelay.UrgentLine).
	// Called from one goroutine, in order, before Wait returns.
	OnNotice func(line string)
	// OnTimely, when set with OnNotice, gets jail's timely lines about the
	// command while it runs (a server of its the host cannot reach: "a
	// server inside listens on port N ... --publish N:N"), as OnNotice its
	// lines. The caller shows them where they harm nothing (jail exec -t:
	// a line of its own on a screen of lines, ptyrelay.Screen.Plain).
	// Called from OnNotice's goroutine.
	OnTimely func(line string)
	// OnStopKey, when set with Tty, is called in place of passing on the
	// pty's suspend character (Ctrl-Z) read from Stdin while the kernel
	// would discard the SIGTSTP the pty makes of it: while the command's
	// own process group is the pty's foreground one (it leads the pty's
	// session, so its group is orphaned) and the command takes SIGTSTP's
	// default action (ptyrelay.StopKeyReader). It stops the command
	// (Signal(syscall.SIGSTOP)) and the caller, as a shell's job, and
	// returns once continued; false passes the key on. A job-control
	// shell's job, in a group of its own, gets the key, and so does a
	// command that ignores or catches SIGTSTP. Called from the goroutine
	// that copies Stdin.
	OnStopKey func() bool
	// OnSuspend, when set with Tty, is called when the command stops
	// itself where the kernel would discard that stop: it sends SIGTSTP to
	// itself or its process group (vim's and agents' TUIs at their suspend
	// key, the terminal raw) and takes SIGTSTP's default action, its group
	// the session leader's. The call waits meanwhile, and what the command
	// printed before it has been copied to Stdout. It does what OnStopKey
	// does: stops the command (Signal(syscall.SIGSTOP)) and the caller,
	// continues the command once continued, and returns; or it returns
	// false at once, and the command goes on, as the kernel would have it.
	// Needs the sandbox's exec audit, whose filter holds the stop. Called
	// from the goroutine that reads the supervisor's replies.
	OnSuspend func() bool

	sb      *Sandbox
	ctx     context.Context
	conn    *session.Conn
	pid     int
	copies  sync.WaitGroup
	closers []io.Closer // the command's ends, closed once it started
	after   []io.Closer // ours, closed after Wait
	exit    chan session.Reply
	waited  bool
	master  *os.File     // Tty: the pty's master
	busy    atomic.Int32 // Tty: writes to Stdout under way (drain)
}

// Resize sets the size of a Tty command's terminal (its SIGWINCH).
func (c *Cmd) Resize(rows, cols uint16) error {
	if c.master == nil {
		return errors.New("not a started Tty command")
	}
	return unix.IoctlSetWinsize(int(c.master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols})
}

// Pid is the command's pid as the host sees it (after Start).
func (c *Cmd) Pid() int { return c.pid }

// Run starts the command and waits for it.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// Output runs the command and returns its standard output.
func (c *Cmd) Output() ([]byte, error) {
	if c.Stdout != nil {
		return nil, errors.New("Stdout already set")
	}
	var b syncBuffer
	c.Stdout = &b
	err := c.Run()
	return b.Bytes(), err
}

// CombinedOutput runs the command and returns its stdout and stderr.
func (c *Cmd) CombinedOutput() ([]byte, error) {
	if c.Stdout != nil || c.Stderr != nil {
		return nil, errors.New("Stdout or Stderr already set")
	}
	var b syncBuffer
	c.Stdout, c.Stderr = &b, &b
	err := c.Run()
	return b.Bytes(), err
}

type syncBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.b = append(s.b, p...)
	s.mu.Unlock()
	return len(p), nil
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.b...)
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// input is the fd the command reads: the null device, the caller's file,
// or a pipe fed from r.
func (c *Cmd) input(r io.Reader) (*os.File, error) {
	if r == nil {
		return os.Open(os.DevNull)
	}
	if f, ok := r.(*os.File); ok && !isTerminal(f) {
		return f, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	c.closers = append(c.closers, pr)
	go func() {
		_, _ = io.Copy(pw, r)
		pw.Close()
	}()
	return pr, nil
}

// output is the fd the command writes: the null device, the caller's
// file, or a pipe copied to w.
func (c *Cmd) output(w io.Writer) (*os.File, error) {
	if w == nil {
		f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err == nil {
			c.closers = append(c.closers, f)
		}
		return f, err
	}
	if f, ok := w.(*os.File); ok {
		if !isTerminal(f) {
			return f, nil
		}
		// The user's terminal: what the command prints passes the filter
		// the foreground relay and a Tty command's output pass (package
		// termfilter), so that bytes the agent chose (a file it wrote,
		// cat'ed here) cannot write the clipboard (OSC 52: the next paste
		// into a host shell), retitle or reconfigure the terminal, or
		// make it answer (review14b).
		fw, err := sandbox.TerminalFilter(c.sb.allowTerminal(), f)
		if err != nil {
			return nil, err
		}
		w = fw
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	c.closers = append(c.closers, pw)
	c.copies.Add(1)
	go func() {
		defer c.copies.Done()
		_, _ = io.Copy(w, pr)
		pr.Close()
	}()
	return pw, nil
}

// TerminalFilter returns w behind jail's terminal filter, with the classes
// the sandbox's allow-terminal lets through: for a terminal the caller
// wraps before giving it to a Cmd (Cmd.Stdout as io.MultiWriter(filtered
// terminal, log)), which Cmd cannot see inside. The filter keeps state
// across writes (a sequence split between two): one per stream, not
// shared by Stdout and Stderr.
func (s *Sandbox) TerminalFilter(w io.Writer) (io.Writer, error) {
	return sandbox.TerminalFilter(s.allowTerminal(), w)
}

// allowTerminal is the sandbox's allow-terminal: what its policy lets
// through the terminal filter.
func (s *Sandbox) allowTerminal() []string {
	raw := s.info.Policy
	if len(raw) == 0 {
		if in, err := s.Inspect(); err == nil {
			raw = in.Policy
		}
	}
	var p struct {
		AllowTerminal []string `json:"allow_terminal"`
	}
	_ = json.Unmarshal(raw, &p) // none: the strictest filter
	return p.AllowTerminal
}

// givenUpWait bounds Start's wait for the supervisor to confirm a start
// given up: milliseconds normally; past it the supervisor is stuck, and
// Start returns the context's error regardless (the start is still given
// up: the connection closes).
const givenUpWait = time.Second

// awaitGivenUp reads conn's replies until the supervisor confirms the
// start was given up, the connection ends, or givenUpWait passes.
func awaitGivenUp(conn *session.Conn) {
	_ = conn.Unix().SetReadDeadline(time.Now().Add(givenUpWait))
	for {
		var rep session.Reply
		fds, err := conn.Recv(&rep)
		for _, f := range fds {
			f.Close()
		}
		if err != nil || rep.Event == session.EventGivenUp || rep.Event == session.EventExit {
			return
		}
	}
}

// Start starts the command; Wait waits for it.
func (c *Cmd) Start() error {
	if c.conn != nil {
		return errors.New("already started")
	}
	if len(c.Args) == 0 {
		return errors.New("no command")
	}
	if err := c.ctx.Err(); err != nil {
		return err
	}
	req := session.Request{Op: session.OpExec, Dir: c.Dir, Tty: c.Tty, Notices: c.OnNotice != nil, Timely: c.OnNotice != nil && c.OnTimely != nil, Suspends: c.Tty && c.OnSuspend != nil}
	for _, a := range c.Args {
		req.Argv = append(req.Argv, []byte(a))
	}
	for _, e := range c.Env {
		req.Env = append(req.Env, []byte(e))
	}
	var files []*os.File
	if !c.Tty {
		in, err := c.input(c.Stdin)
		if err != nil {
			return err
		}
		if c.Stdin == nil {
			c.closers = append(c.closers, in)
		}
		out, err := c.output(c.Stdout)
		if err != nil {
			c.closeAll()
			return err
		}
		errf, err := c.output(c.Stderr)
		if err != nil {
			c.closeAll()
			return err
		}
		files = []*os.File{in, out, errf}
	}
	conn, err := session.Dial(c.sb.info.Control)
	if err != nil {
		c.closeAll()
		return c.sb.goneErr(err)
	}
	err = conn.Send(req, files...)
	c.closeAll() // the supervisor (then the command) has its own copies
	if err != nil {
		conn.Close()
		return err
	}
	// The wait for the start ends with the context: the connection's
	// reads are cut short, and the supervisor, its client gone before the
	// answer, gives the start up (the command is refused at its exec, or
	// killed). A start answered just as the context ended is killed: a
	// SIGKILL request before the close.
	stop := context.AfterFunc(c.ctx, func() { _ = conn.Unix().SetReadDeadline(time.Now()) })
	var rep session.Reply
	fds, err := conn.Recv(&rep)
	if !stop() {
		// The context ended first: whatever came, the start is given up.
		// The request says so (before the start's answer any request
		// gives it up; after it, the command runs and all of it is
		// killed).
		_ = conn.Send(session.Request{Op: session.OpSignal, Signal: int(syscall.SIGKILL)})
		if err != nil {
			// Unanswered: wait (bounded) for the supervisor to have it as
			// given up, its exec refused from then on. Returning at once
			// raced with the caller's next step: a stopped init let go
			// forked the command, whose exec the supervisor, not yet past
			// the request, allowed; it ran a moment before its kill.
			awaitGivenUp(conn)
		}
		conn.Close()
		for _, f := range fds {
			f.Close()
		}
		return c.ctx.Err()
	}
	if err != nil {
		conn.Close()
		return c.sb.goneErr(err)
	}
	if rep.Error != "" {
		conn.Close()
		for _, f := range fds {
			f.Close()
		}
		code := rep.ExitCode
		if code == 0 {
			code = 125
		}
		return &ExitError{Code: code, Err: rep.Error}
	}
	c.conn, c.pid = conn, rep.Pid
	if c.Tty {
		if len(fds) != 1 {
			conn.Close()
			return errors.New("exec -t: no terminal came back")
		}
		c.relayPty(fds[0])
	}
	c.exit = make(chan session.Reply, 1)
	go func() {
		var r session.Reply
		for {
			r = session.Reply{}
			fds, err := conn.Recv(&r)
			for _, f := range fds {
				f.Close() // a notice carries no fd
			}
			if err == nil && r.Event == session.EventNotice && c.OnNotice != nil {
				c.OnNotice(string(r.Data))
				continue
			}
			if err == nil && r.Event == session.EventTimely && c.OnTimely != nil {
				c.OnTimely(string(r.Data))
				continue
			}
			if err == nil && r.Event == session.EventSuspend {
				// The command's last bytes (leaving its screen) reach
				// Stdout before the caller gives the terminal back.
				c.drain(500 * time.Millisecond)
				stopped := c.OnSuspend != nil && c.OnSuspend()
				_ = conn.Send(session.Request{Op: session.OpSuspended, Declined: !stopped})
				continue
			}
			if err != nil || r.Event != session.EventExit {
				// The supervisor is gone, and the sandbox with it.
				r = session.Reply{Code: 128 + int(syscall.SIGKILL), Signal: int(syscall.SIGKILL)}
			}
			break
		}
		c.exit <- r
	}()
	if c.ctx.Done() != nil {
		go func() {
			select {
			case <-c.ctx.Done():
				_ = c.Signal(syscall.SIGKILL)
			case r := <-c.exit:
				c.exit <- r
			}
		}()
	}
	return nil
}

// relayPty copies Stdin to the pty and its output to Stdout.
func (c *Cmd) relayPty(master *os.File) {
	c.master = master
	c.after = append(c.after, master)
	if in := c.Stdin; in != nil {
		if c.OnStopKey != nil {
			in = ptyrelay.StopKeyReader(in, ptyrelay.MasterStopPty(master), c.OnStopKey)
		}
		go func() { _, _ = io.Copy(master, in) }()
	}
	out := c.Stdout
	if out == nil {
		out = io.Discard
	}
	if f, ok := out.(*os.File); ok && isTerminal(f) {
		// The user's terminal: filtered as in output (review14b). The
		// allow classes come from a checked policy; should the filter
		// still refuse them, nothing reaches the terminal rather than
		// everything.
		fw, err := sandbox.TerminalFilter(c.sb.allowTerminal(), f)
		if err != nil {
			fw = io.Discard
		}
		out = fw
	}
	c.copies.Add(1)
	go func() {
		defer c.copies.Done()
		// EIO once the command and everything holding the pty are gone.
		_, _ = io.Copy(&busyWriter{w: out, busy: &c.busy}, master)
	}()
}

// busyWriter counts the writes under way (drain).
type busyWriter struct {
	w    io.Writer
	busy *atomic.Int32
}

func (b *busyWriter) Write(p []byte) (int, error) {
	b.busy.Add(1)
	defer b.busy.Add(-1)
	return b.w.Write(p)
}

// drain waits, at most max, until all a Tty command printed is written to
// Stdout: nothing left to read on the pty, no write under way.
func (c *Cmd) drain(max time.Duration) {
	if c.master != nil {
		ptyrelay.DrainPty(c.master, func() bool { return c.busy.Load() != 0 }, max)
	}
}

func (c *Cmd) closeAll() {
	for _, f := range c.closers {
		f.Close()
	}
	c.closers = nil
}

// Signal sends sig to the command's process group. SIGKILL ends all the
// command started, whatever group or session it moved to: its cgroup where
// it has one, else every process found to come from it in /proc (README:
// jail exec).
func (c *Cmd) Signal(sig os.Signal) error {
	if c.conn == nil {
		return errors.New("not started")
	}
	s, ok := sig.(syscall.Signal)
	if !ok {
		return fmt.Errorf("unsupported signal %v", sig)
	}
	return c.conn.Send(session.Request{Op: session.OpSignal, Signal: int(s)})
}

// Wait waits for the command to end and for its output to be copied. The
// error is nil for exit code 0, an *ExitError otherwise.
func (c *Cmd) Wait() error {
	if c.conn == nil {
		return errors.New("not started")
	}
	if c.waited {
		return errors.New("Wait was already called")
	}
	c.waited = true
	r := <-c.exit
	c.copies.Wait()
	for _, f := range c.after {
		f.Close()
	}
	c.conn.Close()
	if r.Code == 0 && r.Signal == 0 {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		return nil
	}
	return &ExitError{Code: r.Code, Signal: r.Signal}
}

// Running lists this user's running sandboxes.
func Running() ([]session.Info, error) {
	es, err := sandbox.List()
	if err != nil {
		return nil, err
	}
	out := make([]session.Info, 0, len(es))
	for _, e := range es {
		in := session.Info{Name: e.Name, ID: e.ID, Pid: e.Pid, Started: e.Started.Format(time.RFC3339), Command: e.Command,
			Workspace: e.Workspace, Net: e.Net, Audit: e.Audit, Log: e.Log, Control: e.Control, State: "running"}
		if e.Control != "" {
			s := &Sandbox{info: in}
			if live, err := s.Inspect(); err == nil {
				in = *live
			}
		}
		out = append(out, in)
	}
	return out, nil
}

// Terminal is an attachment to the terminal a sandbox keeps (Options.Tty;
// jail attach): what is written goes to the command's terminal as typed,
// CopyTo gets what it prints. One client at a time: a later Attach takes
// over. No fd crosses: the caller's terminal never reaches the sandbox.
type Terminal struct {
	conn    *session.Conn
	mu      sync.Mutex
	done    bool
	notice  func(line string)
	suspend func() bool
}

// Attach attaches to the sandbox's kept terminal.
func (s *Sandbox) Attach() (*Terminal, error) {
	c, err := session.Dial(s.info.Control)
	if err != nil {
		return nil, s.goneErr(err)
	}
	_ = c.Unix().SetDeadline(time.Now().Add(10 * time.Second))
	// Suspends: the command's stops come to the client (OnSuspend; without
	// it the command is continued at once, as before).
	if err := c.Send(session.Request{Op: session.OpAttach, Suspends: true}); err != nil {
		c.Close()
		return nil, err
	}
	var rep session.Reply
	if _, err := c.Recv(&rep); err != nil {
		c.Close()
		return nil, s.goneErr(err)
	}
	if rep.Event != session.EventAttached {
		c.Close()
		return nil, fmt.Errorf("attach: %s", rep.Error)
	}
	_ = c.Unix().SetDeadline(time.Time{})
	return &Terminal{conn: c}, nil
}

func (t *Terminal) send(q session.Request) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return ErrDetached
	}
	return t.conn.Send(q)
}

// Write sends p to the command's terminal, as if typed.
func (t *Terminal) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if err := t.send(session.Request{Op: session.OpInput, Data: p}); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Resize sets the terminal's size (the command gets SIGWINCH).
func (t *Terminal) Resize(rows, cols uint16) error {
	return t.send(session.Request{Op: session.OpResize, Rows: rows, Cols: cols})
}

// Detach lets go of the terminal; the command runs on, its output going
// to the log. CopyTo then returns ErrDetached.
func (t *Terminal) Detach() error {
	t.mu.Lock()
	t.done = true
	t.mu.Unlock()
	return t.conn.Unix().CloseWrite()
}

// OnNotice sets what CopyTo does with jail's urgent notices (a mask the
// host took away while the sandbox runs: the user should hear of it now,
// to end the run in time): fn gets each line ("jail: " and the text, with
// no control character), from CopyTo's goroutine, between two of its
// writes to w. Those said before the attach come first. Without it they
// are dropped here (the sandbox's log and audit trail have them). Set it
// before CopyTo.
func (t *Terminal) OnNotice(fn func(line string)) { t.notice = fn }

// OnSuspend sets what CopyTo does when the command stops (Ctrl-Z typed on
// a cooked terminal, or its own suspend key): the background sandbox has
// no shell to resume it, so the caller is asked to stop as a job of its
// own shell and return once continued (then the command is continued and
// redraws); false, or no fn, continues the command at once. Its output
// before the stop has come to CopyTo's writer first. Called from CopyTo's
// goroutine. Set it before CopyTo.
func (t *Terminal) OnSuspend(fn func() bool) { t.suspend = fn }

// CopyTo writes what the terminal prints to w until the command ends (nil
// for exit 0, else an *ExitError), Detach (ErrDetached), or another
// client's Attach (ErrTakenOver).
func (t *Terminal) CopyTo(w io.Writer) error {
	defer t.conn.Close()
	for {
		var rep session.Reply
		if _, err := t.conn.Recv(&rep); err != nil {
			t.mu.Lock()
			detached := t.done
			t.mu.Unlock()
			if detached {
				return ErrDetached
			}
			return ErrGone
		}
		switch rep.Event {
		case session.EventOutput:
			if _, err := w.Write(rep.Data); err != nil {
				return err
			}
		case session.EventNotice:
			if t.notice != nil {
				// The supervisor escaped it; escaped again (a no-op then),
				// so that no byte of the wire reaches a terminal raw.
				t.notice(termsafe.Escape(string(rep.Data)))
			}
		case session.EventSuspend:
			stopped := t.suspend != nil && t.suspend()
			_ = t.send(session.Request{Op: session.OpSuspended, Declined: !stopped})
		case session.EventDetached:
			return ErrTakenOver
		case session.EventExit:
			if rep.Code == 0 {
				return nil
			}
			return &ExitError{Code: rep.Code}
		}
	}
}
