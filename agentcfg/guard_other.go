//go:build !linux

package agentcfg

// Guard is unavailable off Linux (jail itself is Linux-only).
type Guard struct{}

// New reports ErrUnsupported.
func New(targets []Target, o Options) (*Guard, []string, error) { return nil, nil, ErrUnsupported }

// Targets returns nothing.
func (g *Guard) Targets() []Target { return nil }

// Watch reports ErrUnsupported.
func (g *Guard) Watch() error { return ErrUnsupported }

// Close does nothing.
func (g *Guard) Close() {}

// CloseLater does nothing and returns a close that does nothing.
func (g *Guard) CloseLater() func() { return func() {} }

// StopWatching does nothing.
func (g *Guard) StopWatching() {}

// Unwatch does nothing.
func (g *Guard) Unwatch() {}

// CheckNow does nothing.
func (g *Guard) CheckNow() {}

// Recover does nothing.
func Recover(o Options) {}

// Warm does nothing.
func Warm() {}

// Unguardable returns the targets as they are: nothing is guarded here.
func Unguardable(targets []Target) ([]Target, []Unguarded) { return targets, nil }
