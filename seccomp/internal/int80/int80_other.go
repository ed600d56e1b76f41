//go:build !amd64

package int80

// Available reports whether Syscall is implemented on this architecture.
const Available = false

// Syscall is not available on this architecture; it returns ^uintptr(37) (-ENOSYS).
func Syscall(nr, a1, a2, a3 uintptr) uintptr { return ^uintptr(37) }
