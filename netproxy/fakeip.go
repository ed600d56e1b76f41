package netproxy

import (
	"errors"
	"net/netip"
	"sync"
)

// FakeRange is where DNS draws fake addresses from: 198.18.0.0/15 (RFC 2544
// benchmarking space), which no real service uses, so a flow to it can only be
// a flow to a name jail's DNS answered. Its lower half (AllowedRange) stands
// for names the policy lets through, its upper half (RefusedRange) for names
// it refuses.
var FakeRange = netip.MustParsePrefix("198.18.0.0/15")

// AllowedRange holds the fake addresses of names that may be reached (on some
// port); RefusedRange those of names that may not. A refused name gets an
// address too, so that the client connects and jail can say "refused" in the
// client's own protocol (an HTTP 403, a TLS alert) instead of NXDOMAIN, which
// clients such as npm retry for more than a minute. A flow to RefusedRange is
// refused by its range alone: no name, port or policy lookup can let it out.
var (
	AllowedRange = netip.MustParsePrefix("198.18.0.0/16")
	RefusedRange = netip.MustParsePrefix("198.19.0.0/16")
)

// ErrFakeRangeFull is returned when every allowed fake address is in use
// (65534 distinct allowed names in one run).
var ErrFakeRangeFull = errors.New("fake address range exhausted")

// FakeIPs is the table of fake address <-> name shared by DNS (which fills
// it) and Proxy (which reads it). Allowed addresses are stable for the life of
// the table: a name keeps its address, an address never changes its name.
// Refused addresses are recycled, oldest first, once RefusedRange is used up:
// they only ever name a refusal, so reuse can at worst name an older refused
// name in a message, never let a flow through.
type FakeIPs struct {
	mu     sync.RWMutex
	next   netip.Addr // next allowed address
	byName map[string]netip.Addr
	byAddr map[netip.Addr]string

	refNext   netip.Addr // next refused address (wraps)
	refByName map[string]netip.Addr
	refByAddr map[netip.Addr]string
}

// NewFakeIPs returns an empty table over FakeRange.
func NewFakeIPs() *FakeIPs {
	return &FakeIPs{
		next:      AllowedRange.Addr().Next(), // skip the network address 198.18.0.0
		byName:    map[string]netip.Addr{},
		byAddr:    map[netip.Addr]string{},
		refNext:   RefusedRange.Addr().Next(),
		refByName: map[string]netip.Addr{},
		refByAddr: map[netip.Addr]string{},
	}
}

// Assign returns the fake address for a normalized name the policy lets
// through, allocating one the first time.
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
	// Never hand out the broadcast-looking last address 198.18.255.255.
	if !AllowedRange.Contains(a) || !AllowedRange.Contains(a.Next()) {
		return netip.Addr{}, ErrFakeRangeFull
	}
	f.next = a.Next()
	f.byName[name] = a
	f.byAddr[a] = name
	return a, nil
}

// AssignRefused returns the address in RefusedRange that stands for a
// normalized name the policy refuses. It never fails: past 65534 names the
// oldest address is taken over.
func (f *FakeIPs) AssignRefused(name string) netip.Addr {
	f.mu.Lock()
	defer f.mu.Unlock()
	if a, ok := f.refByName[name]; ok {
		return a
	}
	a := f.refNext
	if old, ok := f.refByAddr[a]; ok {
		delete(f.refByName, old)
	}
	f.refNext = a.Next()
	if !RefusedRange.Contains(f.refNext.Next()) { // keep off 198.19.255.255
		f.refNext = RefusedRange.Addr().Next()
	}
	f.refByName[name] = a
	f.refByAddr[a] = name
	return a
}

// Lookup returns the name a fake address (allowed or refused) stands for.
func (f *FakeIPs) Lookup(a netip.Addr) (string, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	a = a.Unmap()
	if n, ok := f.byAddr[a]; ok {
		return n, true
	}
	n, ok := f.refByAddr[a]
	return n, ok
}

// Contains reports whether a is in the fake range (assigned or not).
func (f *FakeIPs) Contains(a netip.Addr) bool { return FakeRange.Contains(a.Unmap()) }

// Refused reports whether a is in RefusedRange: a flow to it is refused.
func (f *FakeIPs) Refused(a netip.Addr) bool { return RefusedRange.Contains(a.Unmap()) }

// Len returns the number of allowed names assigned.
func (f *FakeIPs) Len() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.byName)
}
