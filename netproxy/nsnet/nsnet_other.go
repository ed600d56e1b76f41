//go:build !linux

package nsnet

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"runtime"
)

// Setup is Linux-only.
func Setup(cfg Config) (*Result, error) {
	return nil, fmt.Errorf("nsnet: setup on %s: %w (run jail on Linux)", runtime.GOOS, ErrUnsupported)
}

// SetupNone is Linux-only.
func SetupNone(fake netip.Prefix) (*Result, error) {
	return nil, fmt.Errorf("nsnet: setup on %s: %w (run jail on Linux)", runtime.GOOS, ErrUnsupported)
}

// DialInSandbox is Linux-only.
func DialInSandbox(ctx context.Context, port uint16, sandboxAddr netip.Addr) (*os.File, error) {
	return nil, fmt.Errorf("nsnet: dial in sandbox on %s: %w", runtime.GOOS, ErrUnsupported)
}

// Probe is Linux-only.
func Probe() error {
	return fmt.Errorf("nsnet: probe on %s: %w", runtime.GOOS, ErrUnsupported)
}
