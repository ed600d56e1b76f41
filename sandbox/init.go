package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"time"

	"github.com/jail-sandbox/jail/landlock"
	"github.com/jail-sandbox/jail/netproxy"
	"github.com/jail-sandbox/jail/netproxy/nsnet"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/seccomp"
)

// IsInit tells main() that this process is a sandbox's init.
func IsInit() bool { return ns.IsInit() }

// InitMain runs the sandbox's init with every feature hook registered.
func InitMain() { ns.InitMain(initHooks()) }

// seccompHook is the seccomp hook's configuration: the user's policy travels
// as the file's bytes and is parsed by seccomp's own parser on both sides.
type seccompHook struct {
	AllowPtrace bool   `json:"allow_ptrace,omitempty"`
	Replace     bool   `json:"replace,omitempty"`
	ExecNotify  bool   `json:"exec_notify,omitempty"`
	Extra       []byte `json:"extra,omitempty"`
	ExtraName   string `json:"extra_name,omitempty"`
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
			c := seccomp.Config{AllowPtrace: h.AllowPtrace, Replace: h.Replace, ExecNotify: h.ExecNotify}
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
