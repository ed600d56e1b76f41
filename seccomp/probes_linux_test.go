package seccomp

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/seccomp/internal/int80"
)

func rawErr(r1, _ uintptr, e syscall.Errno) error {
	if e != 0 {
		return e
	}
	if int(r1) > 2 { // an fd we do not need
		unix.Close(int(r1))
	}
	return nil
}

// int80Err maps the raw eax of an i386 call to an error.
func int80Err(r uintptr) error {
	if v := int32(r); v < 0 && v > -4096 {
		return syscall.Errno(-v)
	}
	return nil
}

// openCttyPty opens a new pty pair and makes the slave our controlling
// terminal (TIOCSTI is refused for a foreign tty regardless of seccomp).
func openCttyPty() (int, error) {
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		return -1, err
	}
	s, err := unix.IoctlRetInt(m, unix.TIOCGPTPEER)
	if err != nil {
		// TIOCGPTPEER takes flags in arg; retry the classic way.
		n, err2 := unix.IoctlGetInt(m, unix.TIOCGPTN)
		if err2 != nil {
			return -1, err
		}
		s, err = unix.Open("/dev/pts/"+itoa(n), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
	}
	if _, err := unix.Setsid(); err != nil {
		return -1, err
	}
	if err := unix.IoctlSetInt(s, unix.TIOCSCTTY, 0); err != nil {
		return -1, err
	}
	return s, nil
}

func itoa(n int) string { return strconv.Itoa(n) }

func socketRaw(family, typ, proto uint64) error {
	return rawErr(unix.RawSyscall(unix.SYS_SOCKET, uintptr(family), uintptr(typ), uintptr(proto)))
}

// setsockoptRaw sets the int option level/opt (plus high, set in both
// words' high halves) to 1 on a fresh UDP socket.
func setsockoptRaw(level, opt, high uint64) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return errors.New("socket: " + err.Error())
	}
	defer unix.Close(fd)
	one := int32(1)
	_, _, e := unix.RawSyscall6(unix.SYS_SETSOCKOPT, uintptr(fd), uintptr(high|level), uintptr(high|opt),
		uintptr(unsafe.Pointer(&one)), 4, 0)
	if e != 0 {
		return e
	}
	return nil
}

// attachFilter attaches a one-instruction classic BPF program (accept
// everything) with setsockopt(SOL_SOCKET, opt) on a fresh UDP socket;
// high is set in the level's and opt's high words (the kernel truncates
// both to int). reuseport sets SO_REUSEPORT first, as its filters need.
func attachFilter(opt, high uint64, reuseport bool) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return errors.New("socket: " + err.Error())
	}
	defer unix.Close(fd)
	if reuseport {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
			return errors.New("SO_REUSEPORT: " + err.Error())
		}
	}
	ins := []unix.SockFilter{{Code: 0x06, K: 0xffff}} // BPF_RET|BPF_K
	prog := unix.SockFprog{Len: uint16(len(ins)), Filter: &ins[0]}
	_, _, e := unix.RawSyscall6(unix.SYS_SETSOCKOPT, uintptr(fd), uintptr(high|unix.SOL_SOCKET), uintptr(high|opt),
		uintptr(unsafe.Pointer(&prog)), unsafe.Sizeof(prog), 0)
	runtime.KeepAlive(ins)
	if e != 0 {
		return e
	}
	return nil
}

// socketpairRaw is socketpair(2) with raw arguments; it closes the pair.
func socketpairRaw(family, typ, proto uint64) error {
	var fds [2]int32
	_, _, e := unix.RawSyscall6(unix.SYS_SOCKETPAIR, uintptr(family), uintptr(typ), uintptr(proto),
		uintptr(unsafe.Pointer(&fds[0])), 0, 0)
	if e != 0 {
		return e
	}
	unix.Close(int(fds[0]))
	unix.Close(int(fds[1]))
	return nil
}

const hi = uint64(1) << 32 // set in the high word: a 64-bit compare misses

// probes: each attacks one rule. Run in a child by runProbe.
var probes = map[string]func() error{
	"i386-getpid": func() error { return int80Err(int80.Syscall(int80.SysGetpid, 0, 0, 0)) },
	"i386-unshare": func() error {
		return int80Err(int80.Syscall(int80.SysUnshare, unix.CLONE_NEWUSER, 0, 0))
	},
	"x32-getpid": func() error {
		_, _, e := unix.RawSyscall(unix.SYS_GETPID|x32Bit, 0, 0, 0)
		if e != 0 {
			return e
		}
		return nil
	},
	"unshare-newuser": func() error { return unix.Unshare(unix.CLONE_NEWUSER) },
	"unshare-newnet": func() error {
		runtime.LockOSThread() // the child exits right after; never unlock
		return unix.Unshare(unix.CLONE_NEWNET)
	},
	"clone-newuser": func() error {
		cmd := exec.Command("/bin/true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
		return cmd.Run()
	},
	"clone-plain": func() error { return exec.Command("/bin/true").Run() },
	"clone3": func() error {
		return rawErr(unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0))
	},
	"setns": func() error {
		runtime.LockOSThread()
		fd, err := unix.Open("/proc/self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		return unix.Setns(fd, unix.CLONE_NEWNET)
	},
	"mount": func() error {
		dir, err := os.MkdirTemp("", "jail-seccomp-mount")
		if err != nil {
			return err
		}
		defer os.Remove(dir)
		err = unix.Mount("jailtest", dir, "tmpfs", 0, "size=1m")
		if err == nil {
			unix.Unmount(dir, unix.MNT_DETACH)
		}
		return err
	},
	"chroot": func() error { return unix.Chroot("/") },
	"fsopen": func() error {
		fd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
		if err == nil {
			unix.Close(fd)
		}
		return err
	},
	"open_tree": func() error {
		fd, err := unix.OpenTree(unix.AT_FDCWD, "/tmp", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if err == nil {
			unix.Close(fd)
		}
		return err
	},
	"open_tree_attr": func() error {
		// open_tree's twin (Linux 6.15): without OPEN_TREE_CLONE it needs no
		// capability, so it answers even where open_tree's clone would not.
		dirfd := unix.AT_FDCWD
		return rawErr(unix.RawSyscall6(unix.SYS_OPEN_TREE_ATTR, uintptr(dirfd),
			uintptr(unsafe.Pointer(&[]byte("/tmp\x00")[0])), unix.OPEN_TREE_CLOEXEC, 0, 0, 0))
	},
	"file_getattr": func() error {
		// Linux 6.17, above lastReviewedNr: unknown to the filter, which
		// answers ENOSYS. struct file_attr, first version: 24 bytes.
		var attr [24]byte
		dirfd := unix.AT_FDCWD
		return rawErr(unix.RawSyscall6(468, uintptr(dirfd), uintptr(unsafe.Pointer(&[]byte("/\x00")[0])),
			uintptr(unsafe.Pointer(&attr[0])), uintptr(len(attr)), 0, 0))
	},
	"modify_ldt": func() error {
		if runtime.GOARCH != "amd64" {
			return nil // x86 only: the probe is skipped elsewhere
		}
		var buf [16]byte // func 0 reads the LDT: works unprivileged
		return rawErr(unix.RawSyscall(154, 0, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))))
	},
	"io_uring_setup": func() error {
		var params [120]byte // struct io_uring_params
		return rawErr(unix.RawSyscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0))
	},
	"keyctl": func() error {
		_, err := unix.KeyctlInt(unix.KEYCTL_GET_KEYRING_ID, unix.KEY_SPEC_PROCESS_KEYRING, 1, 0, 0)
		return err
	},
	"add_key": func() error {
		_, err := unix.AddKey("user", "jail-seccomp-test", []byte("x"), unix.KEY_SPEC_PROCESS_KEYRING)
		return err
	},
	"bpf": func() error {
		// An unknown command: EINVAL from the kernel, EPERM from the filter.
		return rawErr(unix.RawSyscall(unix.SYS_BPF, 0xffff, 0, 0))
	},
	"perf_event_open": func() error {
		attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_TASK_CLOCK,
			Bits: unix.PerfBitDisabled | unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv}
		attr.Size = uint32(unsafe.Sizeof(attr))
		fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err == nil {
			unix.Close(fd)
		}
		return err
	},
	"userfaultfd": func() error {
		const uffdUserModeOnly = 1
		return rawErr(unix.RawSyscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC|uffdUserModeOnly, 0, 0))
	},
	"socket-vsock":          func() error { return socketRaw(unix.AF_VSOCK, unix.SOCK_STREAM, 0) },
	"socket-vsock-highbits": func() error { return socketRaw(hi|unix.AF_VSOCK, unix.SOCK_STREAM, 0) },
	"socket-packet":         func() error { return socketRaw(unix.AF_PACKET, unix.SOCK_RAW, 0x0300) },
	"socket-raw-icmp":       func() error { return socketRaw(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMP) },
	"socket-raw-highbits":   func() error { return socketRaw(unix.AF_INET6, hi|unix.SOCK_RAW, unix.IPPROTO_ICMPV6) },
	"socket-netfilter":      func() error { return socketRaw(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_NETFILTER) },
	"socket-netfilter-highbits": func() error {
		return socketRaw(unix.AF_NETLINK, unix.SOCK_RAW, hi|unix.NETLINK_NETFILTER)
	},
	"socket-alg": func() error { return socketRaw(unix.AF_ALG, unix.SOCK_SEQPACKET, 0) },
	// Classic BPF socket filters reach the kernel's BPF JIT (cBPF is
	// converted to eBPF and compiled) from any unprivileged socket.
	"so-attach-filter":          func() error { return attachFilter(unix.SO_ATTACH_FILTER, 0, false) },
	"so-attach-filter-highbits": func() error { return attachFilter(unix.SO_ATTACH_FILTER, hi, false) },
	"so-attach-reuseport-cbpf":  func() error { return attachFilter(unix.SO_ATTACH_REUSEPORT_CBPF, 0, true) },
	"so-reuseaddr":              func() error { return setsockoptRaw(unix.SOL_SOCKET, unix.SO_REUSEADDR, 0) },
	"socket-route":              func() error { return socketRaw(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE) },
	"socket-tcp":                func() error { return socketRaw(unix.AF_INET6, unix.SOCK_STREAM, 0) },
	"socket-unix":               func() error { return socketRaw(unix.AF_UNIX, unix.SOCK_STREAM, 0) },
	"socket-icmpdgr":            func() error { return socketRaw(unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP) },
	// MPTCP: Landlock's TCP rules check IPPROTO_TCP sockets only.
	"socket-mptcp":          func() error { return socketRaw(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP) },
	"socket-mptcp-highbits": func() error { return socketRaw(unix.AF_INET6, unix.SOCK_STREAM, hi|unix.IPPROTO_MPTCP) },
	// SMC through AF_INET (Linux 6.11): without the rule, ok where the
	// kernel has SMC (its module autoloads), EPROTONOSUPPORT elsewhere.
	"socket-smc":          func() error { return socketRaw(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SMC) },
	"socket-smc-highbits": func() error { return socketRaw(unix.AF_INET6, unix.SOCK_STREAM, hi|unix.IPPROTO_SMC) },
	// io_uring's IORING_OP_SOCKET (5.19+) makes a socket without socket(2):
	// seccomp never sees its family or protocol.
	"uring-socket-mptcp": func() error { return uringSocket(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP) },
	"uring-socket-vsock": func() error { return uringSocket(unix.AF_VSOCK, unix.SOCK_STREAM, 0) },
	// socketpair creates its sockets through the same family code as
	// socket(2) (and autoloads the family's module): TIPC implements it.
	"socketpair-tipc":           func() error { return socketpairRaw(unix.AF_TIPC, unix.SOCK_SEQPACKET, 0) },
	"socketpair-vsock":          func() error { return socketpairRaw(unix.AF_VSOCK, unix.SOCK_STREAM, 0) },
	"socketpair-vsock-highbits": func() error { return socketpairRaw(hi|unix.AF_VSOCK, unix.SOCK_STREAM, 0) },
	"socketpair-unix":           func() error { return socketpairRaw(unix.AF_UNIX, unix.SOCK_STREAM, 0) },
	"ptrace": func() error {
		runtime.LockOSThread() // the tracer is a thread
		cmd := exec.Command("/bin/sleep", "30")
		if err := cmd.Start(); err != nil {
			return err
		}
		defer func() { cmd.Process.Kill(); cmd.Wait() }()
		return unix.PtraceAttach(cmd.Process.Pid)
	},
	"process_vm_readv": func() error {
		src := []byte("secret")
		dst := make([]byte, len(src))
		_, err := unix.ProcessVMReadv(os.Getpid(),
			[]unix.Iovec{{Base: &dst[0], Len: uint64(len(dst))}},
			[]unix.RemoteIovec{{Base: uintptr(unsafe.Pointer(&src[0])), Len: len(src)}}, 0)
		return err
	},
	"personality": func() error {
		return rawErr(unix.RawSyscall(unix.SYS_PERSONALITY, 0x0400000, 0, 0)) // READ_IMPLIES_EXEC
	},
	"personality-highbits": func() error {
		return rawErr(unix.RawSyscall(unix.SYS_PERSONALITY, uintptr(hi|0x0400000), 0, 0))
	},
	"personality-query": func() error {
		return rawErr(unix.RawSyscall(unix.SYS_PERSONALITY, 0xffffffff, 0, 0))
	},
	"tiocsti": func() error {
		s, err := openCttyPty()
		if err != nil {
			return errors.New("pty setup: " + err.Error())
		}
		c := byte('x')
		return rawErr(unix.Syscall(unix.SYS_IOCTL, uintptr(s), unix.TIOCSTI, uintptr(unsafe.Pointer(&c))))
	},
	"tiocsti-highbits": func() error {
		s, err := openCttyPty()
		if err != nil {
			return errors.New("pty setup: " + err.Error())
		}
		c := byte('x')
		return rawErr(unix.Syscall(unix.SYS_IOCTL, uintptr(s), uintptr(hi|unix.TIOCSTI), uintptr(unsafe.Pointer(&c))))
	},
	"tioclinux": func() error {
		s, err := openCttyPty()
		if err != nil {
			return errors.New("pty setup: " + err.Error())
		}
		sub := byte(6) // TIOCL_GETSHIFTSTATE
		return rawErr(unix.Syscall(unix.SYS_IOCTL, uintptr(s), uintptr(hi|unix.TIOCLINUX), uintptr(unsafe.Pointer(&sub))))
	},
	"tiocsetd": func() error {
		s, err := openCttyPty()
		if err != nil {
			return errors.New("pty setup: " + err.Error())
		}
		// N_TTY: the line discipline a pty already has, so the kernel
		// answers ok without the rule (any other autoloads a module).
		ldisc := int32(0)
		return rawErr(unix.Syscall(unix.SYS_IOCTL, uintptr(s), uintptr(hi|unix.TIOCSETD), uintptr(unsafe.Pointer(&ldisc))))
	},
	"tcxonc": func() error {
		s, err := openCttyPty()
		if err != nil {
			return errors.New("pty setup: " + err.Error())
		}
		// TCION: sends the START character (^Q) to the pty's master,
		// which nobody reads; the kernel answers ok without the rule.
		return rawErr(unix.Syscall(unix.SYS_IOCTL, uintptr(s), uintptr(hi|unix.TCXONC), uintptr(unix.TCION)))
	},
	"tiocexcl": func() error {
		s, err := openCttyPty()
		if err != nil {
			return errors.New("pty setup: " + err.Error())
		}
		return rawErr(unix.Syscall(unix.SYS_IOCTL, uintptr(s), uintptr(hi|unix.TIOCEXCL), 0))
	},
	"status": func() error {
		b, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return err
		}
		if !bytes.Contains(b, []byte("\nSeccomp:\t2\n")) || !bytes.Contains(b, []byte("\nNoNewPrivs:\t1\n")) {
			return errors.New("status lacks Seccomp: 2 / NoNewPrivs: 1")
		}
		return nil
	},
}

// uringSocket makes a socket through io_uring's IORING_OP_SOCKET: one ring,
// one submission, one completion. Its error is io_uring_setup's or the
// completion's.
func uringSocket(family, typ, proto uint32) error {
	// struct io_uring_params: sq_entries, cq_entries (0, 4), then the SQ
	// ring offsets at 40 (head, tail, ring_mask, ring_entries, flags,
	// dropped, array) and the CQ ring offsets at 80 (head, tail,
	// ring_mask, ring_entries, overflow, cqes).
	var params [120]byte
	fd, _, e := unix.RawSyscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params[0])), 0)
	if e != 0 {
		return e
	}
	defer unix.Close(int(fd))
	u32 := func(b []byte, off int) uint32 { return *(*uint32)(unsafe.Pointer(&b[off])) }
	sqEntries, cqEntries := u32(params[:], 0), u32(params[:], 4)
	sqTail, sqArray := u32(params[:], 44), u32(params[:], 64)
	cqHead, cqes := u32(params[:], 80), u32(params[:], 100)
	size := max(int(sqArray+4*sqEntries), int(cqes+16*cqEntries))
	ring, err := unix.Mmap(int(fd), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return err
	}
	defer unix.Munmap(ring)
	sqes, err := unix.Mmap(int(fd), 0x10000000, 64*int(sqEntries), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return err
	}
	defer unix.Munmap(sqes)
	// struct io_uring_sqe: opcode at 0 (IORING_OP_SOCKET = 45), fd at 4
	// (the family), off at 8 (the type), len at 24 (the protocol).
	sqe := sqes[:64]
	clear(sqe)
	sqe[0] = 45
	*(*uint32)(unsafe.Pointer(&sqe[4])) = family
	*(*uint64)(unsafe.Pointer(&sqe[8])) = uint64(typ)
	*(*uint32)(unsafe.Pointer(&sqe[24])) = proto
	*(*uint32)(unsafe.Pointer(&ring[sqArray])) = 0
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&ring[sqTail])), 1)
	const enterGetEvents = 1
	if _, _, e := unix.Syscall6(unix.SYS_IO_URING_ENTER, fd, 1, 1, enterGetEvents, 0, 0); e != 0 {
		return e
	}
	head := atomic.LoadUint32((*uint32)(unsafe.Pointer(&ring[cqHead])))
	// struct io_uring_cqe: user_data, res (int32 at 8), flags; 16 bytes.
	res := *(*int32)(unsafe.Pointer(&ring[int(cqes)+16*int(head&(cqEntries-1))+8]))
	if res < 0 {
		return syscall.Errno(-res)
	}
	unix.Close(int(res))
	return nil
}
