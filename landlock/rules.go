package landlock

import (
	"errors"
	"fmt"
)

// ErrABITooOld is returned (wrapped) by Apply when Rules.Require asks for a
// newer Landlock ABI than the kernel offers. Nothing has been enforced then:
// the caller must not start the agent (jail exits 125).
var ErrABITooOld = errors.New("landlock ABI too old")

// Rules is the Landlock policy of one sandbox. Paths are absolute, exist, and
// are the same inside the sandbox and on the host. Grants add up along a path:
// a ReadOnly path under a ReadExec root is still executable.
type Rules struct {
	// ReadExec paths may be read, listed and executed.
	ReadExec []string `json:"read_exec,omitempty"`
	// ReadOnly paths may be read and listed, not executed.
	ReadOnly []string `json:"read_only,omitempty"`
	// ReadWrite paths get every filesystem right of the ABI (create, remove,
	// write, truncate, cross-directory rename and link) except device ioctl.
	ReadWrite []string `json:"read_write,omitempty"`
	// DevIoctl paths (terminals: /dev/tty, /dev/pts, /dev/ptmx) may be opened
	// read-write and take ioctl(2) (ABI 5+); without it, TCGETS fails with EACCES.
	DevIoctl []string `json:"dev_ioctl,omitempty"`
	// DenyTCP denies every TCP bind and connect (ABI 4+), for network "none".
	// It also stops servers on loopback inside the sandbox. Kernel rule:
	// Landlock checks only IPPROTO_TCP sockets, so MPTCP (IPPROTO_MPTCP) is
	// NOT covered; jail's seccomp filter refuses that protocol
	// (seccomp/rules_linux.go, argPrefix).
	DenyTCP bool `json:"deny_tcp,omitempty"`
	// ConnectTCP lists, under DenyTCP, the ports that may still be connected
	// to (ABI 4+); binding stays denied on every port. Under --net none jail
	// answers refused names on 80, 443 and 22 from listeners in the sandbox's
	// own network namespace, which has no route out: these ports reach only
	// them (and nothing the agent could bind, since it can bind nothing).
	ConnectTCP []uint16 `json:"connect_tcp,omitempty"`
	// PinRoot narrows a ReadExec grant on "/" to what "/" holds when Apply
	// runs: "/" itself may only be listed (READ_DIR, which Landlock extends
	// to every directory beneath it), and each entry there that is not a
	// symlink gets the ReadExec rights (a symlink at "/", like bin ->
	// usr/bin, resolves to a path that is granted, or not, on its own).
	// Why: when the sandbox's "/" is a live view of the host's root
	// filesystem, a top-level directory or file the host makes after the
	// start shows up inside; pinned, its files cannot be read or run (their
	// names can still be listed). Entries that vanish before the ruleset is
	// built are skipped: fewer rights, never more.
	PinRoot bool `json:"pin_root,omitempty"`
	// Scope confines abstract Unix sockets and signals to the domain (ABI 6+).
	Scope bool `json:"scope,omitempty"`
	// Require is --require-landlock N: Apply fails with ErrABITooOld when the
	// kernel's ABI is lower. 0 means best effort.
	Require int `json:"require,omitempty"`
	// MaxABI caps the ABI used, to simulate an older kernel in tests (and to
	// pin behaviour). 0 means no cap; negative pretends Landlock is absent.
	MaxABI int `json:"max_abi,omitempty"`
}

// Report says what Apply enforced.
type Report struct {
	// ABI is the Landlock ABI used (0: none).
	ABI int `json:"abi"`
	// Enforced is true when a ruleset now restricts the process.
	Enforced bool `json:"enforced"`
	// Missing lists, one line each, the features the Rules needed that this
	// ABI lacks, so the caller can put them on stderr and in the audit trail.
	Missing []string `json:"missing,omitempty"`
}

// feature is one ABI step that changes what a sandbox is protected from.
type feature struct {
	abi  int
	name string
	text string
}

var features = []feature{
	{1, "landlock", "Linux 5.13: no Landlock at all; only the mount layer protects the filesystem"},
	{2, "refer", "Linux 5.19: renaming or linking across directories is always denied (EXDEV), even inside writable paths"},
	{3, "truncate", "Linux 6.2: truncate(2) and O_TRUNC are not restricted by Landlock (read-only mounts still stop them)"},
	{4, "tcp", "Linux 6.7: TCP bind/connect are not restricted by Landlock (the network namespace still isolates)"},
	{5, "ioctl_dev", "Linux 6.10: ioctl(2) on devices is not restricted by Landlock (seccomp still filters TIOCSTI)"},
	{6, "scope", "Linux 6.12: abstract Unix sockets and signals are not scoped to the sandbox (the pid and net namespaces still isolate)"},
}

// missing returns the features r needs that abi lacks.
func missing(r Rules, abi int) []string {
	var out []string
	for _, f := range features {
		if abi >= f.abi {
			continue
		}
		if (f.name == "tcp" && !r.DenyTCP) || (f.name == "scope" && !r.Scope) {
			continue
		}
		out = append(out, fmt.Sprintf("%s (ABI %d, %s)", f.name, f.abi, f.text))
	}
	return out
}

// effectiveABI applies the MaxABI test hook to the kernel's ABI.
func effectiveABI(kernel, max int) int {
	switch {
	case max < 0:
		return 0
	case max > 0 && max < kernel:
		return max
	}
	return kernel
}

// checkRequire fails closed when the ABI is older than required.
func checkRequire(r Rules, abi int) error {
	if r.Require <= abi {
		return nil
	}
	return fmt.Errorf("%w: --require-landlock %d but the kernel offers ABI %d: run on Linux %s or newer with Landlock enabled (lsm=landlock), or lower --require-landlock",
		ErrABITooOld, r.Require, abi, kernelFor(r.Require))
}

func kernelFor(abi int) string {
	k := map[int]string{1: "5.13", 2: "5.19", 3: "6.2", 4: "6.7", 5: "6.10", 6: "6.12", 7: "6.15"}
	if s, ok := k[abi]; ok {
		return s
	}
	return "a kernel with Landlock ABI " + fmt.Sprint(abi)
}
