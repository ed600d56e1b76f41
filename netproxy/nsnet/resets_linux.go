//go:build linux

package nsnet

import (
	"encoding/binary"
	"net/netip"
	"os"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// resetWatch opens the reset watch in S: a raw IPv4 socket for TCP
// (each packet from its IP header on) that receives, of all the TCP
// segments delivered in S, only the resets the kernel sends for connects
// to an address of fake at a port none of heard listens on, and for
// connects to the sandbox's own loopback (127.0.0.0/8) at a port nothing
// listens on (filterResets; fake may be the zero Prefix: loopback only).
// It needs CAP_NET_RAW in U (init, before the drop); the supervisor reads
// it (ParseReset), non-blocking so that its end can stop a read.
//
// Why not the exec audit's filter reporting connect: that made every
// connect a round trip to the supervisor (40 µs more for a loopback
// connect here, which test suites make by the thousand), where this
// filter runs in the kernel, and works without the exec audit too (WSL2,
// a nested sandbox). Why not a packet socket on lo: closing one waits for
// an RCU grace period (synchronize_net), 10 to 28 ms here at every run's
// end; a raw socket closes in microseconds.
func resetWatch(fake netip.Prefix, heard []uint16) (f *os.File, err error) {
	prog, err := filterResets(fake, heard)
	if err != nil {
		return nil, err
	}
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.IPPROTO_TCP)
	if err != nil {
		return nil, os.NewSyscallError("socket(raw tcp)", err)
	}
	defer func() {
		if err != nil {
			unix.Close(fd)
		}
	}()
	filters := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filters[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filters)), Filter: &filters[0]}
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fprog); err != nil {
		return nil, os.NewSyscallError("setsockopt(SO_ATTACH_FILTER)", err)
	}
	// Locked: the filter can never be detached or replaced.
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_LOCK_FILTER, 1); err != nil {
		return nil, os.NewSyscallError("setsockopt(SO_LOCK_FILTER)", err)
	}
	// What arrived before the filter did (nothing runs in S yet but init)
	// is dropped: only what the filter passed is ever read.
	var b [64]byte
	for {
		if _, _, err := unix.Recvfrom(fd, b[:], unix.MSG_DONTWAIT); err != nil {
			break
		}
	}
	return os.NewFile(uintptr(fd), "reset-watch"), nil
}

// filterResets is the reset watch's classic BPF program, run on each
// TCP segment delivered in S (from the IP header on): accept a TCP
// segment, not a fragment, with RST and ACK set, that is either
//
//   - from the loopback (127.0.0.0/8) with sequence number 0: the kernel's
//     answer to a SYN where nothing listens (RFC 9293 3.10.7.1; an
//     established connection's abort carries its own sequence number, and
//     a SYN-ACK's reset is from the client's port), which the supervisor
//     weighs against what the host's loopback offers at that port; or
//   - from an address of fake (IPv4, when fake is valid), from a port not
//     in heard;
//
// drop anything else.
func filterResets(fake netip.Prefix, heard []uint16) ([]bpf.Instruction, error) {
	if fake.IsValid() && !fake.Addr().Is4() {
		return nil, ErrBadSubnet
	}
	// Each test jumps to a label when it holds (drop, or loopback); the
	// skips are filled in once the program is laid out.
	const (
		toDrop = iota
		toLoop
	)
	var p []bpf.Instruction
	type jump struct{ at, to int }
	var jumps []jump
	jumpIf := func(to int, cond bpf.JumpTest, val uint32) {
		jumps = append(jumps, jump{len(p), to})
		p = append(p, bpf.JumpIf{Cond: cond, Val: val})
	}
	p = append(p, bpf.LoadAbsolute{Off: 9, Size: 1}) // protocol
	jumpIf(toDrop, bpf.JumpNotEqual, unix.IPPROTO_TCP)
	p = append(p, bpf.LoadAbsolute{Off: 6, Size: 2}) // flags and fragment offset
	jumpIf(toDrop, bpf.JumpBitsSet, 0x1fff)
	p = append(p, bpf.LoadMemShift{Off: 0})                                                                      // X: the IP header's length
	p = append(p, bpf.LoadIndirect{Off: 13, Size: 1}, bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: tcpRST | tcpACK}) // flags
	jumpIf(toDrop, bpf.JumpNotEqual, tcpRST|tcpACK)
	p = append(p, bpf.LoadAbsolute{Off: 12, Size: 4}, bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: 0xff000000}) // source address
	jumpIf(toLoop, bpf.JumpEqual, 0x7f000000)
	if fake.IsValid() {
		net4 := binary.BigEndian.Uint32(fake.Masked().Addr().AsSlice())
		mask := ^uint32(0) << (32 - fake.Bits())
		p = append(p, bpf.LoadAbsolute{Off: 12, Size: 4}, bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: mask})
		jumpIf(toDrop, bpf.JumpNotEqual, net4)
		p = append(p, bpf.LoadIndirect{Off: 0, Size: 2}) // the source port
		for _, port := range heard {
			jumpIf(toDrop, bpf.JumpEqual, uint32(port))
		}
		p = append(p, bpf.RetConstant{Val: 128}) // the IP and TCP headers are all ParseReset reads
	} else {
		p = append(p, bpf.RetConstant{Val: 0})
	}
	loop := len(p)
	p = append(p, bpf.LoadIndirect{Off: 4, Size: 4}) // the sequence number
	jumpIf(toDrop, bpf.JumpNotEqual, 0)
	p = append(p, bpf.RetConstant{Val: 128})
	drop := len(p)
	p = append(p, bpf.RetConstant{Val: 0})
	for _, j := range jumps {
		to := drop
		if j.to == toLoop {
			to = loop
		}
		in := p[j.at].(bpf.JumpIf)
		in.SkipTrue = uint8(to - j.at - 1)
		p[j.at] = in
	}
	return p, nil
}
