//go:build !linux

package ptyrelay

import (
	"errors"
	"io"
	"os"
	"time"
)

// Relay is Linux-only; this stub keeps the package building elsewhere.
type Relay struct {
	Pty       *os.File
	In        *os.File
	Out       io.Writer
	OnKillKey func()
}

// Start fails: there is no sandbox pty outside Linux.
func (r *Relay) Start() error          { return errors.New("ptyrelay: Linux only") }
func (r *Relay) Done() <-chan struct{} { return nil }
func (r *Relay) Raw() error            { return nil }
func (r *Relay) Restore()              {}
func (r *Relay) Drain(time.Duration)   {}
func (r *Relay) Lost() (int64, error)  { return 0, nil }
func (r *Relay) Written() int64        { return 0 }
func (r *Relay) Pending() int          { return -1 }
