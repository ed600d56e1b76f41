//go:build !linux

package sandbox

// No host sockets are listed here (hostsock.ErrUnsupported): no record.
func processLive(int, uint64) bool { return true }

func selfStartTick() uint64 { return 0 }
