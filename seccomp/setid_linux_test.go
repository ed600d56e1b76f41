package seccomp

// Tests of the set-id rule (issue 10, class 6): no syscall can leave a
// setuid or setgid file behind. The emulated table covers every syscall
// that takes a file mode, every mode shape and the high-bit trick; the
// live probes attack the kernel from a child holding every capability in
// its own user namespace, each with a control run without the filter.

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// setidWantArg is where the kernel reads the mode (and the open flags)
// of one syscall, written down here independently of rules_linux.go.
type setidWantArg struct {
	name  string
	mode  int // argument index of the mode
	flags int // argument index of the open flags, -1 when the mode always applies
}

var setidWant = []setidWantArg{
	{"chmod", 1, -1},     // chmod(path, mode)
	{"fchmod", 1, -1},    // fchmod(fd, mode)
	{"fchmodat", 2, -1},  // fchmodat(dfd, path, mode)
	{"fchmodat2", 2, -1}, // fchmodat2(dfd, path, mode, flags)
	{"creat", 1, -1},     // creat(path, mode)
	{"mknod", 1, -1},     // mknod(path, mode, dev)
	{"mknodat", 2, -1},   // mknodat(dfd, path, mode, dev)
	{"open", 2, 1},       // open(path, flags, mode)
	{"openat", 3, 2},     // openat(dfd, path, flags, mode)
}

func TestSetIDEmulated(t *testing.T) {
	info, native, err := nativeArch()
	if err != nil {
		t.Skip(err)
	}
	const tmpfile = unix.O_TMPFILE &^ unix.O_DIRECTORY // __O_TMPFILE
	for _, cfg := range []Config{{}, {AllowPtrace: true}, {Replace: true, Extra: &Policy{DefaultAction: ActionAllow, Syscalls: []SyscallGroup{{Names: []string{"keyctl"}, Action: ActionErrno}}}}} {
		ins, err := buildDeny(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range setidWant {
			nr, ok := info.nr(sc.name)
			if !ok {
				continue // open, creat, chmod, mknod: not on arm64
			}
			type c struct {
				what  string
				mode  uint64
				flags uint64
				deny  bool
			}
			cases := []c{
				{"0644", 0o644, 0, false},
				{"0755", 0o755, 0, false},
				{"01777 sticky", 0o1777, 0, false},
				{"S_IFREG|0644", unix.S_IFREG | 0o644, 0, false},
				{"04755", 0o4755, 0, true},
				{"02755", 0o2755, 0, true},
				{"06755", 0o6755, 0, true},
				{"04000 alone", 0o4000, 0, true},
				{"02000 alone", 0o2000, 0, true},
				{"S_IFREG|04755", unix.S_IFREG | 0o4755, 0, true},
				{"all bits", 0xffffffff, 0, true},
				// The high-bit trick: the kernel truncates the mode to
				// umode_t, a 64-bit compare of the whole register must not
				// be what decides.
				{"04755 + high bits", hi | 0o4755, 0, true},
				{"02755 + all high bits", 0xffffffff00000000 | 0o2755, 0, true},
				{"0755 + high bits", hi | 0o755, 0, false},
				// Bits only in the high word never reach the kernel.
				{"S_ISUID only in the high word", uint64(unix.S_ISUID) << 32, 0, false},
			}
			if sc.flags >= 0 {
				// The mode only counts when the call can create a file.
				for i := range cases {
					cases[i].flags = unix.O_CREAT | unix.O_WRONLY
				}
				cases = append(cases,
					c{"O_RDONLY with 04755 garbage", 0o4755, unix.O_RDONLY, false},
					c{"O_RDWR|O_TRUNC with 06755 garbage", 0o6755, unix.O_RDWR | unix.O_TRUNC, false},
					c{"O_TMPFILE 04755", 0o4755, unix.O_TMPFILE | unix.O_RDWR, true},
					c{"__O_TMPFILE alone 02755", 0o2755, tmpfile | unix.O_RDWR, true},
					c{"O_TMPFILE 0600", 0o600, unix.O_TMPFILE | unix.O_RDWR, false},
					c{"O_CREAT|O_EXCL 04700", 0o4700, unix.O_CREAT | unix.O_EXCL | unix.O_WRONLY, true},
					c{"O_CREAT + high flag bits 04755", 0o4755, hi | unix.O_CREAT, true},
					c{"O_CREAT only in the high word", 0o4755, uint64(unix.O_CREAT) << 32, false},
				)
			}
			for _, k := range cases {
				args := make([]uint64, 6)
				args[sc.mode] = k.mode
				if sc.flags >= 0 {
					args[sc.flags] = k.flags
				}
				want := uint32(retAllow)
				if k.deny {
					want = retEPERM
				}
				if got := runVM(t, ins, seccompInput(uint32(nr), native, args...)); got != want {
					t.Errorf("replace=%v %s %s (flags %#o): %#x, want %#x", cfg.Replace, sc.name, k.what, k.flags, got, want)
				}
			}
		}
		// openat2 hides its mode in struct open_how, out of the filter's
		// reach: ENOSYS, so that callers fall back to openat.
		if got := runVM(t, ins, seccompInput(uint32(info.mustNr("openat2")), native)); got != retENOSYS {
			t.Errorf("replace=%v openat2: %#x, want ENOSYS", cfg.Replace, got)
		}
		// Unrelated syscalls with the same argument shapes stay allowed.
		for _, name := range []string{"mkdirat", "fchownat", "faccessat", "read", "write"} {
			if got := runVM(t, ins, seccompInput(uint32(info.mustNr(name)), native, 0, 0, 0o6755, 0o6755)); got != retAllow {
				t.Errorf("replace=%v %s with 06755 args: %#x, want allow", cfg.Replace, name, got)
			}
		}
	}
}

// setidProbes attack the set-id rule live. Each creates its file in a
// fresh temporary directory of the host's /tmp (the child has its own
// user namespace, so the files are ours).
var setidProbes = map[string]func() error{
	"chmod-suid":  func() error { return setidOnFile(func(p string) error { return unix.Chmod(p, 0o4755) }) },
	"chmod-sgid":  func() error { return setidOnFile(func(p string) error { return unix.Chmod(p, 0o2755) }) },
	"chmod-plain": func() error { return setidOnFile(func(p string) error { return unix.Chmod(p, 0o755) }) },
	"chmod-suid-highbits": func() error {
		return setidOnFile(func(p string) error { return rawPath(sysNr("chmod"), p, hi|0o4755) })
	},
	"fchmod-suid": func() error {
		return setidOnFile(func(p string) error {
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			return unix.Fchmod(int(f.Fd()), 0o4755)
		})
	},
	"fchmodat-suid": func() error {
		return setidOnFile(func(p string) error { return unix.Fchmodat(unix.AT_FDCWD, p, 0o6755, 0) })
	},
	// fchmodat2 with AT_EMPTY_PATH on an O_PATH descriptor: the way glibc
	// and Go chmod without following a symlink, and the O_PATH route.
	"fchmodat2-opath-suid": func() error {
		return setidOnFile(func(p string) error {
			fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			empty := []byte{0}
			_, _, e := unix.Syscall6(unix.SYS_FCHMODAT2, uintptr(fd), uintptr(unsafe.Pointer(&empty[0])), 0o4755, unix.AT_EMPTY_PATH, 0, 0)
			if e != 0 {
				return e
			}
			return nil
		})
	},
	"chmod-proc-fd-suid": func() error {
		return setidOnFile(func(p string) error {
			fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			return unix.Chmod("/proc/self/fd/"+itoa(fd), 0o4755)
		})
	},
	"openat-creat-suid": func() error {
		return setidInDir(func(d string) error { return openClose(filepath.Join(d, "f"), unix.O_CREAT|unix.O_WRONLY, 0o4755) })
	},
	"openat-creat-plain": func() error {
		return setidInDir(func(d string) error { return openClose(filepath.Join(d, "f"), unix.O_CREAT|unix.O_WRONLY, 0o755) })
	},
	"openat-creat-highbits": func() error {
		return setidInDir(func(d string) error {
			return openClose(filepath.Join(d, "f"), int(hi|unix.O_CREAT|unix.O_WRONLY), hi|0o2755)
		})
	},
	"openat-nocreat-garbage-mode": func() error {
		return setidOnFile(func(p string) error { return openClose(p, unix.O_RDONLY, 0o6755) })
	},
	"openat-tmpfile-suid": func() error {
		return setidInDir(func(d string) error { return openClose(d, unix.O_TMPFILE|unix.O_RDWR, 0o4755) })
	},
	"mknodat-suid": func() error {
		return setidInDir(func(d string) error {
			return unix.Mknodat(unix.AT_FDCWD, filepath.Join(d, "f"), unix.S_IFREG|0o4755, 0)
		})
	},
	"openat2-creat": func() error {
		return setidInDir(func(d string) error {
			how := unix.OpenHow{Flags: unix.O_CREAT | unix.O_WRONLY | unix.O_CLOEXEC, Mode: 0o4755}
			fd, err := unix.Openat2(unix.AT_FDCWD, filepath.Join(d, "f"), &how)
			if err == nil {
				unix.Close(fd)
			}
			return err
		})
	},
}

func init() {
	for k, v := range setidProbes {
		probes[k] = v
	}
}

// sysNr is the native number of a syscall that may not exist on every
// arch (chmod is x86-only); -1 when missing.
func sysNr(name string) int {
	info, _, err := nativeArch()
	if err != nil {
		return -1
	}
	if nr, ok := info.nr(name); ok {
		return nr
	}
	return -1
}

func rawPath(nr int, p string, a uint64) error {
	if nr < 0 {
		return unix.ENOSYS
	}
	b, err := unix.BytePtrFromString(p)
	if err != nil {
		return err
	}
	_, _, e := unix.Syscall(uintptr(nr), uintptr(unsafe.Pointer(b)), uintptr(a), 0)
	if e != 0 {
		return e
	}
	return nil
}

// atFDCWD is AT_FDCWD (-100) as a register value.
var atFDCWD = func() uintptr { v := unix.AT_FDCWD; return uintptr(v) }()

// openClose opens with the raw syscall (os.OpenFile would mask the mode
// to its permission bits) and closes. Flags and mode are passed whole,
// high bits included.
func openClose(p string, flags int, mode uint64) error {
	b, err := unix.BytePtrFromString(p)
	if err != nil {
		return err
	}
	fd, _, e := unix.Syscall6(unix.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(b)), uintptr(flags), uintptr(mode), 0, 0)
	if e != 0 {
		return e
	}
	return unix.Close(int(fd))
}

func setidInDir(f func(dir string) error) error {
	d, err := os.MkdirTemp("", "jail-setid-probe")
	if err != nil {
		return err
	}
	defer os.RemoveAll(d)
	syscall.Umask(0)
	return f(d)
}

func setidOnFile(f func(path string) error) error {
	return setidInDir(func(d string) error {
		p := filepath.Join(d, "f")
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			return err
		}
		return f(p)
	})
}

// TestSetIDProbes: every way to make a set-id file fails with EPERM under
// the filter and works without it (so the probe proves the rule); plain
// modes and opens without O_CREAT keep working.
func TestSetIDProbes(t *testing.T) {
	requireUserns(t)
	cases := []probeCase{
		{"chmod-suid", "EPERM", false},
		{"chmod-sgid", "EPERM", false},
		{"chmod-plain", "ok", true},
		{"fchmod-suid", "EPERM", false},
		{"fchmodat-suid", "EPERM", false},
		{"fchmodat2-opath-suid", "EPERM", false},
		{"chmod-proc-fd-suid", "EPERM", false},
		{"openat-creat-suid", "EPERM", false},
		{"openat-creat-plain", "ok", true},
		{"openat-creat-highbits", "EPERM", false},
		{"openat-nocreat-garbage-mode", "ok", true},
		{"openat-tmpfile-suid", "EPERM", false},
		{"mknodat-suid", "EPERM", false},
		{"openat2-creat", "ENOSYS", false},
	}
	if sysNr("chmod") >= 0 {
		cases = append(cases, probeCase{"chmod-suid-highbits", "EPERM", false})
	}
	for _, pc := range cases {
		t.Run(pc.name, func(t *testing.T) {
			got := runProbe(t, pc.name, true)
			ctl := runProbe(t, pc.name, false)
			if pc.allow {
				if got.String() != "ok" || ctl.String() != "ok" {
					t.Fatalf("with filter: %s, without: %s; both must be ok (%s)", got, ctl, got.Stderr)
				}
				return
			}
			if got.String() != pc.want {
				t.Fatalf("with filter: %s, want %s (stderr: %s)", got, pc.want, got.Stderr)
			}
			if ctl.String() != "ok" {
				skipOrFail(t, "probe cannot prove the rule here: without the filter it gives %s, not ok", ctl)
			}
		})
	}
}
