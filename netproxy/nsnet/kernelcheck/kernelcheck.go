// Package kernelcheck tells `jail doctor`, from static facts only (the
// kernel config, module lists, sysctls), whether this kernel can build
// nsnet's transparent egress path. It is apart from nsnet so that the
// sandbox's init, which links nsnet, does not link compress/gzip (for
// /proc/config.gz) and run its package inits at every start.
package kernelcheck

import (
	"bufio"
	"io"
	"path"
	"strings"
)

// requiredConfig lists the kernel options the transparent path needs ("y" or "m").
var requiredConfig = []string{
	"CONFIG_NET_NS", "CONFIG_USER_NS", "CONFIG_VETH", "CONFIG_IP_MULTIPLE_TABLES",
	"CONFIG_NF_TABLES", "CONFIG_NF_TABLES_INET", "CONFIG_NFT_TPROXY",
	"CONFIG_NF_TPROXY_IPV4", "CONFIG_NFT_REJECT", "CONFIG_NFT_REJECT_INET",
}

// requiredModules are the same needs as module names, for hosts without a readable
// kernel config (a module is fine if built in, loaded, or installed).
var requiredModules = []string{"veth", "nf_tables", "nft_tproxy", "nf_tproxy_ipv4", "nft_reject_inet"}

// parseKernelConfig reads a Kconfig .config: "CONFIG_X=y|m|value" lines; comments
// ("# CONFIG_X is not set") and malformed lines are ignored.
func parseKernelConfig(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || !strings.HasPrefix(k, "CONFIG_") || strings.ContainsAny(k, " \t") {
			continue
		}
		out[k] = v
	}
	return out, sc.Err()
}

// missingConfig returns the required options that are neither "y" nor "m".
func missingConfig(cfg map[string]string) []string {
	var miss []string
	for _, k := range requiredConfig {
		if v := cfg[k]; v != "y" && v != "m" {
			miss = append(miss, k)
		}
	}
	return miss
}

// parseModuleList reads modules.builtin or modules.dep ("kernel/net/x/veth.ko[.zst]:
// deps...") and returns module names with '-' normalised to '_' as the kernel does.
func parseModuleList(r io.Reader) (map[string]bool, error) {
	out := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		f, _, _ := strings.Cut(sc.Text(), ":")
		f = strings.TrimSpace(f)
		base := path.Base(f)
		i := strings.Index(base, ".ko")
		if f == "" || i <= 0 {
			continue
		}
		out[strings.ReplaceAll(base[:i], "-", "_")] = true
	}
	return out, sc.Err()
}
