//go:build linux

package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// make install puts the binary, with its version stamped, the man page and
// the three completion scripts under PREFIX (in DESTDIR), and they work.
func TestMakeInstall(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(file))
	if _, err := os.Stat(filepath.Join(root, "Makefile")); err != nil {
		t.Skipf("not in the repository (a copied test binary): %v", err)
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	// The build uses the Go caches of the user running the test. CI's
	// unprivileged pass runs this binary in root's checkout, whose module
	// cache it cannot read: the root pass proves make install there.
	env := os.Environ()
	if mc, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil {
		if _, err := os.ReadDir(strings.TrimSpace(string(mc))); err != nil {
			t.Skipf("the module cache is not readable by this user (%v): make install needs it", err)
		}
	}
	if gc, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		if unix.Access(strings.TrimSpace(string(gc)), unix.W_OK) != nil {
			env = append(env, "GOCACHE="+t.TempDir())
		}
	}
	dest := t.TempDir()
	// A control for the page-cache check below, written 2 MiB at a time
	// before the install, and another after it.
	writeBig(t, filepath.Join(dest, "control-before"))
	bin := t.TempDir()
	cmd := exec.Command("make", "install", "DESTDIR="+dest, "PREFIX=/opt/jailtest", "VERSION=v9.9.9-test", "BIN="+filepath.Join(bin, "jail"))
	cmd.Dir = root
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	prefix := filepath.Join(dest, "opt", "jailtest")
	for _, f := range []string{"bin/jail", "share/man/man1/jail.1", "share/bash-completion/completions/jail", "share/zsh/site-functions/_jail", "share/fish/vendor_completions.d/jail.fish"} {
		fi, err := os.Stat(filepath.Join(prefix, f))
		if err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	out, err := exec.Command(filepath.Join(prefix, "bin", "jail"), "version").Output()
	if err != nil || strings.TrimSpace(string(out)) != "jail v9.9.9-test" {
		t.Errorf("installed jail version: %q %v", out, err)
	}
	if out, err := exec.Command("bash", "-n", filepath.Join(prefix, "share/bash-completion/completions/jail")).CombinedOutput(); err != nil {
		t.Errorf("bash completion: %v %s", err, out)
	}
	// The installed program sits in the page cache in 2 MiB folios, as a
	// file written 2 MiB at a time does here, so that each start's populate
	// (package prefault) maps it by 2 MiB entries, not ~2,700 4 KiB ones
	// (the Makefile's bigwrite; docs/performance.md, suphead2 rows). Seen
	// failing with install -m 0755: 0 of 4,096 KiB.
	writeBig(t, filepath.Join(dest, "control-after"))
	if filePmdMapped(t, filepath.Join(dest, "control-before")) != 4096 || filePmdMapped(t, filepath.Join(dest, "control-after")) != 4096 {
		t.Logf("a file written 2 MiB at a time is not in 2 MiB folios here (a kernel or file system without large folios, or memory too fragmented for them): the installed jail's page cache is not checked")
	} else if n := filePmdMapped(t, filepath.Join(prefix, "bin", "jail")); n != 4096 {
		t.Errorf("the installed jail's first 4 MiB: %d KiB mapped by 2 MiB entries, want 4096 (written in 4 KiB folios?)", n)
	}
}

// writeBig writes 4 MiB of zeros to a new file at path, 2 MiB at a time.
func writeBig(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := f.Write(make([]byte, 2<<20)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// filePmdMapped maps the first 4 MiB of path read-only at a 2 MiB-aligned
// address with the huge-page advice, populates the mapping and returns how
// many KiB of it 2 MiB page-table entries map (smaps' FilePmdMapped): that
// is, how much of it the page cache holds in 2 MiB folios (a range not
// cached at all is read in with the advice, in 2 MiB folios).
func filePmdMapped(t *testing.T, path string) int {
	t.Helper()
	return filePmdMappedN(t, path, 4<<20)
}

// filePmdMappedN is filePmdMapped of the first size bytes (a multiple of
// 2 MiB, within the file).
func filePmdMappedN(t *testing.T, path string, size int) int {
	t.Helper()
	const huge = 2 << 20
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer unix.Close(fd)
	// An address range to place the file at, 2 MiB-aligned inside it.
	span, err := unix.Mmap(-1, 0, size+huge, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	defer unix.Munmap(span)
	first := uintptr(unsafe.Pointer(&span[0]))
	base := (first + huge - 1) &^ (huge - 1)
	p, err := unix.MmapPtr(fd, 0, unsafe.Pointer(&span[base-first]), uintptr(size), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_FIXED)
	if err != nil {
		t.Fatalf("mmap %s: %v", path, err)
	}
	m := unsafe.Slice((*byte)(p), size)
	if err := unix.Madvise(m, unix.MADV_HUGEPAGE); err != nil {
		t.Fatalf("madvise %s: %v", path, err)
	}
	if err := unix.Madvise(m, unix.MADV_POPULATE_READ); err != nil {
		t.Fatalf("populate %s: %v", path, err)
	}
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	start, in := fmt.Sprintf("%x-", base), false
	s := bufio.NewScanner(bytes.NewReader(b))
	for s.Scan() {
		f := strings.Fields(s.Text())
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-") && len(f[1]) == 4: // a mapping's first line
			in = strings.HasPrefix(f[0], start)
		case in && len(f) >= 2 && f[0] == "FilePmdMapped:":
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	t.Fatalf("no FilePmdMapped for the mapping of %s at %#x", path, base)
	return 0
}
