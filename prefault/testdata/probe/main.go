// Command probe is package prefault's test program: linked with
// -ldflags=-E=jail_prefault_entry, it prints what it started with (its
// arguments, one variable of its environment, the auxiliary vector as the
// Go runtime read it and as the kernel gave it), how much of its read-only
// segments its page tables map and which of its mappings have the
// huge-page advice (the test reads the lines).
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"net/http" // weight: enough code and data that faults would not map it all
	"os"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/prefault"
)

// keep links the HTTP client and server, which the probe never runs: most
// of its code is then never touched, and without the prefault most of it
// is not mapped when main starts.
var keep = []any{http.ListenAndServe, http.Get}

// ptrs is 128 KiB of the bss that holds pointers (runtime.bss), never
// written: at main its pages are resident only if the entry made them.
var ptrs [16384]*int

func main() {
	fmt.Printf("args %q\n", os.Args)
	fmt.Printf("env %q\n", os.Getenv("PREFAULT_PROBE"))
	entered, err := prefault.Result()
	fmt.Printf("entered %v err %v\n", entered, err)
	// The heap's window made at the start, and how many of its pages are
	// resident now (mincore(2): without the window made, the pages the
	// program has not written yet are not).
	start, length, err := prefault.HeapWindow()
	fmt.Printf("heap %d %d %d err %v\n", start, length/4096, residentPages(start, length), err)
	// The bss's pages at main (mincore), whole pages of ptrs only.
	lo := (uintptr(unsafe.Pointer(&ptrs[0])) + 4095) &^ 4095
	hi := (uintptr(unsafe.Pointer(&ptrs[0])) + unsafe.Sizeof(ptrs)) &^ 4095
	bres := residentPages(lo, hi-lo)
	wentered, werr := prefault.WriteResult()
	fmt.Printf("bss %d %d entered %v err %v\n", (hi-lo)/4096, bres, wentered, werr)
	// The runtime's copy of the auxiliary vector (read from the stack the
	// entry left alone) against the kernel's own record of it.
	auxv, err := unix.Auxv()
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	var rt []string
	for _, v := range auxv {
		rt = append(rt, fmt.Sprintf("%d=%d", v[0], v[1]))
	}
	fmt.Printf("auxv-runtime %s\n", strings.Join(rt, ","))
	b, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	var k []string
	for i := 0; i+16 <= len(b); i += 16 {
		t, v := binary.LittleEndian.Uint64(b[i:]), binary.LittleEndian.Uint64(b[i+8:])
		if t == 0 {
			break
		}
		k = append(k, fmt.Sprintf("%d=%d", t, v))
	}
	fmt.Printf("auxv-kernel %s\n", strings.Join(k, ","))
	// The executable's read-only mappings (code; data and pclntab): size
	// and resident (mapped) KiB.
	exe, _ := os.Readlink("/proc/self/exe")
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	s := bufio.NewScanner(bytes.NewReader(smaps))
	var perms, mapPerms string
	var exeMap bool
	for s.Scan() {
		f := strings.Fields(s.Text())
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-") && len(f[1]) == 4: // a mapping's first line
			perms, exeMap = "", len(f) == 6 && f[5] == exe
			if exeMap && !strings.Contains(f[1], "w") {
				perms = f[1]
			}
			mapPerms = f[1]
		case exeMap && f[0] == "VmFlags:":
			// Whether the mapping has the huge-page advice (every
			// mapping of the executable, writable ones too).
			fmt.Printf("hg %s %v\n", mapPerms, slices.Contains(f[1:], "hg"))
		case perms != "" && (f[0] == "Size:" || f[0] == "Rss:"):
			n, _ := strconv.Atoi(f[1])
			fmt.Printf("map %s %s %d\n", perms, strings.TrimSuffix(f[0], ":"), n)
		}
	}
}

// residentPages counts the pages of [start, start+length) in memory
// (mincore(2)); 0 for an empty range.
func residentPages(start, length uintptr) int {
	if length == 0 {
		return 0
	}
	vec := make([]byte, (length+4095)/4096)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, start, length, uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		fmt.Println("error mincore:", e)
		os.Exit(1)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}
