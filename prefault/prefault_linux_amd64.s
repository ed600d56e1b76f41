// jail_prefault_entry, the entry of a program that imports package
// prefault (see its doc). A global symbol, not a Go function: it is never
// called from Go, and the assembler could not spell the module path's "-"
// for the lean init's entry to jump to it by a package-qualified name.
//
// It runs on the kernel's initial stack, before the Go runtime, with one
// thread. It touches neither the stack (the runtime's _rt0_amd64_linux
// reads argc, argv, the environment and the auxiliary vector from it
// exactly as the kernel left them) nor a register the runtime reads at its
// entry: only SP on amd64; DX (the ELF ABI's atexit function, 0 for a
// static program, ignored by Go) is kept anyway. SYSCALL clobbers AX, CX
// and R11; DI, SI and DX carry its arguments; R13 and R14 hold the
// huge-page advice's bounds.

#include "textflag.h"

#define SYS_madvise	28
#define MADV_HUGEPAGE	14
#define MADV_POPULATE_READ	22
#define MADV_POPULATE_WRITE	23

// POPULATE(start, end, advice, slot): madvise(start rounded down to its
// page, up to end, advice), its result (0 or -errno) kept in
// entryResult[slot]. Nothing else depends on it: refused (EINVAL before
// Linux 5.14, or a seccomp filter of the caller's), the pages fault in one
// by one as without this package.
//
// MADV_POPULATE_READ maps the read-only segments (Result's slots).
// MADV_POPULATE_WRITE makes the program's writable data and its bss
// (WriteResult's slots): the Go runtime and the package inits write them
// from their first steps (the data's pages were each a copy-on-write
// fault, the bss's a fresh page's), and the GC reads them; made writable
// here, each page is made in the kernel without a fault. Both are small (a
// few hundred KiB: the pointer-holding data and bss, runtime·data and
// runtime·bss; not the pointer-free bss, runtime·noptrbss, which is large
// and mostly untouched).
#define POPULATE(start, end, advice, slot) \
	MOVQ	$start, DI; \
	ANDQ	$~0xfff, DI; \
	MOVQ	$end, SI; \
	SUBQ	DI, SI; \
	MOVQ	$advice, DX; \
	MOVQ	$SYS_madvise, AX; \
	SYSCALL; \
	MOVQ	AX, ·entryResult+(slot*8)(SB)

// HUGE(start, end, slot): madvise(start, up to end, MADV_HUGEPAGE), its
// result kept in entryResult[slot] (not Result's: an advice only). On a
// mapping with this advice a fault on a page the page cache lacks reads
// the file in 2 MiB folios (filemap's do_sync_mmap_readahead), and a 2 MiB
// folio that is aligned in the file and in the mapping is then mapped by
// one page-table entry, here and in every later start of the same file:
// the populate below then maps those 2 MiB in one step instead of 512
// (measured: 0.64-1.0 against 1.1-1.4 ms for both populates, with two of
// the four possible 2 MiB ranges mapped so). Where the page cache already
// holds the file in smaller folios (a binary just written, by the linker
// or a copy) nothing changes until the kernel drops them. start and end are 2 MiB-aligned by the caller, or the
// mapping's own ends: an advice over part of a mapping splits it, and a
// mapping that starts past a 2 MiB boundary cannot map that 2 MiB by one
// entry. Only the read-only file mappings get it: never the data or bss,
// where it would make the kernel allocate anonymous huge pages.
#define HUGE(start, end, slot) \
	MOVQ	start, DI; \
	MOVQ	end, SI; \
	SUBQ	DI, SI; \
	JLE	5(PC); \
	MOVQ	$MADV_HUGEPAGE, DX; \
	MOVQ	$SYS_madvise, AX; \
	SYSCALL; \
	MOVQ	AX, ·entryResult+(slot*8)(SB)

TEXT jail_prefault_entry(SB), NOSPLIT|NOFRAME|TOPFRAME, $0-0
	MOVQ	DX, R12
	MOVQ	$1, ·entryResult+0(SB)
	// The code (the R E segment): from the 2 MiB boundary at or below its
	// start (the segment's first page, the ELF headers, lies below
	// runtime.text; with Go's default layout the segment starts at that
	// boundary, 0x400000), to its end, which is the mapping's end.
	MOVQ	$runtime·text(SB), R13
	ANDQ	$~0x1fffff, R13
	HUGE(R13, $runtime·etext(SB), 3)
	// The read-only data: from its start (the mapping's) to the last
	// 2 MiB boundary in it; the few pages after it stay as they are.
	MOVQ	$runtime·rodata(SB), R13
	ANDQ	$~0xfff, R13
	MOVQ	$runtime·epclntab(SB), R14
	ANDQ	$~0x1fffff, R14
	HUGE(R13, R14, 4)
	// The read-only data, the types and the pclntab (the R segment): the
	// runtime reads the pclntab on every stack walk, the types on
	// interface conversions, and package inits their tables. First: on a
	// cold page cache, with the code populated first, this range came in
	// small folios (the readahead that the code's faults set going); in
	// this order the last full 2 MiB of each range came in as 2 MiB folios
	// (the code's first 2 MiB holds the ELF headers, which execve reads
	// in small ones before the entry runs).
	POPULATE(runtime·rodata(SB), runtime·epclntab(SB), MADV_POPULATE_READ, 2)
	// The code (the R E segment).
	POPULATE(runtime·text(SB), runtime·etext(SB), MADV_POPULATE_READ, 1)
	// The data and the bss that hold pointers.
	POPULATE(runtime·data(SB), runtime·edata(SB), MADV_POPULATE_WRITE, 5)
	POPULATE(runtime·bss(SB), runtime·ebss(SB), MADV_POPULATE_WRITE, 6)
	MOVQ	R12, DX
	JMP	_rt0_amd64_linux(SB)
