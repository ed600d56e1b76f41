//go:build linux

package tests

import (
	"fmt"
	"strings"
	"testing"
)

// Every jail process runs the whole binary's package initialisation
// before main: the supervisor, the sandbox's init (a re-exec of the same
// binary) and every `jail exec` client. These budgets keep it light
// (issue 16's startup goal, issue 13's exec goal). A package-level regexp,
// a map of every architecture's syscalls or a table built at init is paid
// two or three times on every start; build such things at first use.
const (
	// initAllocBudget bounds the allocations of all package inits (Go's
	// standard library included). 1,456 before the seccomp tables and the
	// regexps were made lazy; 516 after (Go 1.26); 441 once the DNS
	// server's library and the tables of config, gitguard and agentcfg
	// went (session 5); 550 by session 32, 401 once runtime/metrics and
	// google/nftables went (session 33).
	initAllocBudget = 480
	// initBytesBudget: 331 KB before, 102 KB after, 86 KB in session 5,
	// 65 KB in session 33.
	initBytesBudget = 96 << 10
	// ownAllocBudget bounds each of jail's own packages (sandbox's
	// session-name regexp alone was 852; gitguard's allowlist 50 until
	// session 5; the most now is seccomp's 12, four sync.OnceValue).
	ownAllocBudget = 32
	// ownBytesBudget bounds each of jail's own packages' init bytes:
	// fsrules' init appended the agent built-ins to Builtins, a 16,720-byte
	// copy (session 9: now one literal); the most now is sandbox's 1,056.
	ownBytesBudget = 4 << 10
)

// initsBanned are packages that must not be linked at all: their init
// is heavy and jail has a light replacement.
var initsBanned = map[string]string{
	// Its arch package builds the syscall maps of every architecture
	// (3-8 ms per process under load); seccomp/zsyscalls.go and
	// compile.go replace it, the library is a test dependency only.
	"github.com/elastic/go-seccomp-bpf": "seccomp's generated tables and compile.go",
	// Four maps of names in its init, the largest init of the binary
	// (0.6-0.9 ms per process); netproxy/dns.go reads and writes the
	// datagrams itself (FuzzDNSMatchesLibrary compares the two). The
	// standard library's vendored copy (vendor/golang.org/...) is net's.
	"golang.org/x/net/dns/dnsmessage": "netproxy/dns.go's own reader and writer",
	// Its init builds the description of every metric and of every
	// GODEBUG's counter (95 allocations, 0.3-0.5 ms per process here,
	// the second largest init of the binary), before main, for one read
	// under JAIL_TRACE; runtime.ReadMemStats gives those figures
	// (sandbox/traceheap_linux.go).
	"runtime/metrics": "runtime.ReadMemStats",
	// Linked for one nf_tables transaction a proxied start makes in init,
	// whose transport (mdlayher/netlink on Go's poller, two reads and a
	// fresh buffer per reply) was 1.8-3.4 ms of init's network setup;
	// netproxy/nsnet writes and sends the same bytes itself (its test
	// TestRulesBatchMatchesLibrary keeps the library as the reference).
	"github.com/google/nftables": "netproxy/nsnet's own nf_tables batch (nft_linux.go)",
}

type pkgInit struct {
	pkg           string
	bytes, allocs int
}

// parseInitTrace reads GODEBUG=inittrace=1 lines:
// "init PKG @0.5 ms, 0.1 ms clock, 1234 bytes, 5 allocs".
func parseInitTrace(stderr string) []pkgInit {
	var out []pkgInit
	for _, l := range strings.Split(stderr, "\n") {
		if !strings.HasPrefix(l, "init ") {
			continue
		}
		var p pkgInit
		var at, clock float64
		if _, err := fmt.Sscanf(l, "init %s @%f ms, %f ms clock, %d bytes, %d allocs", &p.pkg, &at, &clock, &p.bytes, &p.allocs); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// TestPackageInitIsLight runs the built binary with GODEBUG=inittrace=1
// and holds its package initialisation to the budgets above.
func TestPackageInitIsLight(t *testing.T) {
	r := run(t, runOpts{env: []string{"GODEBUG=inittrace=1"}}, "--version")
	mustCode(t, r, 0)
	inits := parseInitTrace(r.stderr)
	if len(inits) < 20 {
		t.Fatalf("only %d inittrace lines (GODEBUG=inittrace=1 not honoured?):\n%s", len(inits), r.stderr)
	}
	allocs, bytes := 0, 0
	for _, p := range inits {
		allocs += p.allocs
		bytes += p.bytes
		for banned, instead := range initsBanned {
			if p.pkg == banned || strings.HasPrefix(p.pkg, banned+"/") {
				t.Errorf("%s is linked and initialised (%d allocs, %d bytes): use %s", p.pkg, p.allocs, p.bytes, instead)
			}
		}
		if strings.HasPrefix(p.pkg, "github.com/jail-sandbox/jail") && p.allocs > ownAllocBudget {
			t.Errorf("%s: %d allocations in package init (budget %d): build it at first use", p.pkg, p.allocs, ownAllocBudget)
		}
		if strings.HasPrefix(p.pkg, "github.com/jail-sandbox/jail") && p.bytes > ownBytesBudget {
			t.Errorf("%s: %d bytes allocated in package init (budget %d): make it static data or build it at first use", p.pkg, p.bytes, ownBytesBudget)
		}
	}
	if allocs > initAllocBudget {
		t.Errorf("package inits: %d allocations (budget %d)", allocs, initAllocBudget)
	}
	if bytes > initBytesBudget {
		t.Errorf("package inits: %d bytes (budget %d)", bytes, initBytesBudget)
	}
	t.Logf("%d package inits, %d allocations, %d bytes", len(inits), allocs, bytes)
}
