package seccomp

import (
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

// fakeMem is a sparse address space: one mapped region [base, base+len).
type fakeMem struct {
	base uint64
	data []byte
}

func (m fakeMem) ReadAt(p []byte, off int64) (int, error) {
	a := uint64(off)
	if a < m.base || a >= m.base+uint64(len(m.data)) {
		return 0, io.EOF // like /proc/PID/mem on an unmapped page (EIO)
	}
	n := copy(p, m.data[a-m.base:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// image lays out argv strings and a pointer array in a fake memory image.
func image(base uint64, args []string) (fakeMem, uint64) {
	var strs []byte
	var ptrs []uint64
	for _, a := range args {
		ptrs = append(ptrs, base+uint64(len(strs)))
		strs = append(strs, a...)
		strs = append(strs, 0)
	}
	for len(strs)%8 != 0 {
		strs = append(strs, 0)
	}
	arr := base + uint64(len(strs))
	for _, p := range append(ptrs, 0) {
		strs = binary.LittleEndian.AppendUint64(strs, p)
	}
	return fakeMem{base: base, data: strs}, arr
}

func TestReadArgv(t *testing.T) {
	long := strings.Repeat("a", 10000) // crosses pages
	for _, tc := range []struct {
		name string
		base uint64
		args []string
	}{
		{"simple", 0x10000, []string{"/bin/sh", "-c", "true | cat"}},
		{"empty strings", 0x10000, []string{"", "", "x"}},
		{"unaligned near page end", 0x10ffd, []string{"ab", "cd"}},
		{"long", 0x20000, []string{"x", long, "y"}},
		{"none", 0x10000, nil},
	} {
		mem, arr := image(tc.base, tc.args)
		if tc.base%8 != 0 { // pointer arrays are aligned in practice, not required
			t.Logf("unaligned base %#x", tc.base)
		}
		got, err := readArgv(mem, arr)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if strings.Join(got, "\x00") != strings.Join(tc.args, "\x00") || len(got) != len(tc.args) {
			t.Errorf("%s: got %q", tc.name, got)
		}
	}
	if got, err := readArgv(fakeMem{}, 0); err != nil || got != nil {
		t.Errorf("NULL argv: %q, %v", got, err)
	}
}

func TestReadStringLimits(t *testing.T) {
	mem := fakeMem{base: 0x1000, data: []byte(strings.Repeat("z", 9000))} // no NUL
	s, err := readString(mem, 0x1000, 5000)
	if !errors.Is(err, errTruncated) || len(s) != 5000 {
		t.Errorf("truncation: len %d, %v", len(s), err)
	}
	s, err = readString(mem, 0x1000, 1<<20)
	if err == nil || len(s) != 9000 {
		t.Errorf("unterminated at end of mapping: len %d, %v", len(s), err)
	}
	if _, err := readString(mem, 0, 10); !errors.Is(err, errBadAddr) {
		t.Errorf("NULL: %v", err)
	}
	if _, err := readString(mem, 1<<63, 10); !errors.Is(err, errBadAddr) {
		t.Errorf("kernel address: %v", err)
	}
	// argv pointing at unmapped memory: error, no panic.
	bad := fakeMem{base: 0x1000, data: binary.LittleEndian.AppendUint64(nil, 0xdead0000)}
	bad.data = binary.LittleEndian.AppendUint64(bad.data, 0)
	if _, err := readArgv(bad, 0x1000); err == nil {
		t.Error("unmapped string: no error")
	}
}

// FuzzReadArgv: arbitrary memory images and start addresses never panic,
// never loop forever and respect the limits.
func FuzzReadArgv(f *testing.F) {
	mem, arr := image(0x10000, []string{"/bin/true", "-x"})
	f.Add(mem.data, uint64(0x10000), arr)
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, uint64(0), uint64(0))
	f.Add([]byte{}, uint64(0xfff8), uint64(0xfff8))
	f.Fuzz(func(t *testing.T, data []byte, base, addr uint64) {
		m := fakeMem{base: base, data: data}
		argv, _ := readArgv(m, addr)
		total := 0
		for _, a := range argv {
			total += len(a) + 1
		}
		if len(argv) > maxArgs || total > maxArgBytes+maxArgLen+1 {
			t.Fatalf("limits exceeded: %d args, %d bytes", len(argv), total)
		}
		s, _ := readString(m, addr, maxPathLen)
		if len(s) > maxPathLen {
			t.Fatalf("string of %d > %d", len(s), maxPathLen)
		}
	})
}
