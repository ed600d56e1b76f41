package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jail-sandbox/jail/landlock"
	"github.com/jail-sandbox/jail/netproxy"
	"github.com/jail-sandbox/jail/netproxy/nsnet"
	"github.com/jail-sandbox/jail/ns"
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
	ns.InitMain(initHooks())
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

// seccompHook is the seccomp hook's configuration: the user's policy travels
// as the file's bytes and is parsed by seccomp's own parser on both sides.
type seccompHook struct {
	AllowPtrace bool   `json:"allow_ptrace,omitempty"`
	Replace     bool   `json:"replace,omitempty"`
	ExecNotify  bool   `json:"exec_notify,omitempty"`
	Extra       []byte `json:"extra,omitempty"`
	ExtraName   string `json:"extra_name,omitempty"`
	// SimulateBusy: --x-notify-ebusy; RequireNotify: --require-exec-audit.
	SimulateBusy  bool `json:"simulate_busy,omitempty"`
	RequireNotify bool `json:"require_notify,omitempty"`
	// NoInet, NoUnix: degraded mode's socket walls (seccomp.Config).
	NoInet bool `json:"no_inet,omitempty"`
	NoUnix bool `json:"no_unix,omitempty"`
}

// netConfig is the network hook's configuration.
type netConfig struct {
	Subnet   string `json:"subnet,omitempty"`
	Fallback bool   `json:"fallback,omitempty"`
}

// sandboxAddr is the sandbox's own address on its veth (init's memory only).
var sandboxAddr netip.Addr

func initHooks() ns.Hooks {
	return ns.Hooks{
		Network: func(raw []byte) (ns.NetResult, error) {
			var c netConfig
			if err := json.Unmarshal(raw, &c); err != nil {
				return ns.NetResult{}, err
			}
			cfg := nsnet.Config{Fallback: c.Fallback}
			if c.Subnet != "" {
				p, err := netip.ParsePrefix(c.Subnet)
				if err != nil {
					return ns.NetResult{}, err
				}
				cfg.Subnet = p
			}
			res, err := nsnet.Setup(cfg)
			if err != nil {
				return ns.NetResult{}, err
			}
			sandboxAddr = res.SandboxAddr
			out := ns.NetResult{
				Names:  []string{"net-tcp"},
				Files:  []*os.File{res.TCP},
				Resolv: nsnet.ResolvConf(res.GatewayAddr),
				Info:   map[string]string{"mode": res.Mode, "proxy": res.ProxyAddr.String()},
			}
			if res.DNS != nil {
				out.Names = append(out.Names, "net-dns")
				out.Files = append(out.Files, res.DNS)
			}
			if res.Mode == nsnet.ModeProxyAware {
				out.Env = netproxy.ProxyEnv(res.ProxyAddr.String())
				if res.Reason != nil {
					out.Info["reason"] = res.Reason.Error()
				}
			}
			return out, nil
		},
		Landlock: func(raw []byte) (map[string]string, error) {
			var r landlock.Rules
			if err := json.Unmarshal(raw, &r); err != nil {
				return nil, err
			}
			// Paths the plan names but this sandbox lacks (no /dev/tty on
			// a detached runner) are dropped: fewer rights, never more.
			r.ReadExec = existing(r.ReadExec)
			r.ReadWrite = existing(r.ReadWrite)
			r.ReadOnly = existing(r.ReadOnly)
			r.DevIoctl = existing(r.DevIoctl)
			rep, err := r.Apply()
			if err != nil {
				return nil, err
			}
			info := map[string]string{"abi": fmt.Sprint(rep.ABI), "enforced": fmt.Sprint(rep.Enforced)}
			if len(rep.Missing) > 0 {
				b, _ := json.Marshal(rep.Missing)
				info["missing"] = string(b)
			}
			return info, nil
		},
		Dial: func(port int) (*os.File, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			return nsnet.DialInSandbox(ctx, uint16(port), sandboxAddr)
		},
		Seccomp: func(raw []byte) (*os.File, map[string]string, error) {
			var h seccompHook
			if err := json.Unmarshal(raw, &h); err != nil {
				return nil, nil, err
			}
			c := seccomp.Config{AllowPtrace: h.AllowPtrace, Replace: h.Replace, ExecNotify: h.ExecNotify,
				SimulateBusy: h.SimulateBusy, NoInet: h.NoInet, NoUnix: h.NoUnix}
			if h.Extra != nil {
				pol, err := seccomp.ParsePolicy(h.ExtraName, h.Extra)
				if err != nil {
					return nil, nil, err
				}
				c.Extra = pol
			}
			l, rep, err := seccomp.Install(c)
			if err != nil {
				return nil, nil, err
			}
			if h.RequireNotify && l == nil {
				// Fail closed before the agent exists.
				return nil, nil, fmt.Errorf("`require-exec-audit`: %s; drop `require-exec-audit` to run without exec audit and guard rail", rep.Reason)
			}
			info := map[string]string{"notify": fmt.Sprint(rep.Notify), "arch": rep.Arch}
			if rep.Reason != "" {
				info["reason"] = rep.Reason
			}
			return l, info, nil
		},
	}
}

func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}
