//go:build !linux

package netproxy

import "net"

// queued is Linux only; elsewhere a listener's queue goes with it.
func queued(net.Listener) []net.Conn { return nil }
