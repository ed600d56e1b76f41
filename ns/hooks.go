package ns

import "os"

// InitArg0 is argv[0] of the re-executed binary when it is to act as the
// sandbox's init. It is never a valid user command (it contains a colon and
// requires the socket on fd 3), so `jail` cannot be tricked into it.
const InitArg0 = "jail:init"

// EntryArg0 is argv[0] of the lean init exec'd for its own entry (see
// Config.Entry): that entry, before the Go runtime, makes the namespaces and
// clones init, whose main then sees InitArg0. A program without the entry
// refuses it (cmd/jail-init), as jail's own binary does any argv[0] it does
// not know.
const EntryArg0 = "jail:init-entry"

// initFD is where the supervisor places init's end of the socketpair.
const initFD = 3

// IsInit tells main() that this process is the sandbox's init.
func IsInit() bool { return len(os.Args) > 0 && os.Args[0] == InitArg0 }

// Hooks let feature packages act inside init at fixed points of the setup
// order, without this package importing them. A hook whose configuration is in
// the Spec but which is not registered is an error: init fails closed.
type Hooks struct {
	// Network runs first, while init still holds its capabilities in the
	// sandbox's user namespace and the host's /proc is still mounted: on
	// MsgNetwork, before the spec (while the supervisor plans), else on the
	// spec's configuration. Files go to the supervisor; Resolv, when set, is
	// bound over /etc/resolv.conf and Env is added to the agent's
	// environment.
	Network func(cfg []byte) (NetResult, error)
	// Landlock runs after every capability is dropped and no_new_privs is set.
	Landlock func(cfg []byte) (info map[string]string, err error)
	// Seccomp runs last, just before the agent starts; an optional listener
	// (user notification) goes to the supervisor.
	Seccomp func(cfg []byte) (listener *os.File, info map[string]string, err error)
	// SeccompAgent runs after Seccomp, on the thread the agent and every
	// exec'd command are forked from, and only there: a filter for them
	// (no prlimit64 on pid 1; seccomp.InstallAgent).
	SeccompAgent func() error
	// Dial connects, inside the sandbox's network namespace, to a server the
	// agent runs on port (for --publish). It runs after the agent started.
	Dial func(port int) (*os.File, error)
	// Prepare runs before the spec arrives, while the supervisor still
	// plans: work of the hooks that needs no spec and nothing of the
	// sandbox (the first use of their configurations' decoders). It must
	// not fail, and must not touch the file system or the network.
	Prepare func()
}

// NetResult is what the network hook hands back to init.
type NetResult struct {
	Names  []string
	Files  []*os.File
	Resolv []byte
	Env    []string
	Info   map[string]string
}

// Hook names: keys of Spec.Hooks.
const (
	HookNetwork  = "network"
	HookLandlock = "landlock"
	HookSeccomp  = "seccomp"
)
