// jail_supervisor_entry, jail's ELF entry (make build links it with
// -ldflags=-E=jail_supervisor_entry on amd64): a global symbol, not a Go
// function, never called from Go.
//
// It runs on the kernel's initial stack, before the Go runtime, with one
// thread, and then jumps to package prefault's entry, which runs under the
// same rules: the stack untouched (the runtime reads argc, argv, the
// environment and the auxiliary vector from it as the kernel left them),
// DX (the ELF ABI's atexit function) kept in R8 across the system calls.
// SYSCALL clobbers AX, CX and R11; DI and SI carry its arguments.

#include "go_asm.h"
#include "textflag.h"

#define SYS_prctl	157
#define PR_SET_TIMERSLACK	29
#define PR_GET_TIMERSLACK	30

TEXT jail_supervisor_entry(SB), NOSPLIT|NOFRAME|TOPFRAME, $0-0
	MOVQ	DX, R8
	MOVQ	$1, ·entry+0(SB)
	// The caller's slack first (Caller): init hands it to the agent.
	MOVQ	$PR_GET_TIMERSLACK, DI
	XORQ	SI, SI
	XORQ	DX, DX
	MOVQ	$SYS_prctl, AX
	SYSCALL
	MOVQ	AX, ·entry+8(SB)
	// Unknown (a seccomp filter of the caller's refused prctl): leave the
	// slack alone; Caller then reads it as a thread's.
	CMPQ	AX, $0
	JLT	done
	MOVQ	$PR_SET_TIMERSLACK, DI
	MOVQ	$const_Supervisor, SI
	XORQ	DX, DX
	MOVQ	$SYS_prctl, AX
	SYSCALL
done:
	MOVQ	R8, DX
	JMP	jail_prefault_entry(SB)
