// Package procnet reads which TCP sockets listen in a network namespace,
// from the kernel (inet_diag for the caller's own, /proc/PID/net/tcp and
// tcp6 for another process's): a passive look (no connect to anyone's
// server) for the supervisor to say whether a server inside the sandbox,
// or on the host's loopback, listens at a port.
package procnet

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"os"
	"strconv"
)

// stateListen is TCP_LISTEN as the tables print it (the st column).
const stateListen = "0A"

// Listeners returns the local addresses of the TCP sockets that listen in
// the network namespace of process pid (0: the caller's, asked of the
// kernel's inet_diag, which walks only the listening sockets; /proc/PID's
// tables otherwise), IPv4 and IPv6; a table that cannot be read is
// skipped.
func Listeners(pid int) []netip.AddrPort {
	dir := "/proc/self/net/"
	if pid > 0 {
		dir = "/proc/" + strconv.Itoa(pid) + "/net/"
	} else if l, err := ownListeners(); err == nil {
		return l
	}
	var out []netip.AddrPort
	for _, f := range []string{"tcp", "tcp6"} {
		if b, err := os.ReadFile(dir + f); err == nil {
			out = append(out, Parse(b)...)
		}
	}
	return out
}

// Listens reports whether a TCP socket of pid's network namespace (0:
// the caller's) listens at port on an address where match holds (nil:
// any address).
func Listens(pid int, port uint16, match func(netip.Addr) bool) bool {
	for _, a := range Listeners(pid) {
		if a.Port() == port && (match == nil || match(a.Addr())) {
			return true
		}
	}
	return false
}

// Parse reads one table as /proc/net/tcp or tcp6 prints it ("sl
// local_address rem_address st ..." a line, addresses as the kernel's
// 32-bit words in hex, in the machine's byte order, then ":PORT" in hex)
// and returns the local addresses of the listening sockets. Lines it
// cannot read are skipped.
func Parse(b []byte) []netip.AddrPort {
	var out []netip.AddrPort
	for line := range bytes.Lines(b) {
		f := bytes.Fields(line)
		if len(f) < 4 || string(f[3]) != stateListen {
			continue
		}
		if a, ok := parseAddr(f[1]); ok {
			out = append(out, a)
		}
	}
	return out
}

// parseAddr reads ADDR:PORT as the tables print a socket's address.
func parseAddr(s []byte) (netip.AddrPort, bool) {
	i := bytes.IndexByte(s, ':')
	if i < 0 || len(s)-i-1 != 4 {
		return netip.AddrPort{}, false
	}
	port, err := strconv.ParseUint(string(s[i+1:]), 16, 16)
	if err != nil {
		return netip.AddrPort{}, false
	}
	raw := make([]byte, hex.DecodedLen(i))
	if len(raw) != 4 && len(raw) != 16 || i%2 != 0 {
		return netip.AddrPort{}, false
	}
	if _, err := hex.Decode(raw, s[:i]); err != nil {
		return netip.AddrPort{}, false
	}
	// Each 32-bit word was printed as a number: its bytes in memory order
	// are the address's.
	for w := 0; w < len(raw); w += 4 {
		binary.NativeEndian.PutUint32(raw[w:], binary.BigEndian.Uint32(raw[w:]))
	}
	a, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(a, uint16(port)), true
}
