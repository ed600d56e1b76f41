//go:build !linux

package jail

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/session"
)

// Init does nothing outside Linux.
func Init() {}

// Sandbox is Linux-only.
type Sandbox struct{}

// Start is Linux-only.
func Start(context.Context, *policy.Policy, Options) (*Sandbox, error) { return nil, ErrUnsupported }

// Open is Linux-only.
func Open(string) (*Sandbox, error) { return nil, ErrUnsupported }

// Running is Linux-only.
func Running() ([]session.Info, error) { return nil, ErrUnsupported }

// Name is Linux-only.
func (s *Sandbox) Name() string { return "" }

// ID is Linux-only.
func (s *Sandbox) ID() string { return "" }

// TrailPath is Linux-only.
func (s *Sandbox) TrailPath() string { return "" }

// LogPath is Linux-only.
func (s *Sandbox) LogPath() string { return "" }

// Events is Linux-only.
func (s *Sandbox) Events() ([]*audit.Record, error) { return nil, ErrUnsupported }

// Inspect is Linux-only.
func (s *Sandbox) Inspect() (*session.Info, error) { return nil, ErrUnsupported }

// Stop is Linux-only.
func (s *Sandbox) Stop() error { return ErrUnsupported }

// Kill is Linux-only.
func (s *Sandbox) Kill(string) error { return ErrUnsupported }

// Wait is Linux-only.
func (s *Sandbox) Wait(context.Context) (int, error) { return 0, ErrUnsupported }

// Close is Linux-only.
func (s *Sandbox) Close() error { return nil }

// Command is Linux-only.
func (s *Sandbox) Command(name string, args ...string) *Cmd {
	return &Cmd{Args: append([]string{name}, args...)}
}

// CommandContext is Linux-only.
func (s *Sandbox) CommandContext(_ context.Context, name string, args ...string) *Cmd {
	return s.Command(name, args...)
}

// Cmd is a command run in a sandbox (Linux-only).
type Cmd struct {
	Args           []string
	Env            []string
	Dir            string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Tty            bool
	OnNotice       func(line string)
	OnTimely       func(line string)
	OnStopKey      func() bool
	OnSuspend      func() bool
}

// TerminalFilter is jail's terminal filter on w (Linux-only).
func (s *Sandbox) TerminalFilter(w io.Writer) (io.Writer, error) { return nil, ErrUnsupported }

// Pid is Linux-only.
func (c *Cmd) Pid() int { return 0 }

// Run is Linux-only.
func (c *Cmd) Run() error { return ErrUnsupported }

// Start is Linux-only.
func (c *Cmd) Start() error { return ErrUnsupported }

// Wait is Linux-only.
func (c *Cmd) Wait() error { return ErrUnsupported }

// Output is Linux-only.
func (c *Cmd) Output() ([]byte, error) { return nil, ErrUnsupported }

// CombinedOutput is Linux-only.
func (c *Cmd) CombinedOutput() ([]byte, error) { return nil, ErrUnsupported }

// Signal is Linux-only.
func (c *Cmd) Signal(os.Signal) error { return ErrUnsupported }

// Resize is Linux-only.
func (c *Cmd) Resize(rows, cols uint16) error { return ErrUnsupported }

// ErrGone is returned for a sandbox that is no longer running.
var ErrGone = errors.New("the sandbox is not running")

// Terminal is an attachment to a sandbox's kept terminal (Linux only).
type Terminal struct{}

// Attach attaches to the sandbox's kept terminal.
func (s *Sandbox) Attach() (*Terminal, error) { return nil, ErrUnsupported }

// Write sends p to the command's terminal.
func (t *Terminal) Write(p []byte) (int, error) { return 0, ErrUnsupported }

// Resize sets the terminal's size.
func (t *Terminal) Resize(rows, cols uint16) error { return ErrUnsupported }

// Detach lets go of the terminal.
func (t *Terminal) Detach() error { return ErrUnsupported }

// CopyTo writes what the terminal prints to w.
func (t *Terminal) CopyTo(w io.Writer) error { return ErrUnsupported }

// OnNotice sets what CopyTo does with jail's urgent notices.
func (t *Terminal) OnNotice(fn func(line string)) {}

// OnSuspend is Linux-only.
func (t *Terminal) OnSuspend(fn func() bool) {}
