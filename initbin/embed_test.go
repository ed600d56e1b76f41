//go:build jail_leaninit

package initbin

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"debug/gosym"
	"encoding/hex"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// The build embedded a whole program and its own sum (make build writes
// both; a stale sum would name the copy after another build).
func TestEmbeddedProgram(t *testing.T) {
	if !Embedded() {
		t.Fatal("built with jail_leaninit but nothing usable is embedded (make build writes initbin/jail-init and its .sum)")
	}
	h := sha256.Sum256(program)
	if got := hex.EncodeToString(h[:]); got != strings.TrimSpace(sum) {
		t.Fatalf("the embedded program's sha256 is %s, its .sum says %s", got, sum)
	}
	if !bytes.HasPrefix(program, []byte("\x7fELF")) {
		t.Fatal("the embedded program is not an ELF executable")
	}
}

// The lean init as shipped does not link jail doctor's kernel-config
// reader (compress/gzip, and with it compress/flate and hash/crc32, whose
// package inits cost init 20-35 page faults a start): read from the
// embedded program's own function table.
func TestEmbeddedProgramLinksNoGzip(t *testing.T) {
	_, tab := embeddedTable(t)
	pkgs := map[string]bool{}
	for i := range tab.Funcs {
		pkgs[tab.Funcs[i].PackageName()] = true
	}
	if !pkgs["github.com/jail-sandbox/jail/ns"] {
		t.Fatalf("ns not among the embedded program's %d packages: the reading is broken", len(pkgs))
	}
	for _, p := range []string{"compress/gzip", "compress/flate", "hash/crc32"} {
		if pkgs[p] {
			t.Errorf("the lean init links %s", p)
		}
	}
	// Nor a regular expression compiler: seccomp's guard rails (the
	// supervisor's) are compiled at a guard's first use, so init, which
	// never makes a guard, keeps neither regexp/syntax's parser nor the
	// unicode tables it holds alive (~10 page faults of init's start).
	for _, f := range []string{"regexp.compile", "regexp/syntax.Parse"} {
		if tab.LookupFunc(f) != nil {
			t.Errorf("the lean init links %s", f)
		}
	}
}

// On amd64 make build links the lean init with its own ELF entry, and says
// so (jail-init.entry): the program's ELF entry point is main.entry (read
// from its own function table), the one that starts init without a fork
// of the supervisor. A marker without the entry would make jail try it in
// vain each run; an entry without the marker would leave it unused.
func TestEmbeddedEntry(t *testing.T) {
	f, tab := embeddedTable(t)
	fn := tab.PCToFunc(f.Entry)
	name := "?"
	if fn != nil {
		name = fn.Name
	}
	switch {
	case runtime.GOARCH == "amd64" && !HasEntry():
		t.Errorf("amd64: the embedded lean init is not marked as having its entry (jail-init.entry %q)", entry)
	case HasEntry() && (fn == nil || fn.Name != "main.entry" || fn.Entry != f.Entry):
		t.Errorf("marked as having its entry, but its ELF entry %#x is in %s", f.Entry, name)
	case !HasEntry() && name == "main.entry":
		t.Errorf("its ELF entry is main.entry, but it is not marked so")
	}
}

// embeddedTable is the embedded program's ELF file and its own function
// table (.gopclntab; the build strips the symbol table).
func embeddedTable(t *testing.T) (*elf.File, *gosym.Table) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(program))
	if err != nil {
		t.Fatalf("the embedded program: %v", err)
	}
	pcln, text := f.Section(".gopclntab"), f.Section(".text")
	if pcln == nil || text == nil {
		t.Fatal("the embedded program has no .gopclntab or .text")
	}
	data, err := pcln.Data()
	if err != nil {
		t.Fatal(err)
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		t.Fatal(err)
	}
	return f, tab
}

// The embedded program lies in jail's writable data, which package
// prefault does not map ahead at every start, not in its read-only data,
// which it does (4 MB read only at the copy's extraction). Seen failing
// with program a string again ("r--p").
func TestEmbeddedProgramNotMappedAhead(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/maps")
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	at := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(program))))
	for _, l := range strings.Split(string(maps), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		a, err1 := strconv.ParseUint(lo, 16, 64)
		b, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || at < a || at >= b {
			continue
		}
		if !strings.Contains(f[1], "w") {
			t.Fatalf("the embedded program is in a %s mapping (%s), which prefault maps in full", f[1], l)
		}
		return
	}
	t.Fatalf("no mapping holds the embedded program at %#x", at)
}

// The embedded lean init's read-only segment, from its first page to its
// last, holds a whole 2 MiB-aligned range (make build pads it so when it
// falls short by up to 256 KiB: internal/rodatapad, cmd/jail-init's
// pad.go), which each start of init maps by one page-table entry. Seen
// failing with make build's padding step removed and GOAMD64=v3 (a layout
// 8 KiB short: "ends at 0x7fdc10, short of 0x800000"), and with the bound
// raised from 96 KiB over session 33's unpadded layout (215 KB short).
func TestEmbeddedProgramReadOnlyHolds2MiB(t *testing.T) {
	f, err := elf.NewFile(bytes.NewReader(program))
	if err != nil {
		t.Fatal(err)
	}
	const page, huge, maxPad = 4 << 10, 2 << 20, 256 << 10
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || p.Flags != elf.PF_R {
			continue
		}
		if (p.Vaddr-p.Off)%huge != 0 {
			t.Fatalf("the read-only segment's address %#x and file offset %#x are not congruent modulo 2 MiB", p.Vaddr, p.Off)
		}
		start, end := p.Vaddr&^(page-1), (p.Vaddr+p.Memsz+page-1)&^(page-1)
		want := (start+huge-1)&^(huge-1) + huge
		switch {
		case end >= want:
			t.Logf("the read-only segment [%#x, %#x) holds [%#x, %#x)", start, end, want-huge, want)
		case want-end+page <= maxPad:
			t.Fatalf("the read-only segment [%#x, %#x) ends at %#x, short of %#x: make build pads it (cmd/jail-init/pad.go)", start, end, p.Vaddr+p.Memsz, want)
		default:
			// Beyond what -X carries: make build leaves it (and says so).
			t.Logf("the read-only segment [%#x, %#x) is %d bytes short of a whole 2 MiB range: more than make build pads", start, end, want-end)
		}
		return
	}
	t.Fatal("the embedded program has no read-only PT_LOAD segment")
}
