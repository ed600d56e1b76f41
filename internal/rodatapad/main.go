// Command rodatapad prints how many bytes of read-only data make build adds
// to the lean init (cmd/jail-init's pad.go, replaced by go build -overlay) so that the
// mapping of its read-only segment holds a whole 2 MiB-aligned range: with
// the copy's page cache in 2 MiB folios (package initbin's writeBig) and
// the huge-page advice of the entry (package prefault), every start of
// init then maps that range by one page-table entry instead of 512 4 KiB
// ones (docs/performance.md, initfolio rows).
//
// It prints 0 when the segment holds such a range already, when the file
// is not a static ELF program laid out for it (its addresses and file
// offsets not congruent modulo 2 MiB), or when more than max bytes would
// be needed (the padding is file size: the lean init is ~4 MB, and jail
// embeds it; the linker's -R 0x200000 would do it for any size but doubles
// the lean init's file): then it says so on stderr and the build goes on
// as before. Usage: rodatapad PROGRAM.
package main

import (
	"debug/elf"
	"fmt"
	"os"
)

const (
	page = 4 << 10
	huge = 2 << 20
	// max bounds the padding: at most ~6% more of the lean init's file
	// (and of jail's, which embeds it) for one 2 MiB entry at each start.
	// The read-only data is under 2 MiB since session 33 (2.07 MB, from
	// 0x5d2000): to hold [0x600000, 0x800000) it needed 215 KB, which the
	// earlier bound of 96 KiB (one -X argument) left unpadded.
	max = 256 << 10
	// slack covers the alignment of the string's bytes among the
	// read-only data's other symbols.
	slack = 256
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: rodatapad PROGRAM")
		os.Exit(2)
	}
	f, err := elf.Open(os.Args[1])
	if err != nil {
		// Not ELF (another system's executable format): nothing to lay out.
		fmt.Println(0)
		return
	}
	defer f.Close()
	n, why := padding(f.Progs)
	if why != "" {
		fmt.Fprintf(os.Stderr, "rodatapad: %s: %s\n", os.Args[1], why)
	}
	fmt.Println(n)
}

// padding returns the bytes to add to the end of the read-only segment (the
// PT_LOAD that is readable only) so that its mapping, from its first page
// to its last one, holds a whole 2 MiB-aligned range; why is set when it
// returns 0 for another reason than that the segment holds one already.
func padding(progs []*elf.Prog) (n uint64, why string) {
	for _, p := range progs {
		if p.Type != elf.PT_LOAD || p.Flags != elf.PF_R {
			continue
		}
		if (p.Vaddr-p.Off)%huge != 0 {
			return 0, fmt.Sprintf("the read-only segment's address %#x and file offset %#x differ by other than a multiple of 2 MiB: no padding maps it by 2 MiB entries", p.Vaddr, p.Off)
		}
		start := p.Vaddr &^ (page - 1)
		end := p.Vaddr + p.Memsz // the mapping ends on its page's end
		want := (start+huge-1)&^(huge-1) + huge
		if (end+page-1)&^(page-1) >= want {
			return 0, ""
		}
		// The smallest n whose end's page reaches want, plus slack.
		n = want - (page - 1) - end + slack
		if n > max {
			return 0, fmt.Sprintf("the read-only segment [%#x, %#x) needs %d bytes more to hold a whole 2 MiB range, over %d: left as it is (its starts map it by 4 KiB entries)", start, end, n, max)
		}
		return n, ""
	}
	return 0, "no read-only PT_LOAD segment"
}
