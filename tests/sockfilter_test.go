//go:build linux

package tests

// Adversarial (seccomp15): a classic BPF socket filter (setsockopt
// SO_ATTACH_FILTER, SO_ATTACH_REUSEPORT_CBPF) is converted to eBPF and
// JIT-compiled by the kernel, from any unprivileged socket: the BPF JIT
// without bpf(2). Refused inside; a seccomp filter the agent installs
// itself (its own sandbox) still loads.

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sockFilterOpts are the options the shim tries, by name.
var sockFilterOpts = []struct {
	name      string
	opt       int
	reuseport bool
}{
	{"SO_ATTACH_FILTER", unix.SO_ATTACH_FILTER, false},
	{"SO_ATTACH_REUSEPORT_CBPF", unix.SO_ATTACH_REUSEPORT_CBPF, true},
}

// attachSockFilter attaches an accept-all classic BPF program to a fresh
// UDP socket with option opt and returns the error.
func attachSockFilter(opt int, reuseport bool) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	if reuseport {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
			return fmt.Errorf("SO_REUSEPORT: %w", err)
		}
	}
	ins := []unix.SockFilter{{Code: 0x06, K: 0xffff}} // BPF_RET|BPF_K: accept
	prog := unix.SockFprog{Len: uint16(len(ins)), Filter: &ins[0]}
	_, _, e := unix.Syscall6(unix.SYS_SETSOCKOPT, uintptr(fd), unix.SOL_SOCKET, uintptr(opt),
		uintptr(unsafe.Pointer(&prog)), unsafe.Sizeof(prog), 0)
	runtime.KeepAlive(ins)
	if e != 0 {
		return e
	}
	return nil
}

// sockFilterShim (everydayShim mode "sockfilter") prints one line per
// option, then whether a seccomp filter of its own loads (in a locked
// thread that exits with it, so the filter binds nothing else).
func sockFilterShim() {
	for _, o := range sockFilterOpts {
		fmt.Printf("ATTACH %s %v\n", o.name, attachSockFilter(o.opt, o.reuseport))
	}
	done := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with its filter
		ins := []unix.SockFilter{{Code: 0x06, K: unix.SECCOMP_RET_ALLOW}}
		prog := unix.SockFprog{Len: 1, Filter: &ins[0]}
		_, _, e := unix.Syscall6(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0,
			uintptr(unsafe.Pointer(&prog)), 0, 0, 0)
		runtime.KeepAlive(ins)
		if e != 0 {
			done <- e
			return
		}
		done <- nil
	}()
	fmt.Printf("SECCOMP %v\n", <-done)
}

func TestSocketFiltersRefused(t *testing.T) {
	// Control: on the host the same calls succeed, so a refusal inside is
	// the sandbox's.
	for _, o := range sockFilterOpts {
		if err := attachSockFilter(o.opt, o.reuseport); err != nil {
			t.Fatalf("control: %s on the host: %v", o.name, err)
		}
	}
	r := run(t, runOpts{}, everydaySelf(t, "sockfilter")...)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	for _, o := range sockFilterOpts {
		want := fmt.Sprintf("ATTACH %s %v\n", o.name, unix.EPERM)
		if !strings.Contains(r.stdout, want) {
			t.Errorf("%s not refused with EPERM inside:\n%s", o.name, r.stdout)
		}
	}
	// Sandboxes agents bring install seccomp filters: that stays.
	if !strings.Contains(r.stdout, "SECCOMP <nil>\n") {
		t.Errorf("a seccomp filter of the agent's own did not load:\n%s", r.stdout)
	}
}
