package seccomp

import (
	"runtime"
	"sort"
)

// archInfo is one architecture jail's filters know: its name as the audit
// trail says it, its AUDIT_ARCH_* value and its syscall table.
type archInfo struct {
	Name  string
	Audit uint32
	table []sysEntry // sorted by name (zsyscalls.go)
}

// sysEntry is one syscall of a table.
type sysEntry struct {
	name string
	nr   uint16
}

// AUDIT_ARCH_* of the supported arches (include/uapi/linux/audit.h),
// spelled here because x/sys/unix has them on Linux only and the policy
// parser builds everywhere.
const (
	auditArchX86_64  = 0xc000003e
	auditArchAARCH64 = 0xc00000b7
)

// seccomp_data (include/uapi/linux/seccomp.h): nr, arch, then the six
// 64-bit arguments. Both supported arches are little-endian, so an
// argument's low 32 bits come first.
const (
	offNr   = 0
	offArch = 4

	x32Bit = 0x40000000 // __X32_SYSCALL_BIT
)

func offArgLo(i int) uint32 { return uint32(16 + 8*i) }

// offArgHi is argument i's high 32 bits (for a pointer's NULL test).
func offArgHi(i int) uint32 { return offArgLo(i) + 4 }

// The tables are static data (zsyscalls.go, generated from
// go-seccomp-bpf's): looking a name up is a binary search, and nothing is
// built at package init, which every jail process pays.
var (
	archX86_64  = archInfo{Name: "x86_64", Audit: auditArchX86_64}
	archAARCH64 = archInfo{Name: "aarch64", Audit: auditArchAARCH64}
)

// archFor returns the tables of GOARCH goarch.
func archFor(goarch string) (*archInfo, error) {
	switch goarch {
	case "amd64":
		a := archX86_64
		a.table = sysX86_64
		return &a, nil
	case "arm64":
		a := archAARCH64
		a.table = sysAARCH64
		return &a, nil
	}
	return nil, ErrUnsupportedArch
}

// archNative returns the tables of the architecture jail was built for.
func archNative() (*archInfo, error) { return archFor(runtime.GOARCH) }

// nr returns the number of syscall name, and whether a has it.
func (a *archInfo) nr(name string) (int, bool) {
	i := sort.Search(len(a.table), func(i int) bool { return a.table[i].name >= name })
	if i < len(a.table) && a.table[i].name == name {
		return int(a.table[i].nr), true
	}
	return 0, false
}

// existing returns the names a has, in order: a syscall that does not
// exist on an arch (iopl on arm64) cannot be called there.
func existing(a *archInfo, names []string) []string {
	var out []string
	for _, n := range names {
		if _, ok := a.nr(n); ok {
			out = append(out, n)
		}
	}
	return out
}
