#include "textflag.h"

#define SYS_clock_gettime	228
#define CLOCK_MONOTONIC	1

// func now() int64
TEXT ·now(SB), NOSPLIT, $16-8
	MOVQ	$SYS_clock_gettime, AX
	MOVQ	$CLOCK_MONOTONIC, DI
	LEAQ	ts-16(SP), SI
	SYSCALL
	CMPQ	AX, $0
	JNE	fail
	MOVQ	ts-16(SP), AX // tv_sec
	IMULQ	$1000000000, AX
	ADDQ	ts-8(SP), AX // tv_nsec
	MOVQ	AX, ret+0(FP)
	RET
fail:
	MOVQ	$0, ret+0(FP)
	RET
