// Package inithooks is the sandbox's init side of the feature hooks that
// ns.InitMain runs (network, Landlock, seccomp, the dial-in) and their
// configurations' wire format. The supervisor (package sandbox) encodes the
// configurations; init decodes and applies them.
//
// It is linked by jail's binary and by the lean init program (cmd/jail-init,
// embedded by package initbin), so that both inits are one code: it imports
// only what init needs (ns, landlock, seccomp, nsnet), never netproxy's
// HTTP and TLS or the supervisor's packages. TestLeanInitImports holds that.
package inithooks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"time"

	"github.com/jail-sandbox/jail/landlock"
	"github.com/jail-sandbox/jail/netproxy/nsnet"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/seccomp"
)

// Main is the whole of the lean init program: the sandbox's init with every
// feature hook registered, exactly as jail's own binary runs it
// (sandbox.InitMain). It never returns; run as anything else than a
// sandbox's init it exits with 2.
func Main() {
	if !ns.IsInit() {
		fmt.Fprintln(os.Stderr, "jail-init: this program is a sandbox's init, started by jail only")
		os.Exit(2)
	}
	ns.InitMain(Hooks())
}

// SeccompHook is the seccomp hook's configuration: the user's policy travels
// as the file's bytes and is parsed by seccomp's own parser on both sides.
type SeccompHook struct {
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

// NetConfig is the network hook's configuration.
type NetConfig struct {
	// Mode nsnet.ModeNone builds --net none's refusal plumbing; "" builds
	// the egress path. Fake is the fake range the refusal listeners' local
	// route covers (--net none, the proxy-aware fallback).
	Mode     string `json:"mode,omitempty"`
	Fake     string `json:"fake,omitempty"`
	Subnet   string `json:"subnet,omitempty"`
	Fallback bool   `json:"fallback,omitempty"`
	// NoProxy are names that stay out of the *_PROXY variables' reach
	// besides loopback: the sandbox's hostname (its own servers).
	NoProxy []string `json:"no_proxy,omitempty"`
	// HostPorts are the --allow-host-port ports: the egress modes make
	// the sandbox's own 127.0.0.1 at each the host's (nsnet.Config).
	HostPorts []uint16 `json:"host_ports,omitempty"`
}

// proxyPort is the port of the gateway address that the *_PROXY variables
// name in the transparent mode: every TCP flow reaches the proxy anyway, and
// a flow to this one is taken as a proxy request (netproxy.Proxy.Endpoint).
// Proxy-aware clients then hear a refusal as an HTTP 403 even for https://
// (npm shows its body and does not retry), where a direct TLS connection can
// only be refused with a TLS alert.
const proxyPort = 80

// netNone builds --net none's refusal plumbing. When it cannot, the sandbox
// keeps a plain loopback (refused names then fail as before, without a
// word), and the start event says why.
func netNone(c NetConfig) (ns.NetResult, error) {
	fake, err := netip.ParsePrefix(c.Fake)
	if err != nil {
		return ns.NetResult{}, err
	}
	res, err := nsnet.SetupNone(fake)
	if err != nil {
		if uerr := ns.LoopbackUp(); uerr != nil {
			return ns.NetResult{}, fmt.Errorf("%v; and lo: %w", err, uerr)
		}
		return ns.NetResult{Info: map[string]string{"mode": "none", "refusals": "off: " + err.Error()}}, nil
	}
	out := ns.NetResult{
		Resolv: nsnet.ResolvConf(res.GatewayAddr),
		Env:    nsnet.ProxyEnv(res.ProxyAddr.String(), c.NoProxy...),
		Info: map[string]string{"mode": res.Mode, "endpoint": res.ProxyAddr.String(),
			"setup_us": fmt.Sprint(res.Elapsed.Microseconds())},
	}
	for _, f := range res.Listeners {
		out.Names, out.Files = append(out.Names, "net-refuse"), append(out.Files, f)
	}
	out.Names, out.Files = append(out.Names, "net-dns"), append(out.Files, res.DNS)
	if res.Resets != nil {
		out.Names, out.Files = append(out.Names, "net-resets"), append(out.Files, res.Resets)
	}
	return out, nil
}

// sandboxAddr is the sandbox's own address on its veth (init's memory only).
var sandboxAddr netip.Addr

// Hooks are init's feature hooks.
func Hooks() ns.Hooks {
	return ns.Hooks{
		Network: func(raw []byte) (ns.NetResult, error) {
			var c NetConfig
			if err := c.Unwire(raw); err != nil {
				return ns.NetResult{}, err
			}
			if c.Mode == nsnet.ModeNone {
				return netNone(c)
			}
			cfg := nsnet.Config{Fallback: c.Fallback, HostPorts: c.HostPorts}
			if fake, err := netip.ParsePrefix(c.Fake); err == nil {
				cfg.Fake = fake
			}
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
				Info: map[string]string{"mode": res.Mode, "proxy": res.ProxyAddr.String(),
					"setup_us": fmt.Sprint(res.Elapsed.Microseconds())},
			}
			if res.DNS != nil {
				out.Names = append(out.Names, "net-dns")
				out.Files = append(out.Files, res.DNS)
			}
			for _, f := range res.Listeners {
				out.Names, out.Files = append(out.Names, "net-refuse"), append(out.Files, f)
			}
			for _, f := range res.HostPorts {
				out.Names, out.Files = append(out.Names, "net-hostport"), append(out.Files, f)
			}
			if res.Resets != nil {
				out.Names, out.Files = append(out.Names, "net-resets"), append(out.Files, res.Resets)
			}
			if len(res.HostPortsTaken) > 0 {
				out.Info["host_ports_taken"] = fmt.Sprint(res.HostPortsTaken)
			}
			if res.Mode == nsnet.ModeProxyAware {
				out.Env = nsnet.ProxyEnv(res.ProxyAddr.String(), c.NoProxy...)
				if res.Reason != nil {
					out.Info["reason"] = res.Reason.Error()
				}
			} else {
				ep := netip.AddrPortFrom(res.GatewayAddr, proxyPort)
				out.Env = nsnet.ProxyEnv(ep.String(), c.NoProxy...)
				out.Info["endpoint"] = ep.String()
			}
			return out, nil
		},
		Landlock: func(raw []byte) (map[string]string, error) {
			var r landlock.Rules
			if err := LandlockUnwire(raw, &r); err != nil {
				return nil, err
			}
			// Paths the plan names but this sandbox lacks (no /dev/tty on
			// a detached runner) are dropped: fewer rights, never more.
			r.ReadExec = existing(r.ReadExec)
			r.ReadWrite = existing(r.ReadWrite)
			r.ReadOnly = existing(r.ReadOnly)
			r.DevIoctl = existing(r.DevIoctl)
			rep, err := r.ApplyAfterNoNewPrivs() // init's drop set it on every thread
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
		SeccompAgent: seccomp.InstallAgent,
		Dial: func(port int) (*os.File, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			return nsnet.DialInSandbox(ctx, uint16(port), sandboxAddr)
		},
		Seccomp: func(raw []byte) (*os.File, map[string]string, error) {
			var h SeccompHook
			if err := h.Unwire(raw); err != nil {
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
