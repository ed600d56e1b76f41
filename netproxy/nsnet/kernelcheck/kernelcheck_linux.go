//go:build linux

package kernelcheck

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Available reports, for `jail doctor`, whether this kernel can build the
// transparent egress path, from static facts only (kernel config, module lists,
// sysctls): it never creates a namespace. ok=false means Setup will fall back to
// ModeProxyAware; ok=true with an "unverified" reason means nothing could be read to
// decide. Probe, run inside a sandbox, gives the live answer.
func Available() (ok bool, reason string) {
	if b, err := os.ReadFile("/proc/sys/user/max_net_namespaces"); err == nil && strings.TrimSpace(string(b)) == "0" {
		return false, "network namespaces are disabled (user.max_net_namespaces=0): egress would be proxy-aware only; raise it with sysctl"
	}
	if cfg, src := kernelConfig(); cfg != nil {
		if miss := missingConfig(cfg); len(miss) > 0 {
			return false, "kernel (" + src + ") lacks " + strings.Join(miss, ", ") +
				": egress will be proxy-aware only (HTTP_PROXY-honouring programs); use a kernel >= 4.19 with nf_tables and nft_tproxy"
		}
		return true, "veth, nf_tables and nft_tproxy present (" + src + ")"
	}
	mods, src := moduleSet()
	var miss []string
	for _, m := range requiredModules {
		if _, err := os.Stat("/sys/module/" + m); err == nil || mods[m] {
			continue
		}
		miss = append(miss, m)
	}
	if len(miss) == 0 {
		return true, "veth, nf_tables and nft_tproxy present (" + src + ")"
	}
	if mods == nil {
		return true, "unverified: no kernel config or module list readable (and " + strings.Join(miss, ", ") +
			" not loaded yet); jail detects it at start and falls back to proxy-aware egress if needed"
	}
	return false, "kernel modules missing: " + strings.Join(miss, ", ") + ": egress will be proxy-aware only"
}

func kernelConfig() (map[string]string, string) {
	if f, err := os.Open("/proc/config.gz"); err == nil {
		defer f.Close()
		if z, err := gzip.NewReader(f); err == nil {
			if cfg, err := parseKernelConfig(io.LimitReader(z, 64<<20)); err == nil && len(cfg) > 0 {
				return cfg, "/proc/config.gz"
			}
		}
	}
	p := "/boot/config-" + release()
	if b, err := os.ReadFile(p); err == nil {
		if cfg, err := parseKernelConfig(bytes.NewReader(b)); err == nil && len(cfg) > 0 {
			return cfg, p
		}
	}
	return nil, ""
}

func moduleSet() (map[string]bool, string) {
	var all map[string]bool
	var srcs []string
	for _, n := range []string{"modules.builtin", "modules.dep"} {
		p := "/lib/modules/" + release() + "/" + n
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		m, err := parseModuleList(f)
		f.Close()
		if err != nil {
			continue
		}
		if all == nil {
			all = map[string]bool{}
		}
		for k := range m {
			all[k] = true
		}
		srcs = append(srcs, p)
	}
	if len(srcs) == 0 {
		return nil, "/sys/module"
	}
	return all, strings.Join(srcs, ", ")
}

func release() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}
