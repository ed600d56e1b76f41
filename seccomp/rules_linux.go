package seccomp

import (
	"fmt"
	"runtime"

	gobpf "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Return values (SECCOMP_RET_*). Errno is EPERM, ENOSYS where libc must
// fall back.
const (
	retAllow  = unix.SECCOMP_RET_ALLOW
	retKill   = unix.SECCOMP_RET_KILL_PROCESS
	retEPERM  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retENOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	retNotify = unix.SECCOMP_RET_USER_NOTIF

	x32Bit = 0x40000000 // __X32_SYSCALL_BIT

	// CLONE_NEW* bits a clone(2) flags word may carry. CLONE_NEWTIME
	// (0x80) is left out: in clone(2) that bit is part of the exit signal
	// (CSIGNAL); only unshare/clone3 accept NEWTIME, and both are denied.
	cloneNewMask = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS |
		unix.CLONE_NEWIPC | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET

	addrNoRandomize = 0x0040000 // personality(2) ADDR_NO_RANDOMIZE
)

type rule struct {
	names []string
	why   string
}

// denyEPERM: each group is refused with EPERM. Names missing on the native
// arch (iopl on arm64) are dropped: a syscall that does not exist cannot be
// called.
var denyEPERM = []rule{
	// New namespaces are how an unprivileged process becomes "root" over a
	// fresh kernel surface: CVE-2022-0185 (fsconfig), CVE-2023-32233 and
	// CVE-2024-1086 (nf_tables), CVE-2022-25636 all start with unshare.
	{[]string{"unshare", "setns"}, "new or foreign namespaces (userns -> CAP_SYS_ADMIN/NET_ADMIN LPEs; setns joins leaked /proc/*/ns fds)"},
	// Mount changes could unmask what jail hides (a tmpfs over ~/.ssh, a
	// read-only bind): umount2 of the mask reveals the file underneath.
	{[]string{"mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount",
		"fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr"}, "mount tree changes (unmask hidden paths, remount rw; CVE-2022-0185 in fsconfig)"},
	// Kernel keyrings are not namespaced: the user's session keyring is
	// shared with the host (docker denies them too; CVE-2016-0728).
	{[]string{"keyctl", "add_key", "request_key"}, "kernel keyrings (not namespaced; CVE-2016-0728)"},
	// eBPF verifier bugs are a steady LPE source (CVE-2021-3490,
	// CVE-2022-23222, CVE-2023-2163).
	{[]string{"bpf"}, "eBPF (verifier LPEs CVE-2021-3490, CVE-2022-23222)"},
	// perf: LPEs (CVE-2013-2094, CVE-2023-2235) and side channels.
	{[]string{"perf_event_open"}, "perf events (CVE-2013-2094, CVE-2023-2235; side channels)"},
	// userfaultfd stalls the kernel inside copy_from_user: the standard
	// tool for winning kernel races (used by many exploits).
	{[]string{"userfaultfd"}, "userfaultfd (makes kernel race exploits reliable)"},
	// io_uring: huge surface (CVE-2022-29582, CVE-2023-2598) and its
	// operations never pass through this filter at all.
	{[]string{"io_uring_setup", "io_uring_enter", "io_uring_register"}, "io_uring (CVE-2022-29582, CVE-2023-2598; its ops bypass seccomp)"},
	// Loading code into the kernel (needs CAP_SYS_MODULE/BOOT: depth).
	{[]string{"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module"}, "kernel code loading"},
	// Raw x86 port I/O.
	{[]string{"iopl", "ioperm"}, "raw I/O ports"},
	// Host-wide administration an agent never needs.
	{[]string{"swapon", "swapoff", "reboot", "acct", "quotactl", "quotactl_fd", "lookup_dcookie",
		"settimeofday", "clock_settime", "vhangup", "uselib", "nfsservctl"}, "host administration (swap, reboot, accounting, quotas, clock)"},
	// syslog(2): the kernel log leaks addresses that defeat KASLR.
	{[]string{"syslog"}, "kernel log (KASLR leaks)"},
	// "Shocker" (2014): open_by_handle_at opens files by handle, around
	// every mount restriction.
	{[]string{"open_by_handle_at", "name_to_handle_at"}, "file handles (Shocker container escape)"},
}

// denyPtrace (unless Config.AllowPtrace): reading and writing other
// processes' memory. Inside the sandbox every process belongs to the same
// agent, init is non-dumpable and the supervisor is not in the pid
// namespace, so this is not about escaping; it is about kernel surface
// (CVE-2019-13272 PTRACE_TRACEME) and about one tool of the agent reading
// secrets held by another (a credential helper, ssh-agent). Debuggers and
// strace need it: --allow-ptrace.
var denyPtrace = rule{[]string{"ptrace", "process_vm_readv", "process_vm_writev",
	"pidfd_getfd", "process_madvise", "kcmp"}, "ptrace and cross-process memory (CVE-2019-13272)"}

// nativeArch returns the audit arch and go-seccomp-bpf tables.
func nativeArch() (*arch.Info, uint32, error) {
	switch runtime.GOARCH {
	case "amd64":
		return arch.X86_64, unix.AUDIT_ARCH_X86_64, nil
	case "arm64":
		return arch.AARCH64, unix.AUDIT_ARCH_AARCH64, nil
	}
	return nil, 0, ErrUnsupportedArch
}

func existing(info *arch.Info, names []string) []string {
	var out []string
	for _, n := range names {
		if _, ok := info.SyscallNames[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// basePolicy is the deny-list in go-seccomp-bpf form (the part that only
// looks at syscall numbers, or at 64-bit flag words).
func basePolicy(info *arch.Info, allowPtrace bool) *Policy {
	p := &Policy{DefaultAction: gobpf.ActionAllow}
	rules := denyEPERM
	if !allowPtrace {
		rules = append(rules[:len(rules):len(rules)], denyPtrace)
	}
	for _, r := range rules {
		if n := existing(info, r.names); len(n) > 0 {
			p.Syscalls = append(p.Syscalls, gobpf.SyscallGroup{Names: n, Action: gobpf.ActionErrno})
		}
	}
	// clone(2) with any CLONE_NEW* flag: same attack as unshare. flags is
	// an unsigned long (arg 0 on both arches); the NEW bits are all in the
	// low word, which BitsSet checks.
	p.Syscalls = append(p.Syscalls, gobpf.SyscallGroup{
		NamesWithCondtions: []gobpf.NameWithConditions{{Name: "clone", Conditions: gobpf.ArgumentConditions{
			{Argument: 0, Operation: gobpf.BitsSet, Value: cloneNewMask}}}},
		Action: gobpf.ActionErrno,
	})
	// clone3 passes its flags in memory a filter cannot read: ENOSYS makes
	// glibc (2.34+) and others fall back to clone, which is checked above.
	p.Syscalls = append(p.Syscalls, gobpf.SyscallGroup{Names: []string{"clone3"}, Action: gobpf.Action(retENOSYS)})
	return p
}

// archPrefix: the first instructions of every jail filter. go-seccomp-bpf
// sends a foreign arch to the default action (allow, for a deny-list) and
// x32 to ENOSYS; we kill instead: a deny-list only means something for the
// syscall table it was written for (i386 `int 0x80` has its own numbers).
func archPrefix(a *asm, auditArch uint32, foreign string) {
	a.ld(offArch)
	a.jmp(bpf.JumpEqual, auditArch, "", foreign)
	a.ld(offNr)
	if auditArch == unix.AUDIT_ARCH_X86_64 {
		// x32 ABI: same AUDIT_ARCH, syscall nr with bit 30 set.
		a.jmp(bpf.JumpGreaterOrEqual, x32Bit, foreign, "")
	}
}

// argPrefix: rules on arguments the kernel declares as 32-bit (int or
// unsigned int). Only the low 32 bits are compared: a 64-bit comparison
// lets `ioctl(fd, TIOCSTI | 1<<32, ...)` through, since the kernel
// truncates the request (CVE-2019-10063, flatpak). Expects A = syscall nr.
func argPrefix(a *asm, allowPtrace bool) {
	a.jmp(bpf.JumpEqual, uint32(unix.SYS_IOCTL), "ioctl", "")
	a.jmp(bpf.JumpEqual, uint32(unix.SYS_SOCKET), "socket", "")
	a.jmp(bpf.JumpEqual, uint32(unix.SYS_PERSONALITY), "personality", "")
	a.ja("next")

	// ioctl(fd, unsigned int cmd): TIOCSTI pushes bytes into the terminal's
	// input queue, so a sandboxed process types commands into the user's
	// shell after it exits (CVE-2017-5226 bubblewrap, CVE-2016-7545
	// SELinux sandbox); TIOCLINUX can do the same on a VT via selection
	// paste (CVE-2023-1523).
	a.label("ioctl")
	a.ld(offArgLo(1))
	a.jmp(bpf.JumpEqual, unix.TIOCSTI, "eperm", "")
	a.jmp(bpf.JumpEqual, unix.TIOCLINUX, "eperm", "allow")

	// socket(int family, int type, int protocol): only families an agent
	// needs. AF_VSOCK reaches the hypervisor/host and is not namespaced
	// (CVE-2021-26708); AF_PACKET raw frames (CVE-2016-8655, CVE-2017-7308,
	// CVE-2020-14386); the rarely used families (AF_ALG, AF_RDS, AF_TIPC,
	// AF_CAN, AF_BLUETOOTH...) autoload old modules, a classic LPE path
	// (CVE-2010-3904 RDS, CVE-2022-0435 TIPC). Allowed: AF_UNIX (isolated
	// by the net namespace and the mount tree), AF_INET/6, AF_NETLINK.
	a.label("socket")
	a.ld(offArgLo(0))
	a.jmp(bpf.JumpEqual, unix.AF_UNIX, "allow", "")
	a.jmp(bpf.JumpEqual, unix.AF_INET, "inet", "")
	a.jmp(bpf.JumpEqual, unix.AF_INET6, "inet", "")
	a.jmp(bpf.JumpEqual, unix.AF_NETLINK, "netlink", "eperm")
	// SOCK_RAW / SOCK_PACKET on IP: packet spoofing and sniffing in our
	// net ns (needs CAP_NET_RAW, which the agent lacks: depth). The type
	// word carries SOCK_NONBLOCK|SOCK_CLOEXEC, hence the 0xf mask.
	a.label("inet")
	a.ld(offArgLo(1))
	a.and(0xf)
	a.jmp(bpf.JumpEqual, unix.SOCK_RAW, "eperm", "")
	a.jmp(bpf.JumpEqual, unix.SOCK_PACKET, "eperm", "allow")
	// AF_NETLINK: NETLINK_ROUTE stays (glibc getaddrinfo AI_ADDRCONFIG, Go
	// net.Interfaces and `ip addr` read it; changes need CAP_NET_ADMIN,
	// which the agent has not) and NETLINK_SOCK_DIAG (`ss`). Every other
	// protocol is refused: NETLINK_NETFILTER is nf_tables (CVE-2023-32233,
	// CVE-2024-1086), NETLINK_GENERIC fronts dozens of subsystems.
	a.label("netlink")
	a.ld(offArgLo(2))
	a.jmp(bpf.JumpEqual, unix.NETLINK_ROUTE, "allow", "")
	a.jmp(bpf.JumpEqual, unix.NETLINK_SOCK_DIAG, "allow", "eperm")

	// personality(unsigned int): only PER_LINUX and the 0xffffffff query.
	// READ_IMPLIES_EXEC/MMAP_PAGE_ZERO help null-dereference exploits
	// (CVE-2009-2692); UNAME26 leaked kernel memory (CVE-2012-0957).
	a.label("personality")
	a.ld(offArgLo(0))
	a.jmp(bpf.JumpEqual, 0, "allow", "")
	if allowPtrace {
		// gdb turns ASLR off for the inferior.
		a.jmp(bpf.JumpEqual, addrNoRandomize, "allow", "")
	}
	a.jmp(bpf.JumpEqual, 0xffffffff, "allow", "eperm")

	a.label("eperm")
	a.ret(retEPERM)
	a.label("allow")
	a.ret(retAllow)
}

// setidMode is where one syscall carries a file mode (and, for the open
// family, the flags that decide whether the mode is used at all).
type setidMode struct {
	name  string
	mode  int // argument index of the mode (umode_t: the kernel keeps 16 bits)
	flags int // argument index of the open flags (int), or -1
}

// setidSyscalls: every syscall that sets a file's mode from an argument.
// mkdir/mkdirat are not here: the kernel keeps only the permission and
// sticky bits of their mode (a directory inherits S_ISGID from its parent,
// never from the caller).
var setidSyscalls = []setidMode{
	{"chmod", 1, -1}, {"fchmod", 1, -1}, {"fchmodat", 2, -1}, {"fchmodat2", 2, -1},
	{"creat", 1, -1}, {"mknod", 1, -1}, {"mknodat", 2, -1},
	{"open", 2, 1}, {"openat", 3, 2},
}

const (
	setidBits = unix.S_ISUID | unix.S_ISGID
	// The open flags under which the kernel uses the mode (WILL_CREATE in
	// fs/open.c): O_CREAT, and __O_TMPFILE (O_TMPFILE without O_DIRECTORY).
	createFlags = unix.O_CREAT | unix.O_TMPFILE&^unix.O_DIRECTORY
)

// setidPrefix: no setuid or setgid bit can be set (systemd's
// RestrictSUIDSGID=). A file the agent marks setuid stays on the host
// after the run: started by root, the workspace is idmapped and its files
// are owned by root, so `chmod 4755` on a copied shell would leave a root
// shell any host user can run (nosuid inside the sandbox does nothing for
// the host). Every route to the bit goes through these syscalls: chmod(1),
// install -m, cp -p/-a, tar -p and rsync -p call chmod/fchmod/fchmodat(2),
// or create the file with the mode (open/openat/creat with O_CREAT or
// O_TMPFILE, mknod/mknodat of a regular file); the O_PATH route is
// fchmodat2(AT_EMPTY_PATH) or chmod of /proc/self/fd/N, covered too.
// chown cannot carry the bit (the kernel clears S_ISUID/S_ISGID on every
// chown of a non-directory) and file capabilities (security.capability)
// need CAP_SETFCAP, which the agent never holds. Only the low 32 bits of
// mode and flags are compared: the kernel truncates both (umode_t, int),
// so 04755|1<<32 must not slip past a 64-bit compare (as in
// CVE-2019-10063). The rule also holds with --seccomp-replace: it guards
// the host, not the agent. Expects A = syscall nr; leaves A = syscall nr
// when the call is allowed to go on.
func setidPrefix(a *asm, info *arch.Info) {
	for _, s := range setidSyscalls {
		if nr, ok := info.SyscallNames[s.name]; ok {
			a.jmp(bpf.JumpEqual, uint32(nr), "setid-"+s.name, "")
		}
	}
	// openat2 keeps its flags and mode in struct open_how, in memory a
	// filter cannot read. ENOSYS is what a pre-5.6 kernel answers, so
	// every caller must already fall back to openat (checked above):
	// glibc's open/openat/fopen never use openat2, Go's os package does
	// not call it, and its users (systemd, libpathrs, rustix/cap-std)
	// retry with openat on ENOSYS. EPERM would break them instead.
	if nr, ok := info.SyscallNames["openat2"]; ok {
		a.jmp(bpf.JumpEqual, uint32(nr), "setid-enosys", "")
	}
	a.ja("setid-done")
	for _, s := range setidSyscalls {
		if _, ok := info.SyscallNames[s.name]; !ok {
			continue // open, creat, chmod, mknod: x86 only
		}
		a.label("setid-" + s.name)
		if s.flags >= 0 {
			// Without O_CREAT/O_TMPFILE the kernel ignores the mode (and
			// C callers leave garbage there): opens go on untouched.
			a.ld(offArgLo(s.flags))
			a.and(createFlags)
			a.jmp(bpf.JumpEqual, 0, "setid-pass", "")
		}
		a.ld(offArgLo(s.mode))
		a.and(setidBits)
		a.jmp(bpf.JumpEqual, 0, "setid-pass", "setid-eperm")
	}
	a.label("setid-eperm")
	a.ret(retEPERM)
	a.label("setid-enosys")
	a.ret(retENOSYS)
	a.label("setid-pass")
	a.label("setid-done")
	a.ld(offNr)
}

// socketPrefix: degraded mode's socket families (Config.NoInet, NoUnix).
// Without namespaces these are the walls that the network namespace and
// the private mount tree would be: no IP socket under --net none (Landlock
// covers TCP only, ABI 4+), no AF_UNIX socket that could connect(2) to a
// host daemon's. Kept under --seccomp-replace, like the set-id rule.
// Expects and leaves A = syscall nr.
func socketPrefix(a *asm, cfg Config) {
	if !cfg.NoInet && !cfg.NoUnix {
		return
	}
	a.jmp(bpf.JumpEqual, uint32(unix.SYS_SOCKET), "", "sock-done")
	a.ld(offArgLo(0))
	if cfg.NoInet {
		a.jmp(bpf.JumpEqual, unix.AF_INET, "sock-eperm", "")
		a.jmp(bpf.JumpEqual, unix.AF_INET6, "sock-eperm", "")
	}
	if cfg.NoUnix {
		a.jmp(bpf.JumpEqual, unix.AF_UNIX, "sock-eperm", "")
	}
	a.ja("sock-pass")
	a.label("sock-eperm")
	a.ret(retEPERM)
	a.label("sock-pass")
	a.ld(offNr)
	a.label("sock-done")
}

// buildDeny returns the deny filter: arch prefix, the set-id rule, argument
// rules, then the go-seccomp-bpf program (base policy, or cfg.Extra when
// cfg.Replace).
func buildDeny(cfg Config) ([]bpf.Instruction, error) {
	info, auditArch, err := nativeArch()
	if err != nil {
		return nil, err
	}
	var a asm
	archPrefix(&a, auditArch, "kill")
	setidPrefix(&a, info)
	socketPrefix(&a, cfg)
	pol := basePolicy(info, cfg.AllowPtrace)
	if cfg.Replace {
		if cfg.Extra == nil {
			return nil, fmt.Errorf("seccomp: Replace without an Extra policy: %w", ErrInvalidPolicy)
		}
		pol = cfg.Extra
		a.ja("next")
	} else {
		argPrefix(&a, cfg.AllowPtrace)
	}
	a.label("kill")
	a.ret(retKill)
	a.label("next")
	prefix, err := a.assemble()
	if err != nil {
		return nil, err
	}
	body, err := pol.Assemble()
	if err != nil {
		return nil, fmt.Errorf("seccomp: assemble policy: %w", err)
	}
	return append(prefix, body...), nil
}

// buildNotify returns the exec-audit filter: USER_NOTIF for execve and
// execveat, allow for everything else (foreign arches are killed by the
// deny filter; the kernel applies the most severe result of all filters).
func buildNotify() ([]bpf.Instruction, error) {
	_, auditArch, err := nativeArch()
	if err != nil {
		return nil, err
	}
	var a asm
	archPrefix(&a, auditArch, "allow")
	a.jmp(bpf.JumpEqual, uint32(unix.SYS_EXECVE), "notify", "")
	a.jmp(bpf.JumpEqual, uint32(unix.SYS_EXECVEAT), "notify", "allow")
	a.label("notify")
	a.ret(retNotify)
	a.label("allow")
	a.ret(retAllow)
	return a.assemble()
}
