//go:build !linux

package maskwatch

import "errors"

// Watch is Linux-only; elsewhere it does nothing.
type Watch struct{}

// Before is Linux-only.
type Before struct{}

// Identify returns nothing to compare with.
func Identify([]Path) *Before { return nil }

// Start fails: inotify is Linux's.
func Start(Config) (*Watch, error) { return nil, errors.New("maskwatch: Linux only") }

// Unwatch does nothing.
func (w *Watch) Unwatch() {}

// CloseLater returns a close that does nothing.
func (w *Watch) CloseLater() func() { return func() {} }

// Watches reports no watch.
func (w *Watch) Watches() int { return 0 }

// Unwatched reports nothing.
func (w *Watch) Unwatched() []Unwatched { return nil }
