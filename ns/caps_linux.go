package ns

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Securebits from linux/securebits.h (not in x/sys/unix).
const (
	secbitNoroot                  = 1 << 0
	secbitNorootLocked            = 1 << 1
	secbitNoSetuidFixup           = 1 << 2
	secbitNoSetuidFixupLocked     = 1 << 3
	secbitKeepCapsLocked          = 1 << 5
	secbitNoCapAmbientRaise       = 1 << 6
	secbitNoCapAmbientRaiseLocked = 1 << 7
)

// lastCap reads the highest capability number this kernel knows; dropping only
// the ones Go's headers know would leave newer ones in the bounding set.
func lastCap() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 63
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 63
	}
	return n
}

// allThreads runs a syscall on every thread of this (Go, multi-threaded)
// process: capabilities, securebits and no_new_privs are per-thread
// attributes, and the agent is forked from whichever thread runs ForkExec.
func allThreads(trap, a1, a2, a3 uintptr) error {
	_, _, e := syscall.AllThreadsSyscall(trap, a1, a2, a3)
	if e == syscall.ENOTSUP {
		// The Go runtime refuses AllThreadsSyscall in a cgo binary, whose C
		// threads it cannot reach: without it a privilege would stay on some
		// thread, so this is fatal, and the fix is the build.
		return fmt.Errorf("%w: this jail binary was built with cgo; rebuild it with CGO_ENABLED=0 (make build does)", e)
	}
	if e != 0 {
		return e
	}
	return nil
}

// entryPreset: init's entry (the lean init's assembly, before the Go
// runtime, on init's one thread; cmd/jail-init) emptied the bounding set,
// set and locked the securebits and set no_new_privs. Every thread of init
// was cloned from that thread afterwards and inherited all three.
var entryPreset bool

// EntryPreset tells init that its entry raised those walls already
// (cmd/jail-init calls it before InitMain, only when the entry said so).
func EntryPreset() { entryPreset = true }

// initSecurebits: uid 0 inside gets no capabilities on exec (NOROOT),
// setuid transitions keep none (NO_SETUID_FIXUP), and ambient raising is
// refused; each locked. The entry sets the same value (SECUREBITS).
const initSecurebits = secbitNoroot | secbitNorootLocked | secbitNoSetuidFixup |
	secbitNoSetuidFixupLocked | secbitKeepCapsLocked |
	secbitNoCapAmbientRaise | secbitNoCapAmbientRaiseLocked

// presetHolds checks, on the calling thread, what the entry said it did:
// no_new_privs, the securebits and an empty bounding set (its first and
// CAP_SYS_ADMIN). A thread of init can only have them by inheritance from
// the entry's thread, where they were set before any other thread existed
// (nothing in init sets them on one thread alone), so this one thread
// stands for all. Anything else and dropPrivileges raises them itself, on
// every thread, as without the entry.
func presetHolds() bool {
	nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	if err != nil || nnp != 1 {
		return false
	}
	bits, err := unix.PrctlRetInt(unix.PR_GET_SECUREBITS, 0, 0, 0, 0)
	if err != nil || bits != initSecurebits {
		return false
	}
	for _, c := range []uintptr{0, unix.CAP_SYS_ADMIN} {
		if in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, c, 0, 0, 0); err != nil || in != 0 {
			return false
		}
	}
	return true
}

// dropPrivileges leaves init (and so the agent) with no capability in any set,
// no way to regain one, no_new_privs, and not dumpable.
func dropPrivileges() error {
	if entryPreset && presetHolds() {
		// The bounding set, the securebits and no_new_privs are on every
		// thread since init's entry (EntryPreset): what is left is the
		// capability sets themselves, and the rest below.
		return dropCapabilities()
	}
	// Bounding set first (needs CAP_SETPCAP, which we still hold): execve can
	// then never grant a capability back, even to uid 0 inside the user ns
	// (file capabilities and the root-exec rule both AND with the bounding set).
	// It is per thread; the agent is forked from the calling (locked) thread,
	// so this thread's set is the one that counts. The other threads of init
	// never execve, and lose every effective and permitted capability below.
	// Every capability this kernel knows, newer ones than Go's headers
	// included: the kernel itself says where they end, with EINVAL for the
	// first number past CAP_LAST_CAP (cap_valid() is its only EINVAL), so
	// no file is read here (/proc/sys/kernel/cap_last_cap cost init nine
	// system calls through Go's poller, 0.1-0.4 ms). The capability sets
	// are 64 bits wide: a kernel that knew all 64 ends at 64.
	for c := 0; ; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if err == unix.EINVAL && c > 0 {
			break // c-1 was the last capability
		}
		if err != nil {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
		if c == 64 {
			return fmt.Errorf("drop capability %d from the bounding set: the kernel knows more than 64 capabilities", c)
		}
	}
	// Ambient capabilities were how init kept its privileges across its own
	// exec; clear them so nothing is inherited by the agent's execve.
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	// Securebits, locked (initSecurebits). Defence in depth on top of the
	// empty bounding set.
	if err := allThreads(unix.SYS_PRCTL, unix.PR_SET_SECUREBITS, initSecurebits, 0); err != nil {
		return fmt.Errorf("set securebits: %w", err)
	}
	// Effective, permitted and inheritable to zero, on every thread.
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := allThreads(unix.SYS_CAPSET, uintptr(ptr(&hdr)), uintptr(ptr(&data[0])), 0); err != nil {
		return fmt.Errorf("capset to empty: %w", err)
	}
	// no_new_privs: setuid/setgid bits and file capabilities are ignored by
	// execve from now on; also required by seccomp and Landlock for
	// unprivileged use.
	if err := allThreads(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	return notDumpable()
}

// dropCapabilities is dropPrivileges after the entry's presets: the
// ambient set cleared, effective, permitted and inheritable to zero on
// every thread, not dumpable.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := allThreads(unix.SYS_CAPSET, uintptr(ptr(&hdr)), uintptr(ptr(&data[0])), 0); err != nil {
		return fmt.Errorf("capset to empty: %w", err)
	}
	return notDumpable()
}

// notDumpable ends dropPrivileges.
func notDumpable() error {
	// Not dumpable: processes of the same uid in the sandbox cannot ptrace
	// init or open its /proc/1/mem, /proc/1/exe or fds (the CVE-2019-5736
	// class, where a container overwrote the runtime binary through
	// /proc/PID/exe). Per process, inherited by fork, reset by execve.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("set not dumpable: %w", err)
	}
	return nil
}

// dropPrivilegesDegraded is dropPrivileges for init started without a user
// namespace (Spec.Degraded). Started by root, init still holds root's
// capabilities and drops them all exactly like dropPrivileges (the agent is
// then uid 0 with no capability at all, locked). Started by an ordinary
// user it holds none: the bounding set and securebits need CAP_SETPCAP,
// which it lacks, and with no_new_privs execve grants nothing anyway (no
// setuid, no file capabilities); what it can do, it does.
func dropPrivilegesDegraded() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	if data[0].Effective&(1<<unix.CAP_SETPCAP) != 0 {
		return dropPrivileges()
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	data = [2]unix.CapUserData{}
	if err := allThreads(unix.SYS_CAPSET, uintptr(ptr(&hdr)), uintptr(ptr(&data[0])), 0); err != nil {
		return fmt.Errorf("capset to empty: %w", err)
	}
	if err := allThreads(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("set not dumpable: %w", err)
	}
	return nil
}
