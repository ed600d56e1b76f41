package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/sandbox/inithooks"
	"github.com/jail-sandbox/jail/seccomp"
)

// IsInit tells main() that this process is a sandbox's init, or one of
// jail doctor's probe children (they are re-execs of the binary too).
func IsInit() bool { return ns.IsInit() || ns.IsProbe() || isNotifyProbe() }

// InitMain runs the sandbox's init with every feature hook registered (or
// a probe child). It never returns.
func InitMain() {
	switch {
	case ns.IsProbe():
		ns.ProbeMain()
	case isNotifyProbe():
		notifyProbeMain()
	}
	ns.InitMain(inithooks.Hooks())
}

// notifyProbeArg0 is argv[0] of the child that tries seccomp user
// notification for jail doctor (and for --degraded's start).
const notifyProbeArg0 = "jail:probe-notify"

func isNotifyProbe() bool { return len(os.Args) > 0 && os.Args[0] == notifyProbeArg0 }

func notifyProbeMain() {
	if err := seccomp.ProbeNotify(); err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) {
			fmt.Println(int(errno))
		} else {
			fmt.Println(int(syscall.EIO))
		}
		os.Exit(0)
	}
	fmt.Println("ok")
	os.Exit(0)
}

// probeNotify runs the notify probe child: nil when seccomp user
// notification works for a process started like init is.
func probeNotify() error {
	var out bytes.Buffer
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{notifyProbeArg0}, Env: []string{}, Stdout: &out}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("notify probe: %w", err)
	}
	res := strings.TrimSpace(out.String())
	if res == "ok" {
		return nil
	}
	n, err := strconv.Atoi(res)
	if err != nil {
		return fmt.Errorf("notify probe: unexpected answer %q", res)
	}
	return syscall.Errno(n)
}
