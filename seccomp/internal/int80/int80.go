// Package int80 issues i386 system calls from a 64-bit process through
// `int $0x80`, for the seccomp tests' foreign-architecture probes (the
// kernel reports such calls with AUDIT_ARCH_I386 and i386 syscall numbers,
// which an x86-64 deny-list does not know). amd64 only; on other
// architectures Available is false.
package int80

// i386 syscall numbers (arch/x86/entry/syscalls/syscall_32.tbl).
const (
	SysGetpid  = 20
	SysUnshare = 310
)
