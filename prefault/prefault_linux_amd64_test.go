package prefault

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probeUnderFilter names the program the test binary execs itself into
// after it installed the seccomp filter of TestEntryFallsBack.
const probeUnderFilter = "PREFAULT_TEST_EXEC_FILTERED"

func TestMain(m *testing.M) {
	if p := os.Getenv(probeUnderFilter); p != "" {
		execFiltered(p)
	}
	os.Exit(m.Run())
}

// execFiltered execs prog with a seccomp filter that answers
// madvise(MADV_POPULATE_READ or _WRITE) with EINVAL, as a kernel before
// 5.14 does,
// and lets every other system call through (the Go runtime's own madvise
// calls use other advice).
func execFiltered(prog string) {
	runtime.LockOSThread() // the filter is this thread's; exec from it
	const (
		ldAbsW     = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq        = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret        = unix.BPF_RET | unix.BPF_K
		archX86_64 = 0xc000003e
	)
	filter := []unix.SockFilter{
		{Code: ldAbsW, K: 4}, // seccomp_data.arch
		{Code: jeq, Jt: 0, Jf: 6, K: archX86_64},
		{Code: ldAbsW, K: 0}, // .nr
		{Code: jeq, Jt: 0, Jf: 4, K: unix.SYS_MADVISE},
		{Code: ldAbsW, K: 32}, // .args[2], low half
		{Code: jeq, Jt: 1, Jf: 0, K: unix.MADV_POPULATE_READ},
		{Code: jeq, Jt: 0, Jf: 1, K: unix.MADV_POPULATE_WRITE},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EINVAL)},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
	}
	prog_ := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "no_new_privs:", err)
		os.Exit(97)
	}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog_))); e != 0 {
		fmt.Fprintln(os.Stderr, "seccomp:", e)
		os.Exit(97)
	}
	env := []string{}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, probeUnderFilter+"=") {
			env = append(env, e)
		}
	}
	err := syscall.Exec(prog, []string{prog, "under", "filter"}, env)
	fmt.Fprintln(os.Stderr, "exec:", err)
	os.Exit(97)
}

// buildProbe builds testdata/probe, linked with the entry (entry) or
// without. It needs the Go toolchain and this module's source: the test
// binary run elsewhere (CI's unprivileged pass) skips, the root pass with
// the source runs it.
func buildProbe(t *testing.T, entry bool) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no Go toolchain to build the probe: %v", err)
	}
	if _, err := os.Stat("testdata/probe/main.go"); err != nil {
		t.Skipf("no probe source here: %v", err)
	}
	// The probe imports this package: it builds only inside the module
	// (CI's unprivileged pass runs this binary in a tree holding only the
	// package's testdata, with no go.mod; the root pass builds it).
	if mod, err := exec.Command(goBin, "env", "GOMOD").Output(); err != nil || !strings.HasSuffix(strings.TrimSpace(string(mod)), "go.mod") {
		t.Skipf("not in the repository: no go.mod to build the probe in (%q, %v)", strings.TrimSpace(string(mod)), err)
	}
	out := filepath.Join(t.TempDir(), "probe")
	args := []string{"build", "-o", out}
	if entry {
		args = append(args, "-ldflags=-E=jail_prefault_entry "+heapFlags)
	} else {
		args = append(args, "-ldflags="+heapFlags) // asked for, but without the entry
	}
	cmd := exec.Command(goBin, append(args, "./testdata/probe")...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the probe: %v\n%s", err, b)
	}
	return out
}

// heapFlags gives the probe a heap window as the Makefile gives jail's
// programs theirs: 256 KiB below its first object, 1 MiB above.
const heapFlags = "-X github.com/jail-sandbox/jail/prefault.heapBefore=256 -X github.com/jail-sandbox/jail/prefault.heapAfter=1024"

type probeOut struct {
	args, env, entered, err string
	auxvRuntime, auxvKernel string
	size, rss               map[string]int // by the mapping's permissions
	huge                    []string       // "perms true|false", each mapping of the executable
	heap                    string         // "start pages resident err E": HeapWindow and mincore at main
	heapPages, heapRes      int
	heapErr                 string
	bss                     string // "pages resident entered B err E": WriteResult and mincore of a bss variable
	bssPages, bssRes        int
	bssErr                  string
}

var probeLine = regexp.MustCompile(`(?m)^(args|env|entered|auxv-runtime|auxv-kernel|map|hg|heap|bss) (.*)$`)

func runProbe(t *testing.T, cmd *exec.Cmd) probeOut {
	t.Helper()
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("the probe: %v\n%s", err, b)
	}
	o := probeOut{size: map[string]int{}, rss: map[string]int{}}
	for _, m := range probeLine.FindAllStringSubmatch(string(b), -1) {
		switch m[1] {
		case "args":
			o.args = m[2]
		case "env":
			o.env = m[2]
		case "entered":
			o.entered, o.err, _ = strings.Cut(m[2], " err ")
		case "auxv-runtime":
			o.auxvRuntime = m[2]
		case "auxv-kernel":
			o.auxvKernel = m[2]
		case "hg":
			o.huge = append(o.huge, m[2])
		case "bss":
			o.bss = m[2]
			nums, e, _ := strings.Cut(m[2], " err ") // pages resident entered B err E
			if f := strings.Fields(nums); len(f) == 4 {
				o.bssPages, _ = strconv.Atoi(f[0])
				o.bssRes, _ = strconv.Atoi(f[1])
				o.bssErr = e
			}
		case "heap":
			o.heap = m[2]
			nums, e, _ := strings.Cut(m[2], " err ") // start pages resident err E
			if f := strings.Fields(nums); len(f) == 3 {
				o.heapPages, _ = strconv.Atoi(f[1])
				o.heapRes, _ = strconv.Atoi(f[2])
				o.heapErr = e
			}
		case "map":
			f := strings.Fields(m[2]) // perms Size|Rss KiB
			n, _ := strconv.Atoi(f[2])
			if f[1] == "Size" {
				o.size[f[0]] += n
			} else {
				o.rss[f[0]] += n
			}
		}
	}
	if o.args == "" || o.auxvKernel == "" || len(o.size) != 2 || o.heap == "" || o.bss == "" {
		t.Fatalf("the probe's output is short:\n%s", b)
	}
	return o
}

// checkStart: the program reached main with its arguments, its environment
// and its auxiliary vector as the kernel gave them (the Go runtime reads
// all three from the stack the entry must leave alone).
func checkStart(t *testing.T, o probeOut, wantArgs string) {
	t.Helper()
	if o.args != wantArgs {
		t.Errorf("args %s, want %s", o.args, wantArgs)
	}
	if o.env != `"marker-42"` {
		t.Errorf("environment variable %s, want \"marker-42\"", o.env)
	}
	if o.auxvRuntime != o.auxvKernel {
		t.Errorf("the runtime's auxiliary vector differs from the kernel's:\n%s\n%s", o.auxvRuntime, o.auxvKernel)
	}
}

// Started at the entry, the program reaches main intact and with all of
// its code and read-only data mapped. Seen failing with the entry's
// madvise calls removed (Rss below Size: 1404 of 1468 KiB of code, 1516 of
// 1708 of read-only data) and with a PUSHQ before the entry's jump (the
// runtime read the stack one word off: no arguments, no environment).
func TestEntryMapsAheadAndKeepsTheStart(t *testing.T) {
	p := buildProbe(t, true)
	cmd := exec.Command(p, "one", "two words")
	cmd.Env = append(os.Environ(), "PREFAULT_PROBE=marker-42")
	o := runProbe(t, cmd)
	checkStart(t, o, fmt.Sprintf("[%q \"one\" \"two words\"]", p))
	if o.entered != "true" || o.err != "<nil>" {
		t.Errorf("Result: entered %s, err %s; want true, <nil>", o.entered, o.err)
	}
	for perms, size := range o.size {
		if o.rss[perms] != size {
			t.Errorf("the %s mapping of the program has %d of %d KiB mapped at main, want all", perms, o.rss[perms], size)
		}
	}
	checkHuge(t, o)
	checkHeap(t, o)
	// The bss that holds pointers, made writable at the entry: an untouched
	// variable's pages resident at main. Seen failing with the entry's
	// POPULATEW of the bss removed (0 of 31 pages).
	if o.bssErr != "<nil>" || o.bssPages == 0 || o.bssRes != o.bssPages {
		t.Errorf("bss: %s; want every page of the probe's untouched variable resident, no error", o.bss)
	}
}

// checkHeap: the heap's window was made at the start: at least the part
// above the first object (the part below may be cut by the chunk's start,
// the part above by its end: at least one page), every page of it resident
// at main. Seen failing with the init's madvise removed (79 of 320 pages
// resident).
func checkHeap(t *testing.T, o probeOut) {
	t.Helper()
	if o.heapErr != "<nil>" || o.heapPages < 1 || o.heapPages > (256+1024)/4 {
		t.Fatalf("HeapWindow: %s; want a window of 1 to %d pages and no error", o.heap, (256+1024)/4)
	}
	if o.heapRes != o.heapPages {
		t.Errorf("%d of the heap window's %d pages resident at main, want all (%s)", o.heapRes, o.heapPages, o.heap)
	}
}

// checkHuge: the code's mapping has the huge-page advice, and no writable
// mapping of the program has it (there it would make the kernel fault in
// anonymous 2 MiB pages of data and bss). Seen failing with the code's
// advice removed, and with it stretched to runtime.end (over data and bss).
func checkHuge(t *testing.T, o probeOut) {
	t.Helper()
	code := false
	for _, h := range o.huge {
		perms, on, _ := strings.Cut(h, " ")
		if perms == "r-xp" && on == "true" {
			code = true
		}
		if strings.Contains(perms, "w") && on == "true" {
			t.Errorf("the writable mapping %s of the program has the huge-page advice", perms)
		}
	}
	if !code {
		t.Errorf("the program's code has no huge-page advice: %v", o.huge)
	}
}

// Where the kernel refuses the advice (before Linux 5.14: EINVAL, played
// here by a seccomp filter), the program starts as without the entry and
// Result says why nothing was mapped ahead. Seen failing with the entry
// made to exit on a refusal (exit status 1), and with the madvise calls
// removed (Result said nil: the filter's refusal must show).
func TestEntryFallsBack(t *testing.T) {
	p := buildProbe(t, true)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), "PREFAULT_PROBE=marker-42", probeUnderFilter+"="+p)
	o := runProbe(t, cmd)
	checkStart(t, o, fmt.Sprintf("[%q \"under\" \"filter\"]", p))
	if o.entered != "true" || o.err != syscall.EINVAL.Error() {
		t.Errorf("Result: entered %s, err %s; want true, %s", o.entered, o.err, syscall.EINVAL)
	}
	if o.heapPages < 1 || o.heapErr != syscall.EINVAL.Error() {
		t.Errorf("HeapWindow: %s; want a window and %s", o.heap, syscall.EINVAL)
	}
	if o.bssErr != syscall.EINVAL.Error() {
		t.Errorf("WriteResult: %s; want %s", o.bss, syscall.EINVAL)
	}
}

// A program not linked with the entry says so (Result is not true by
// default).
func TestResultWithoutEntry(t *testing.T) {
	p := buildProbe(t, false)
	cmd := exec.Command(p)
	cmd.Env = append(os.Environ(), "PREFAULT_PROBE=marker-42")
	o := runProbe(t, cmd)
	checkStart(t, o, fmt.Sprintf("[%q]", p))
	if o.entered != "false" || o.err != "<nil>" {
		t.Errorf("Result: entered %s, err %s; want false, <nil>", o.entered, o.err)
	}
	// A window asked for by the link, but the program did not start at
	// the entry (it did not opt in): nothing made. Seen failing with the
	// init's check of the entry removed (a window of 320 pages).
	if o.heapPages != 0 || o.heapErr != "<nil>" {
		t.Errorf("HeapWindow without the entry: %s; want none", o.heap)
	}
	// Without the entry the untouched variable is not resident: what the
	// entry's case measures is the populate, not the runtime.
	if o.bssPages == 0 || o.bssRes == o.bssPages || !strings.Contains(o.bss, "entered false") {
		t.Errorf("bss without the entry: %s; want its pages not resident, not entered", o.bss)
	}
}
