package seccomp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jail-sandbox/jail/plainfile"
)

// Config says which filters Install builds.
type Config struct {
	// AllowPtrace permits ptrace, process_vm_readv/writev, pidfd_getfd,
	// process_madvise and kcmp (debuggers, strace) and the personality
	// flag ADDR_NO_RANDOMIZE (gdb). Off by default: see rules.go.
	AllowPtrace bool
	// Extra is a user policy (--seccomp FILE, see LoadPolicyFile). Without
	// Replace it is installed as an additional filter: the kernel applies
	// the most restrictive answer of all filters, so it can only tighten.
	Extra *Policy
	// Replace makes Extra replace the built-in deny-list. What other
	// options' promises rest on stays in front of it: the foreign-arch
	// kill (without it any deny-list is void), the set-id rule (it guards
	// the host), the network walls (socket families, MPTCP: netPrefix) and
	// NoInet/NoUnix.
	Replace bool
	// ExecNotify adds the execve/execveat USER_NOTIF filter and makes Install
	// return its listener.
	ExecNotify bool
	// SimulateBusy makes the exec filter's install fail with EBUSY, as on
	// WSL2 kernels and under another listener (testing: --x-notify-ebusy).
	SimulateBusy bool
	// NoInet refuses socket(AF_INET/AF_INET6): degraded mode's --net none,
	// where no network namespace exists and Landlock (ABI 4+) covers TCP
	// only, so UDP and ICMP would otherwise leave.
	NoInet bool
	// NoUnix refuses socket(AF_UNIX): degraded mode, where no mount
	// namespace hides the host's sockets (D-Bus, docker.sock, ssh-agent)
	// and Landlock does not mediate connect(2) on them. socketpair(2)
	// stays (pipes between the sandbox's own processes).
	NoUnix bool
}

// Report says what Install installed, for the audit trail's start event.
type Report struct {
	Arch         string // "x86_64" or "aarch64"
	Instructions int    // BPF instructions of the deny filter
	Extra        string // "none", "extend" or "replace"
	AllowPtrace  bool
	Notify       bool   // exec audit active (listener returned)
	Reason       string // why Notify is false when ExecNotify was asked
}

var (
	// ErrUnsupported is returned on systems without seccomp (non-Linux).
	ErrUnsupported = errors.New("seccomp: not supported on this system (jail sandboxes need Linux 5.7+)")
	// ErrInvalidPolicy is wrapped by every LoadPolicyFile validation error.
	ErrInvalidPolicy = errors.New("invalid seccomp policy")
	// ErrUnsupportedArch: jail's filter knows x86_64 and aarch64 only.
	ErrUnsupportedArch = errors.New("seccomp: unsupported architecture (jail supports amd64 and arm64)")
)

// maxPolicyFile bounds what LoadPolicyFile reads: a policy is a few KiB.
const maxPolicyFile = 1 << 20

// policyFile mirrors go-seccomp-bpf's policy format for strict JSON
// decoding; Action has no UnmarshalText, so names are converted by hand.
type policyFile struct {
	DefaultAction string       `json:"default_action"`
	Syscalls      []groupEntry `json:"syscalls"`
}

type groupEntry struct {
	Names         []string    `json:"names"`
	NamesWithArgs []nameEntry `json:"names_with_args"`
	Action        string      `json:"action"`
}

type nameEntry struct {
	Name      string     `json:"name"`
	Arguments []argEntry `json:"arguments"`
}

type argEntry struct {
	Position  *uint32 `json:"position"`
	Operation string  `json:"operation"`
	Value     uint64  `json:"value"`
}

// LoadPolicyFile reads a JSON policy in go-seccomp-bpf's format and
// validates it for the native architecture: known action and operation
// names, syscalls that exist, argument positions 0..5, no duplicates, and a
// policy that assembles. YAML is not accepted (it would need a new module;
// convert with any YAML-to-JSON tool). Errors wrap ErrInvalidPolicy and
// name the file and the entry, e.g. `syscalls[1].names[0] "mount2"`.
func LoadPolicyFile(path string) (*Policy, error) {
	data, err := ReadPolicyFile(path)
	if err != nil {
		return nil, fmt.Errorf("seccomp policy: %w", err) // *PathError names the file
	}
	return parsePolicy(path, data)
}

// errNotPlain is a policy file that is no regular file (nor a pipe passed
// as /dev/fd/N).
var errNotPlain = errors.New("not a regular file (a FIFO, a device?): jail reads a seccomp policy only as a plain file, or as a pipe passed as /dev/fd/N")

// ReadPolicyFile reads a policy file's bytes. The file may lie in the
// workspace (--seccomp ./policy.json), the agent's to write: os.ReadFile
// blocked for ever on a FIFO it put there (every later start hung) and
// read a link to /dev/zero into memory. plainfile.ReadNamed reads a
// regular file only (a symlink followed to one), without blocking, at
// most maxPolicyFile bytes, or a pipe jail was handed as /dev/fd/N.
func ReadPolicyFile(path string) ([]byte, error) {
	return plainfile.ReadNamed(path, maxPolicyFile, errNotPlain)
}

// ParsePolicy parses and validates a policy read elsewhere; name is used in
// error messages (the file it came from).
func ParsePolicy(name string, data []byte) (*Policy, error) { return parsePolicy(name, data) }

func parsePolicy(path string, data []byte) (*Policy, error) {
	bad := func(entry, format string, a ...any) error {
		return fmt.Errorf("seccomp policy %s: %s: %s: %w (fix or remove that entry)",
			path, entry, fmt.Sprintf(format, a...), ErrInvalidPolicy)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, bad("file", "not a JSON object (only JSON is supported, not YAML)")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	var pf policyFile
	if err := dec.Decode(&pf); err != nil {
		return nil, bad("file", "%v", err)
	}
	if dec.More() {
		return nil, bad("file", "trailing data after the JSON object")
	}
	info, err := archNative()
	if err != nil {
		return nil, fmt.Errorf("seccomp policy %s: %v: %w", path, err, ErrUnsupportedArch)
	}
	p := &Policy{}
	if p.DefaultAction, err = parseAction(pf.DefaultAction); err != nil {
		return nil, bad("default_action", "%v", err)
	}
	if len(pf.Syscalls) == 0 {
		return nil, bad("syscalls", "must list at least one group")
	}
	for i, g := range pf.Syscalls {
		entry := fmt.Sprintf("syscalls[%d]", i)
		act, err := parseAction(g.Action)
		if err != nil {
			return nil, bad(entry+".action", "%v", err)
		}
		if len(g.Names)+len(g.NamesWithArgs) == 0 {
			return nil, bad(entry, "has neither names nor names_with_args")
		}
		seen := map[string]bool{}
		for j, n := range g.Names {
			if _, ok := info.nr(n); !ok {
				return nil, bad(fmt.Sprintf("%s.names[%d] %q", entry, j, n), "unknown system call on %s", info.Name)
			}
			if seen[n] {
				return nil, bad(fmt.Sprintf("%s.names[%d] %q", entry, j, n), "listed twice")
			}
			seen[n] = true
		}
		grp := SyscallGroup{Names: g.Names, Action: act}
		for j, nc := range g.NamesWithArgs {
			ne := fmt.Sprintf("%s.names_with_args[%d] %q", entry, j, nc.Name)
			if _, ok := info.nr(nc.Name); !ok {
				return nil, bad(ne, "unknown system call on %s", info.Name)
			}
			if seen[nc.Name] && len(nc.Arguments) > 0 && contains(g.Names, nc.Name) {
				return nil, bad(ne, "also listed unconditionally in names")
			}
			if len(nc.Arguments) == 0 {
				return nil, bad(ne, "arguments must not be empty (use names for an unconditional rule)")
			}
			conds := make([]Condition, 0, len(nc.Arguments))
			for k, a := range nc.Arguments {
				ae := fmt.Sprintf("%s.arguments[%d]", ne, k)
				if a.Position == nil || *a.Position > 5 {
					return nil, bad(ae, "position must be 0..5")
				}
				var op Operation
				if err := op.Unpack(a.Operation); err != nil {
					return nil, bad(ae, "%v (one of %v)", err, Operations)
				}
				conds = append(conds, Condition{Argument: *a.Position, Operation: op, Value: a.Value})
			}
			grp.NamesWithConditions = append(grp.NamesWithConditions, NameWithConditions{Name: nc.Name, Conditions: conds})
		}
		p.Syscalls = append(p.Syscalls, grp)
	}
	// Final check: the library assembles it (catches what we did not).
	if _, err := p.Assemble(); err != nil {
		return nil, bad("policy", "%s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return p, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// parseAction accepts go-seccomp-bpf's action names. "errno" is EPERM.
// trace is refused: without a tracer the kernel answers ENOSYS, which
// silently breaks programs rather than denying anything.
func parseAction(s string) (Action, error) {
	if s == "" {
		return 0, errors.New("missing action (one of allow, errno, kill_process, kill_thread, trap, log)")
	}
	var a Action
	if err := a.Unpack(s); err != nil {
		return 0, fmt.Errorf("%v (one of allow, errno, kill_process, kill_thread, trap, log)", err)
	}
	if a == ActionTrace {
		return 0, errors.New(`action "trace" is not supported (no tracer runs in jail)`)
	}
	return a, nil
}
