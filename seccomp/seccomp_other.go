//go:build !linux

package seccomp

import (
	"context"
	"os"
)

// Install is Linux-only.
func Install(cfg Config) (*os.File, Report, error) {
	return nil, Report{Reason: "seccomp needs Linux"}, ErrUnsupported
}

// Serve is Linux-only.
func Serve(ctx context.Context, listener *os.File, guard *Guard, onExec func(*ExecEvent)) error {
	return ErrUnsupported
}

// ServeFirst is Linux-only.
func ServeFirst(ctx context.Context, listener *os.File, guard *Guard, first func() *ExecEvent, onExec func(*ExecEvent)) error {
	return ErrUnsupported
}

// ServeWith is Linux-only.
func ServeWith(ctx context.Context, listener *os.File, h Handlers) error {
	return ErrUnsupported
}

// Held is Linux-only.
type Held struct{}

// Waiting is Linux-only.
func (h *Held) Waiting() bool { return false }

// Continue is Linux-only.
func (h *Held) Continue() error { return ErrUnsupported }

// ProbeNotify is Linux-only.
func ProbeNotify() error { return ErrUnsupported }

// InstallAgent is Linux-only.
func InstallAgent() error { return ErrUnsupported }
