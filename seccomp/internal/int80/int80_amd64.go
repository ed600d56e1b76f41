package int80

// Available reports whether Syscall is implemented on this architecture.
const Available = true

// Syscall runs `int $0x80` with eax=nr, ebx=a1, ecx=a2, edx=a3 and returns
// eax (a negative errno on failure). Without IA32 emulation the kernel
// answers with SIGSEGV.
//
//go:noescape
func Syscall(nr, a1, a2, a3 uintptr) (r uintptr)
