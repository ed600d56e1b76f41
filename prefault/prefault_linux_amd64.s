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
// and R11; DI, SI and DX carry its arguments.

#include "textflag.h"

#define SYS_madvise	28
#define MADV_POPULATE_READ	22

// POPULATE(start, end, slot): madvise(start rounded down to its page, up
// to end, MADV_POPULATE_READ), its result (0 or -errno) kept in
// entryResult[slot] for Result. Nothing else depends on it: refused
// (EINVAL before Linux 5.14, or a seccomp filter of the caller's), the
// pages fault in one by one as without this package.
#define POPULATE(start, end, slot) \
	MOVQ	$start, DI; \
	ANDQ	$~0xfff, DI; \
	MOVQ	$end, SI; \
	SUBQ	DI, SI; \
	MOVQ	$MADV_POPULATE_READ, DX; \
	MOVQ	$SYS_madvise, AX; \
	SYSCALL; \
	MOVQ	AX, ·entryResult+(slot*8)(SB)

TEXT jail_prefault_entry(SB), NOSPLIT|NOFRAME|TOPFRAME, $0-0
	MOVQ	DX, R12
	MOVQ	$1, ·entryResult+0(SB)
	// The code (the R E segment).
	POPULATE(runtime·text(SB), runtime·etext(SB), 1)
	// The read-only data, the types and the pclntab (the R segment): the
	// runtime reads the pclntab on every stack walk, the types on
	// interface conversions, and package inits their tables.
	POPULATE(runtime·rodata(SB), runtime·epclntab(SB), 2)
	MOVQ	R12, DX
	JMP	_rt0_amd64_linux(SB)
