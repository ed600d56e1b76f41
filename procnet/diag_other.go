//go:build !linux

package procnet

import (
	"errors"
	"net/netip"
)

func ownListeners() ([]netip.AddrPort, error) {
	return nil, errors.New("procnet: sock_diag is Linux-only")
}
