package kernelcheck

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseKernelConfig(t *testing.T) {
	in := "# comment\nCONFIG_VETH=y\nCONFIG_NFT_TPROXY=m\n# CONFIG_NF_TABLES is not set\nCONFIG_X = y\nnot a line\nCONFIG_NAME=\"v\"\n"
	cfg, err := parseKernelConfig(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"CONFIG_VETH": "y", "CONFIG_NFT_TPROXY": "m", "CONFIG_NAME": `"v"`} {
		if cfg[k] != v {
			t.Errorf("cfg[%s] = %q, want %q", k, cfg[k], v)
		}
	}
	if _, ok := cfg["CONFIG_NF_TABLES"]; ok {
		t.Error("'is not set' comment parsed as set")
	}
	if _, ok := cfg["CONFIG_X "]; ok {
		t.Error("malformed key accepted")
	}
}

func TestMissingConfig(t *testing.T) {
	all := map[string]string{}
	for _, k := range requiredConfig {
		all[k] = "y"
	}
	if m := missingConfig(all); len(m) != 0 {
		t.Errorf("all present: missing %v", m)
	}
	all["CONFIG_NFT_TPROXY"] = "m"
	if m := missingConfig(all); len(m) != 0 {
		t.Errorf("module counts as present: missing %v", m)
	}
	all["CONFIG_NFT_TPROXY"] = "n"
	delete(all, "CONFIG_VETH")
	if m := missingConfig(all); len(m) != 2 || m[0] != "CONFIG_VETH" || m[1] != "CONFIG_NFT_TPROXY" {
		t.Errorf("missing = %v, want [CONFIG_VETH CONFIG_NFT_TPROXY]", m)
	}
}

func TestParseModuleList(t *testing.T) {
	in := "kernel/drivers/net/veth.ko\nkernel/net/netfilter/nft_tproxy.ko.zst: kernel/net/netfilter/nf_tables.ko.xz\n" +
		"kernel/net/ipv4/netfilter/nf-tproxy-ipv4.ko.gz:\n\n.ko\nnoext\n"
	m, err := parseModuleList(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"veth", "nft_tproxy", "nf_tproxy_ipv4"} {
		if !m[k] {
			t.Errorf("module %s not found in %v", k, m)
		}
	}
	if m["nf_tables"] || m["noext"] || m[""] {
		t.Errorf("dependency or junk parsed as a module: %v", m)
	}
}

func FuzzParseKernelConfig(f *testing.F) {
	f.Add([]byte("CONFIG_VETH=y\n# CONFIG_X is not set\n"))
	f.Add([]byte("=\n==\nCONFIG_=\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, err := parseKernelConfig(bytes.NewReader(b))
		if err != nil {
			return
		}
		for k := range cfg {
			if !strings.HasPrefix(k, "CONFIG_") || strings.ContainsAny(k, " \t=\n") {
				t.Fatalf("bad key %q", k)
			}
		}
		_ = missingConfig(cfg)
	})
}

func FuzzParseModuleList(f *testing.F) {
	f.Add([]byte("kernel/net/netfilter/nft_tproxy.ko.zst: a.ko\n"))
	f.Add([]byte(".ko:\n/x/.ko\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseModuleList(bytes.NewReader(b))
		if err != nil {
			return
		}
		for k := range m {
			if k == "" || strings.ContainsAny(k, "/-:\n") {
				t.Fatalf("bad module name %q", k)
			}
		}
	})
}
