package netproxy

import (
	"errors"
	"net/netip"
	"sync"
)

// FakeRange is where DNS draws fake addresses from: 198.18.0.0/15 (RFC 2544
// benchmarking space), which no real service uses, so a flow to it can only be
// a flow to a name jail's DNS answered.
var FakeRange = netip.MustParsePrefix("198.18.0.0/15")

// ErrFakeRangeFull is returned when every fake address is in use (131070
// distinct names in one run; only allowed names ever get one).
var ErrFakeRangeFull = errors.New("fake address range exhausted")

// FakeIPs is the table of fake address <-> name shared by DNS (which fills
// it) and Proxy (which reads it). Addresses are stable for the life of the
// table: a name keeps its address, an address never changes its name.
type FakeIPs struct {
	mu     sync.RWMutex
	prefix netip.Prefix
	next   netip.Addr
	byName map[string]netip.Addr
	byAddr map[netip.Addr]string
}

// NewFakeIPs returns an empty table over FakeRange.
func NewFakeIPs() *FakeIPs {
	return &FakeIPs{
		prefix: FakeRange,
		next:   FakeRange.Addr().Next(), // skip the network address 198.18.0.0
		byName: map[string]netip.Addr{},
		byAddr: map[netip.Addr]string{},
	}
}

// Assign returns the fake address for a normalized name, allocating one the
// first time.
func (f *FakeIPs) Assign(name string) (netip.Addr, error) {
	f.mu.RLock()
	a, ok := f.byName[name]
	f.mu.RUnlock()
	if ok {
		return a, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if a, ok := f.byName[name]; ok {
		return a, nil
	}
	a = f.next
	// Never hand out the broadcast-looking last address 198.19.255.255.
	if !f.prefix.Contains(a) || !f.prefix.Contains(a.Next()) {
		return netip.Addr{}, ErrFakeRangeFull
	}
	f.next = a.Next()
	f.byName[name] = a
	f.byAddr[a] = name
	return a, nil
}

// Lookup returns the name a fake address stands for.
func (f *FakeIPs) Lookup(a netip.Addr) (string, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	n, ok := f.byAddr[a.Unmap()]
	return n, ok
}

// Contains reports whether a is in the fake range (assigned or not).
func (f *FakeIPs) Contains(a netip.Addr) bool { return f.prefix.Contains(a.Unmap()) }

// Len returns the number of names assigned.
func (f *FakeIPs) Len() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.byName)
}
