package main

import (
	"debug/elf"
	"debug/gosym"
	"os"
	"testing"
)

// TestLeanInitImports holds the lean init to what init needs: the point of
// the program is what it does not link. A new import of netproxy (HTTP,
// TLS), of the supervisor or of the CLI's packages fails here.
//
// It reads the packages from this test binary's own symbol table (the test
// links everything main links, plus testing and debug/elf), not from `go
// list`: CI runs the package's test binary as an unprivileged user in a
// directory without the module or the toolchain.
func TestLeanInitImports(t *testing.T) {
	if keepMain == nil {
		t.Fatal("main is not linked")
	}
	pkgs := linkedPackages(t)
	for _, banned := range []string{
		"net/http", "crypto/tls", "crypto/x509",
		"github.com/jail-sandbox/jail",
		"github.com/jail-sandbox/jail/netproxy",
		"github.com/jail-sandbox/jail/sandbox",
		"github.com/jail-sandbox/jail/policy",
		"github.com/jail-sandbox/jail/config",
		"github.com/jail-sandbox/jail/audit",
	} {
		if pkgs[banned] {
			t.Errorf("the lean init links %s", banned)
		}
	}
	// Seen: 128 (jail's own binary links about 265 packages). The
	// bound catches a heavy new dependency, not a small helper package.
	if len(pkgs) > 160 {
		t.Errorf("the lean init's test binary links %d packages, budget 160", len(pkgs))
	}
	if !pkgs["github.com/jail-sandbox/jail/ns"] {
		t.Fatalf("ns not found among %d packages: the symbol reading is broken", len(pkgs))
	}
}

// keepMain makes the linker keep main and all it reaches in the test
// binary: a test never calls main, and unreached code is not linked.
var keepMain = main

// linkedPackages is the set of package paths of this binary's functions,
// read from its pclntab (the table the runtime itself needs: `go test`
// strips the ELF symbol table, never that).
func linkedPackages(t *testing.T) map[string]bool {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatalf("open the test binary: %v", err)
	}
	defer f.Close()
	pcln, text := f.Section(".gopclntab"), f.Section(".text")
	if pcln == nil || text == nil {
		t.Fatalf("the test binary %s has no .gopclntab or .text", exe)
	}
	data, err := pcln.Data()
	if err != nil {
		t.Fatalf("read the test binary's pclntab: %v", err)
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		t.Fatalf("the test binary's function table: %v", err)
	}
	pkgs := map[string]bool{}
	for i := range tab.Funcs {
		if p := tab.Funcs[i].PackageName(); p != "" {
			pkgs[p] = true
		}
	}
	return pkgs
}
