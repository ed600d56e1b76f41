package main

import (
	"debug/elf"
	"testing"
)

func TestPadding(t *testing.T) {
	seg := func(vaddr, off, memsz uint64) []*elf.Prog {
		return []*elf.Prog{
			{ProgHeader: elf.ProgHeader{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_X, Vaddr: 0x400000, Memsz: vaddr - 0x400000}},
			{ProgHeader: elf.ProgHeader{Type: elf.PT_LOAD, Flags: elf.PF_R, Vaddr: vaddr, Off: off, Memsz: memsz}},
			{ProgHeader: elf.ProgHeader{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_W, Vaddr: vaddr + memsz + 0x1000, Memsz: 0x1000}},
		}
	}
	for _, c := range []struct {
		name              string
		vaddr, off, memsz uint64
		want              uint64
		why               bool
	}{
		// The lean init of 7e66446: ends 0x6b0 short of 0x800000, in the
		// page before it: its mapping ends at 0x800000 already.
		{"mapping ends on the boundary", 0x5e4000, 0x1e4000, 0x21b950, 0, false},
		// A segment like 4883e12's, whose mapping ended at 0x7ff000.
		{"one page short", 0x5e4000, 0x1e4000, 0x21a9b0, 0x7ff000 - 0x5e4000 - 0x21a9b0 + 1 + 256, false},
		{"holds a range", 0x5e4000, 0x1e4000, 0x300000, 0, false},
		{"starts on a boundary", 0x600000, 0x200000, 0x200000, 0, false},
		// The lean init of 3ef4fe9: read-only data under 2 MiB, from
		// 0x5d2000 to 0x7cb840: 215 KB short, over the old bound of 96 KiB.
		{"under 2 MiB, from below a boundary", 0x5d2000, 0x1d2000, 0x1f9840, 0x800000 - 0xfff - 0x7cb840 + 256, false},
		{"too far short", 0x610000, 0x210000, 0x21b950, 0, true},
		{"past the bound", 0x5a0000, 0x1a0000, 0x1f9840, 0, true},
		{"offsets not congruent", 0x5e4000, 0x1e5000, 0x21a000, 0, true},
	} {
		n, why := padding(seg(c.vaddr, c.off, c.memsz))
		if n != c.want || (why != "") != c.why {
			t.Errorf("%s: padding = %d %q, want %d (a reason: %v)", c.name, n, why, c.want, c.why)
		}
		if n > 0 {
			// The padded segment's mapping holds [0x600000, 0x800000).
			if end := (c.vaddr + c.memsz + n + 0xfff) &^ 0xfff; end < 0x800000 {
				t.Errorf("%s: padded by %d the mapping ends at %#x", c.name, n, end)
			}
			if end := (c.vaddr + c.memsz + n - 256 - 1 + 0xfff) &^ 0xfff; end >= 0x800000 {
				t.Errorf("%s: %d is not the smallest padding (plus slack)", c.name, n)
			}
		}
	}
}
