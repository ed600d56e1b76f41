//go:build !linux

package sentinel

import "errors"

// Sentinel is Linux-only; elsewhere it does nothing.
type Sentinel struct{ cfg Config }

// New makes a Sentinel that does nothing on this platform.
func New(cfg Config) *Sentinel { return &Sentinel{cfg: cfg} }

// Start fails: inotify and openat2 are Linux's.
func (s *Sentinel) Start() error { return errors.New("sentinel: Linux only") }

// Stop does nothing.
func (s *Sentinel) Stop() {}

// Unwatch does nothing.
func (s *Sentinel) Unwatch() {}

// Close does nothing.
func (s *Sentinel) Close() {}

// CloseLater does nothing and returns a close that does nothing.
func (s *Sentinel) CloseLater() func() { return func() {} }

// CheckAbsent does nothing.
func (s *Sentinel) CheckAbsent(phase string) {}

// Check does nothing.
func (s *Sentinel) Check(phase string) {}

// Quarantine does nothing.
func (s *Sentinel) Quarantine(items []Item, phase string) {}

// Watches reports no watches.
func (s *Sentinel) Watches() (int, bool) { return 0, false }
