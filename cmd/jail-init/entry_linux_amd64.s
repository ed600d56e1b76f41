// The lean init's ELF entry (linked with -ldflags=-E=main.entry, amd64
// only): it runs before the Go runtime, on the kernel's initial stack, in a
// process with one thread. Started with argv[0] ns.EntryArg0 (by ns.Begin,
// through Go's vfork path: the supervisor is not forked), it makes init's
// namespaces and clones init as the supervisor's own child, which execs the
// lean init again as init (argv[0] ns.InitArg0); started any other way it
// goes straight to the Go runtime, as without it.
//
// Why before the runtime: unshare(CLONE_NEWUSER) needs a process with one
// thread, and the Go runtime starts threads before main (sysmon, the GC's
// workers). runc's nsexec runs in a C constructor before the runtime for
// the same reason. Nothing here may touch the stack above SP: the Go
// runtime's _rt0_amd64_linux reads argc, argv, the environment and the
// auxiliary vector from it exactly as the kernel left it.
//
// The protocol on fd 3 (init's socket, SOCK_SEQPACKET: one message a read),
// every message two little-endian uint64s (ns/entry_linux.go):
//   supervisor -> here: {clone flags, options (1: rootful, only with 16;
//                        2: ambient caps; 4: init runs on without its
//                        execve; 8: a user's start: the user namespace
//                        maps its user to itself here; 16, with 1: a
//                        rootful start whose init this process clones in
//                        all its namespaces at once and maps from outside;
//                        bits 32-63 the host id the namespace's 0 maps to.
//                        Exactly one of 8 and 16: this process maps every
//                        namespace it makes, the supervisor none)}
//   here -> supervisor: {'C', pid}      (option 16) init is cloned, not
//                                       yet mapped nor released: on any
//                                       failure the supervisor reaps it
//   here -> supervisor: {'P', pid}      init's pid; this process exits 0
//                       {'E', step<<32 | errno}   a step failed; exits 1
// The supervisor never answers: it waits for this process's exit.

#include "textflag.h"

#define SYS_read	0
#define SYS_write	1
#define SYS_poll	7
#define SYS_clone	56
#define SYS_setsid	112
#define SYS_setresuid	117
#define SYS_setresgid	119
#define SYS_prctl	157
#define SYS_exit_group	231
#define SYS_unshare	272
#define SYS_execve	59
#define SYS_capget	125
#define SYS_capset	126
#define SYS_open	2
#define SYS_close	3
#define SYS_getuid	102
#define SYS_getgid	104
#define SYS_socketpair	53
#define SYS_sendto	44
#define SYS_kill	62

#define CLONE_NEWUSER	0x10000000
#define CLONE_PARENT	0x00008000
#define SIGCHLD	17
#define SIGKILL	9
#define PR_SET_PDEATHSIG	1
#define PR_SET_NAME	15
#define PR_CAPBSET_DROP	24
#define PR_SET_SECUREBITS	28
#define PR_SET_NO_NEW_PRIVS	38
// ns' secbitNoroot|NorootLocked|NoSetuidFixup|NoSetuidFixupLocked|
// KeepCapsLocked|NoCapAmbientRaise|NoCapAmbientRaiseLocked (ns/caps_linux.go).
#define SECUREBITS	0xef
#define POLLERR	0x8
#define POLLHUP	0x10
#define POLLNVAL	0x20

#define FD	3
#define OPT_ROOTFUL	1
#define OPT_AMBIENT	2
#define OPT_NOEXEC	4
#define OPT_SELFMAP	8
#define OPT_PARENTMAP	16
#define AF_UNIX	1
#define SOCK_STREAM_CLOEXEC	0x80001
#define MSG_NOSIGNAL	0x4000
#define O_WRONLY_CLOEXEC	0x80001
#define EPERM	1
#define CAP_V3	0x20080522
#define PR_CAP_AMBIENT	47
#define PR_CAP_AMBIENT_RAISE	2
#define EINVAL	22

// "jail:init-entry\0": ns.EntryArg0 (ns' TestEntryArgs pins both names).
DATA entryarg0<>+0(SB)/8, $"jail:ini"
DATA entryarg0<>+8(SB)/8, $"t-entry\x00"
GLOBL entryarg0<>(SB), RODATA|NOPTR, $16

// "jail:init\0": ns.InitArg0, init's argv[0] (the same test).
DATA initarg0<>+0(SB)/8, $"jail:ini"
DATA initarg0<>+8(SB)/2, $"t\x00"
GLOBL initarg0<>(SB), RODATA|NOPTR, $10

// "jail-init\0": ns.InitComm, init's name for ps and top (the same test).
DATA initcomm<>+0(SB)/8, $"jail-ini"
DATA initcomm<>+8(SB)/2, $"t\x00"
GLOBL initcomm<>(SB), RODATA|NOPTR, $10

// "/proc/self/fd/4\0": the lean init's checked copy, as the old path execs it.
DATA exepath<>+0(SB)/8, $"/proc/se"
DATA exepath<>+8(SB)/8, $"lf/fd/4\x00"
GLOBL exepath<>(SB), RODATA|NOPTR, $16

// The user namespace's own map files (OPT_SELFMAP).
DATA uidmap<>+0(SB)/8, $"/proc/se"
DATA uidmap<>+8(SB)/8, $"lf/uid_m"
DATA uidmap<>+16(SB)/4, $"ap\x00\x00"
GLOBL uidmap<>(SB), RODATA|NOPTR, $20
DATA gidmap<>+0(SB)/8, $"/proc/se"
DATA gidmap<>+8(SB)/8, $"lf/gid_m"
DATA gidmap<>+16(SB)/4, $"ap\x00\x00"
GLOBL gidmap<>(SB), RODATA|NOPTR, $20
DATA setgroups<>+0(SB)/8, $"/proc/se"
DATA setgroups<>+8(SB)/8, $"lf/setgr"
DATA setgroups<>+16(SB)/8, $"oups\x00\x00\x00\x00"
GLOBL setgroups<>(SB), RODATA|NOPTR, $24
DATA deny<>+0(SB)/4, $"deny"
GLOBL deny<>(SB), RODATA|NOPTR, $4

// init's map files, from outside (OPT_PARENTMAP): "/proc/" PID, then one
// of the names (16 bytes each, NUL-padded: copied whole).
DATA procdir<>+0(SB)/8, $"/proc/\x00\x00"
GLOBL procdir<>(SB), RODATA|NOPTR, $8
DATA puidmap<>+0(SB)/8, $"/uid_map"
DATA puidmap<>+8(SB)/8, $"\x00\x00\x00\x00\x00\x00\x00\x00"
GLOBL puidmap<>(SB), RODATA|NOPTR, $16
DATA pgidmap<>+0(SB)/8, $"/gid_map"
DATA pgidmap<>+8(SB)/8, $"\x00\x00\x00\x00\x00\x00\x00\x00"
GLOBL pgidmap<>(SB), RODATA|NOPTR, $16
DATA psetgroups<>+0(SB)/8, $"/setgrou"
DATA psetgroups<>+8(SB)/8, $"ps\x00\x00\x00\x00\x00\x00"
GLOBL psetgroups<>(SB), RODATA|NOPTR, $16

// The message buffers and init's pollfd (struct pollfd {int fd; short
// events, revents}), in BSS: no stack below the kernel's is touched either.
GLOBL entryin<>(SB), NOPTR, $16
GLOBL entryout<>(SB), NOPTR, $16
GLOBL entrypoll<>(SB), NOPTR, $8
// capget/capset's header (8 bytes) and data (2 x 12 bytes); execve's argv.
GLOBL entrycaps<>(SB), NOPTR, $32
GLOBL entryargv<>(SB), NOPTR, $16
// The caller's uid and gid, a map line's digits and the line (OPT_SELFMAP).
GLOBL entryids<>(SB), NOPTR, $16
GLOBL entrydigits<>(SB), NOPTR, $24
GLOBL entryline<>(SB), NOPTR, $64
// OPT_PARENTMAP: init's release socket pair (two int32s) and the path of
// one of its map files ("/proc/" PID "/setgroups\0" fits in 32).
GLOBL entrypair<>(SB), NOPTR, $8
GLOBL entrypath<>(SB), NOPTR, $32

// REPORT sends {kind, val} (val in BX) to the supervisor.
#define REPORT(kind) \
	MOVQ	$kind, entryout<>+0(SB); \
	MOVQ	BX, entryout<>+8(SB); \
	MOVQ	$SYS_write, AX; \
	MOVQ	$FD, DI; \
	LEAQ	entryout<>(SB), SI; \
	MOVQ	$16, DX; \
	SYSCALL

// FAIL reports step's errno (-AX) and exits 1: no init was made.
#define FAIL(step) \
	NEGQ	AX; \
	MOVQ	$step, BX; \
	SHLQ	$32, BX; \
	ORQ	AX, BX; \
	REPORT('E'); \
	MOVQ	$SYS_exit_group, AX; \
	MOVQ	$1, DI; \
	SYSCALL

// FAILINIT kills the init cloned (pid in R15, never released), then
// FAILs: init is the supervisor's child, not this process's, and the
// supervisor, told its pid by 'C', reaps it.
#define FAILINIT(step) \
	MOVQ	AX, R8; \
	MOVQ	$SYS_kill, AX; \
	MOVQ	R15, DI; \
	MOVQ	$SIGKILL, SI; \
	SYSCALL; \
	MOVQ	R8, AX; \
	FAIL(step)

// RECV reads one message into entryin<>; anything but 16 bytes (EOF: the
// supervisor is gone) exits 1.
#define RECV \
	MOVQ	$SYS_read, AX; \
	MOVQ	$FD, DI; \
	LEAQ	entryin<>(SB), SI; \
	MOVQ	$16, DX; \
	SYSCALL; \
	CMPQ	AX, $16; \
	JNE	quit

TEXT main·entry(SB), NOSPLIT|NOFRAME|TOPFRAME, $0-0
	// argv[0] == "jail:init-entry"? argc is at 0(SP), argv[0] at 8(SP).
	MOVQ	0(SP), AX
	CMPQ	AX, $1
	JLT	runtime
	MOVQ	8(SP), SI
	LEAQ	entryarg0<>(SB), DI
	XORQ	CX, CX
cmp:
	MOVB	(SI)(CX*1), AX
	CMPB	AX, (DI)(CX*1)
	JNE	runtime
	TESTB	AX, AX
	JEQ	intermediate
	INCQ	CX
	CMPQ	CX, $16
	JLT	cmp
	JMP	runtime

intermediate:
	RECV
	MOVQ	entryin<>+0(SB), R12 // the clone flags
	MOVQ	entryin<>+8(SB), R13 // the options
	TESTQ	$OPT_PARENTMAP, R13
	JNE	parentmap

	// Any other start is a user's (OPT_SELFMAP, never with OPT_ROOTFUL):
	// one with neither map option is refused before anything is made (no
	// one else maps a namespace made here). The ids to map are read
	// before the unshare (after it they read as the overflow id until
	// mapped). uid 0 is refused: a map of 0 to 0 would be host root's,
	// and only a rootful start (OPT_PARENTMAP: host nobody) runs as 0.
	TESTQ	$OPT_SELFMAP, R13
	JEQ	nomapopt
	TESTQ	$OPT_ROOTFUL, R13
	JNE	selfmaproot
	MOVQ	$SYS_getuid, AX
	SYSCALL
	TESTQ	AX, AX
	JEQ	selfmaproot
	MOVQ	AX, entryids<>+0(SB)
	MOVQ	$SYS_getgid, AX
	SYSCALL
	MOVQ	AX, entryids<>+8(SB)

	// The user namespace first, alone: this process maps it (below)
	// before it makes the others, which are then made by and owned by
	// it, as a clone with all the flags at once would make them.
	MOVQ	$SYS_unshare, AX
	MOVQ	$CLONE_NEWUSER, DI
	SYSCALL
	CMPQ	AX, $0
	JNE	fail1

	// This process's own maps, as Go's fork writes ns.idMaps' from
	// outside on the fork path: uid_map, setgroups "deny" (why:
	// ns.cloneAttr), gid_map, each line "ID ID 1" (the user to itself,
	// alone). The kernel allows exactly that much to the namespace's
	// owner itself, and nothing more. Then the other namespaces (mount,
	// pid, ipc, uts, cgroup, net: the pid namespace takes effect for the
	// next child, init), at once.
	MOVQ	entryids<>+0(SB), AX
	LEAQ	uidmap<>(SB), R8
	MOVQ	$1, R9
	JMP	mapline
selfmapuid:
	MOVQ	$SYS_open, AX
	LEAQ	setgroups<>(SB), DI
	MOVQ	$O_WRONLY_CLOEXEC, SI
	XORQ	DX, DX
	SYSCALL
	CMPQ	AX, $0
	JLT	fail6
	MOVQ	AX, R10
	MOVQ	$SYS_write, AX
	MOVQ	R10, DI
	LEAQ	deny<>(SB), SI
	MOVQ	$4, DX
	SYSCALL
	CMPQ	AX, $4
	JNE	selfmapwrite
	MOVQ	$SYS_close, AX
	MOVQ	R10, DI
	SYSCALL
	MOVQ	entryids<>+8(SB), AX
	LEAQ	gidmap<>(SB), R8
	MOVQ	$2, R9
	JMP	mapline
selfmapgid:
	MOVQ	R12, DI
	ANDQ	$~CLONE_NEWUSER, DI
	MOVQ	$SYS_unshare, AX
	SYSCALL
	CMPQ	AX, $0
	JNE	fail4

clone:
	// init: pid 1 of the new pid namespace, and (CLONE_PARENT) a child of
	// the supervisor's thread that started this process, not of this
	// process: the supervisor waits for it, and its parent-death signal is
	// tied to that thread, as when Go's fork started it.
	MOVQ	$SYS_clone, AX
	MOVQ	$(CLONE_PARENT|SIGCHLD), DI
	XORQ	SI, SI
	XORQ	DX, DX
	XORQ	R10, R10
	XORQ	R8, R8
	SYSCALL
	CMPQ	AX, $0
	JEQ	init
	JLT	fail5
	MOVQ	AX, BX
	REPORT('P')
	MOVQ	$SYS_exit_group, AX
	XORQ	DI, DI
	SYSCALL

init:
	// A session of its own: init and the agent have no controlling
	// terminal of the host's, and the host terminal's signals reach jail
	// only (init gives the agent a terminal of its own where there is one).
	MOVQ	$SYS_setsid, AX
	SYSCALL
	CMPQ	AX, $0
	JLT	initquit
	// Init (and with it its pid namespace) dies with the supervisor's
	// thread that is its parent. Kept across the execve below: the lean
	// init is neither set-id nor file-capable.
	MOVQ	$SYS_prctl, AX
	MOVQ	$PR_SET_PDEATHSIG, DI
	MOVQ	$SIGKILL, SI
	XORQ	DX, DX
	XORQ	R10, R10
	XORQ	R8, R8
	SYSCALL
	CMPQ	AX, $0
	JNE	initquit
	// A supervisor that died before the prctl sends no signal: its end of
	// the socket is closed then (its files close before its children are
	// told), so a hang-up here means no supervisor; one that dies after
	// the prctl kills init. getppid cannot tell: init's parent is outside
	// its pid namespace, getppid is 0 either way.
	MOVL	$FD, entrypoll<>+0(SB)
	MOVL	$0, entrypoll<>+4(SB)
	MOVQ	$SYS_poll, AX
	LEAQ	entrypoll<>(SB), DI
	MOVQ	$1, SI
	XORQ	DX, DX
	SYSCALL
	CMPQ	AX, $0
	JLT	initquit
	MOVW	entrypoll<>+6(SB), AX
	TESTW	$(POLLERR|POLLHUP|POLLNVAL), AX
	JNE	initquit

	// No execve (the supervisor asks only when it is root on the host
	// with CAP_SYS_PTRACE, ns.entryNoExec): this process is already the
	// lean init, freshly exec'd from the same checked file with the same
	// environment, fds 0-4 (none close-on-exec: the entry opened nothing)
	// and every signal at its default or ignored, as the execve below
	// would leave it. What it keeps that the execve would reset is
	// stricter: it is not dumpable (mapwait's setresuid made it so,
	// unless fs.suid_dumpable is 1: then dumpable, as after the execve)
	// and its memory belongs to the supervisor's user namespace, not the
	// sandbox's, so no process of the sandbox can ptrace it or read its
	// /proc entries even before init drops its capabilities; root on the
	// host still can (ns.Config's rootful start; tests/initnoexec_test.go).
	// The ambient capabilities are not needed: nothing takes the
	// capabilities the user namespace gave it. Init's argv[0]
	// becomes InitArg0 in place (the kernel's copy: 16 bytes, the name
	// NUL-terminated after 9) and its name InitComm, here, on its one
	// thread: init's own write of /proc/self/comm is refused (the file
	// belongs to host root, the owner of a non-dumpable process whose
	// memory is in the host's user namespace). Then the Go runtime
	// starts, as init.
	TESTQ	$OPT_NOEXEC, R13
	JEQ	ambient

	// Three of init's walls that need no spec and that init, which never
	// execs, does not use itself, raised here on its one thread: every
	// thread the Go runtime makes is cloned from it and inherits them, so
	// init's privilege drop (ns.dropPrivileges) needs no AllThreadsSyscall
	// round for them (each signals every thread of init and waits for
	// all: 0.1-0.3 ms a round, several ms under load). They are what
	// dropPrivileges would set, only earlier: the bounding set emptied
	// (every capability up to the kernel's first EINVAL; execve can never
	// grant one back), the securebits set and locked, no_new_privs. None
	// takes a capability init uses: the effective and permitted sets stay
	// full (mounts, the network, the user-namespace limits) until
	// dropPrivileges empties them on every thread. A failure exits: the
	// supervisor then reports that init exited before its spec. Done,
	// entryPresets tells init's Go code (ns.EntryPreset).
	XORQ	R14, R14
bset:
	MOVQ	$SYS_prctl, AX
	MOVQ	$PR_CAPBSET_DROP, DI
	MOVQ	R14, SI
	XORQ	DX, DX
	XORQ	R10, R10
	XORQ	R8, R8
	SYSCALL
	CMPQ	AX, $0
	JEQ	bdropped
	CMPQ	AX, $-EINVAL
	JNE	initquit
	TESTQ	R14, R14 // EINVAL for capability 0: not the end of a list
	JEQ	initquit
	JMP	secbits
bdropped:
	// The sets are 64 bits wide: a kernel that knew more would keep one.
	CMPQ	R14, $64
	JGE	initquit
	INCQ	R14
	JMP	bset
secbits:
	MOVQ	$SYS_prctl, AX
	MOVQ	$PR_SET_SECUREBITS, DI
	MOVQ	$SECUREBITS, SI
	XORQ	DX, DX
	XORQ	R10, R10
	XORQ	R8, R8
	SYSCALL
	CMPQ	AX, $0
	JNE	initquit
	MOVQ	$SYS_prctl, AX
	MOVQ	$PR_SET_NO_NEW_PRIVS, DI
	MOVQ	$1, SI
	XORQ	DX, DX
	XORQ	R10, R10
	XORQ	R8, R8
	SYSCALL
	CMPQ	AX, $0
	JNE	initquit
	MOVL	$1, main·entryPresets(SB)

	MOVQ	8(SP), SI
	MOVB	$0, 9(SI)
	MOVL	$0, 10(SI)
	MOVB	$0, 14(SI)
	MOVQ	$SYS_prctl, AX
	MOVQ	$PR_SET_NAME, DI
	LEAQ	initcomm<>(SB), SI
	XORQ	DX, DX
	XORQ	R10, R10
	XORQ	R8, R8
	SYSCALL
	JMP	jail_prefault_entry(SB)

ambient:
	// Started by a user (not root), init's uid is not 0 inside, and
	// execve would take its capabilities (full, in its own user namespace
	// only): ambient capabilities carry them across, as Go's fork did
	// (SysProcAttr.AmbientCaps). Init clears them all before the agent.
	TESTQ	$OPT_AMBIENT, R13
	JEQ	exec
	MOVL	$CAP_V3, entrycaps<>+0(SB)
	MOVL	$0, entrycaps<>+4(SB)
	MOVQ	$SYS_capget, AX
	LEAQ	entrycaps<>+0(SB), DI
	LEAQ	entrycaps<>+8(SB), SI
	SYSCALL
	CMPQ	AX, $0
	JNE	initquit
	// inheritable = permitted, in both 32-bit halves ({effective,
	// permitted, inheritable} twice): an ambient capability must be both.
	MOVL	entrycaps<>+12(SB), AX
	MOVL	AX, entrycaps<>+16(SB)
	MOVL	entrycaps<>+24(SB), AX
	MOVL	AX, entrycaps<>+28(SB)
	MOVQ	$SYS_capset, AX
	LEAQ	entrycaps<>+0(SB), DI
	LEAQ	entrycaps<>+8(SB), SI
	SYSCALL
	CMPQ	AX, $0
	JNE	initquit
	// Raise every capability the kernel has: 0 up to the first EINVAL
	// (past cap_last_cap). Any other failure would leave init without a
	// capability it needs: init exits instead (the supervisor says init
	// exited before its spec), never runs with less than it should.
	XORQ	R14, R14
raise:
	MOVQ	$SYS_prctl, AX
	MOVQ	$PR_CAP_AMBIENT, DI
	MOVQ	$PR_CAP_AMBIENT_RAISE, SI
	MOVQ	R14, DX
	XORQ	R10, R10
	XORQ	R8, R8
	SYSCALL
	CMPQ	AX, $0
	JEQ	raised
	CMPQ	AX, $-EINVAL
	JEQ	exec
	JMP	initquit
raised:
	INCQ	R14
	CMPQ	R14, $64
	JLT	raise

exec:
	// init itself: the lean init again, exec'd as the old path execs it
	// (argv[0] InitArg0, the same environment, the same checked file on
	// fd 4), now inside its namespaces: its memory then belongs to its own
	// user namespace (as the old path's init's does: the supervisor, even
	// unprivileged, may still read its /proc entries once init is no
	// longer dumpable), and it starts the Go runtime afresh.
	LEAQ	initarg0<>(SB), AX
	MOVQ	AX, entryargv<>+0(SB)
	MOVQ	$0, entryargv<>+8(SB)
	MOVQ	0(SP), AX
	LEAQ	16(SP)(AX*8), DX // envp: past argv and its NULL
	MOVQ	$SYS_execve, AX
	LEAQ	exepath<>(SB), DI
	LEAQ	entryargv<>(SB), SI
	SYSCALL

initquit:
	MOVQ	$SYS_exit_group, AX
	MOVQ	$125, DI
	SYSCALL

runtime:
	// Any other start (init itself, as jail:init): the Go runtime, with
	// the lean init's code and read-only data mapped ahead first (package
	// prefault; its import is in entry_linux_amd64.go).
	JMP	jail_prefault_entry(SB)

quit:
	MOVQ	$SYS_exit_group, AX
	MOVQ	$1, DI
	SYSCALL

// mapline writes "AX AX 1\n" to the file named at R8, then goes back to
// selfmapuid (R9 1) or selfmapgid (R9 2). Every buffer is in BSS.
mapline:
	CALL	entryitoa<>(SB)
	LEAQ	entryline<>(SB), SI
	CALL	entrycopy<>(SB)
	MOVB	$' ', (SI)
	INCQ	SI
	CALL	entrycopy<>(SB)
	MOVB	$' ', 0(SI)
	MOVB	$'1', 1(SI)
	MOVB	$'\n', 2(SI)
	ADDQ	$3, SI
	LEAQ	entryline<>(SB), DX
	SUBQ	DX, SI
	MOVQ	SI, R14 // the line's length
	MOVQ	$SYS_open, AX
	MOVQ	R8, DI
	MOVQ	$O_WRONLY_CLOEXEC, SI
	XORQ	DX, DX
	SYSCALL
	CMPQ	AX, $0
	JLT	fail6
	MOVQ	AX, R10
	MOVQ	$SYS_write, AX
	MOVQ	R10, DI
	LEAQ	entryline<>(SB), SI
	MOVQ	R14, DX
	SYSCALL
	CMPQ	AX, R14
	JNE	selfmapwrite
	MOVQ	$SYS_close, AX
	MOVQ	R10, DI
	SYSCALL
	CMPQ	R9, $1
	JEQ	selfmapuid
	JMP	selfmapgid

// A short write is an error too (as ns.writeProc's): EIO then.
selfmapwrite:
	CMPQ	AX, $0
	JLT	fail6
	MOVQ	$-5, AX
	JMP	fail6

selfmaproot:
	MOVQ	$-EPERM, AX
	JMP	fail6

// parentmap: a rootful start (OPT_PARENTMAP; root's start has no other
// way). This process stays host root in the host's namespaces, clones
// init in all of its namespaces at once (the user namespace first, then
// the others, made by and owned by it: the kernel's order in
// copy_namespaces, as a user's start's unshares above make them), writes
// init's maps from outside as Go's fork writes ns.idMaps' on the fork
// path (uid_map "0 ID 1", setgroups "deny", gid_map "0 ID 1": host root
// in the parent namespace, with CAP_SETUID, CAP_SETGID and CAP_SETFCAP
// there, may map another id; a process inside may not) and only then
// releases init through a socket pair. Until released, init runs nothing
// but its wait: it has every capability of its new user namespace but is
// still host root's kuid 0, unmapped; released, it becomes the
// namespace's root (host nobody) itself before anything else (mapwait).
// init's pid goes to the supervisor ('C') as soon as it is cloned: init
// is the supervisor's child (CLONE_PARENT), which reaps it on any
// failure, its own (a thread that fails to leave the sandbox's v1
// cgroups: ns.entryUndo) or this process's. Should this process die
// before the release (a kill, the supervisor's death through Pdeathsig),
// init reads EOF and exits without running anything as root; should a
// step fail after the clone, init is killed here before the report.
parentmap:
	// Only for a rootful start (never with OPT_SELFMAP): another user's
	// map would be refused anyway, and only root's start maps host
	// nobody.
	TESTQ	$OPT_ROOTFUL, R13
	JEQ	parentmapuser
	TESTQ	$OPT_SELFMAP, R13
	JNE	parentmapuser
	MOVQ	$SYS_socketpair, AX
	MOVQ	$AF_UNIX, DI
	MOVQ	$SOCK_STREAM_CLOEXEC, SI
	XORQ	DX, DX
	LEAQ	entrypair<>(SB), R10
	SYSCALL
	CMPQ	AX, $0
	JNE	fail8
	// init: pid 1 of its pid namespace, the supervisor's child (as in
	// clone: above). CLONE_NEWUSER whatever the flags say: init is never
	// host root in the host's user namespace.
	MOVQ	$SYS_clone, AX
	MOVQ	R12, DI
	ORQ	$(CLONE_NEWUSER|CLONE_PARENT|SIGCHLD), DI
	XORQ	SI, SI
	XORQ	DX, DX
	XORQ	R10, R10
	XORQ	R8, R8
	SYSCALL
	CMPQ	AX, $0
	JEQ	mapwait
	JLT	fail5
	MOVQ	AX, R15 // init's pid
	MOVQ	AX, BX
	REPORT('C')
	CMPQ	AX, $16
	JNE	pmnotold
	MOVQ	$SYS_close, AX
	MOVL	entrypair<>+4(SB), DI
	SYSCALL

	// "/proc/PID" into entrypath<> (a pid has at most 7 digits).
	MOVQ	procdir<>(SB), AX
	MOVQ	AX, entrypath<>(SB)
	MOVQ	R15, AX
	CALL	entryitoa<>(SB)
	LEAQ	entrypath<>+6(SB), SI
	CALL	entrycopy<>(SB)
	MOVQ	SI, R14 // where a file's name goes

	// The map line "0 ID 1\n" (ID: the options' bits 32-63), its length
	// in BX.
	MOVQ	R13, AX
	SHRQ	$32, AX
	CALL	entryitoa<>(SB)
	LEAQ	entryline<>(SB), SI
	MOVB	$'0', 0(SI)
	MOVB	$' ', 1(SI)
	ADDQ	$2, SI
	CALL	entrycopy<>(SB)
	MOVB	$' ', 0(SI)
	MOVB	$'1', 1(SI)
	MOVB	$'\n', 2(SI)
	ADDQ	$3, SI
	LEAQ	entryline<>(SB), BX
	SUBQ	BX, SI
	MOVQ	SI, BX

	// uid_map (R9 1), setgroups (2), gid_map (3), in the order Go's fork
	// writes them, each in one write(2); a short write is an error (EIO).
	LEAQ	puidmap<>(SB), R8
	MOVQ	$1, R9
pmfile:
	MOVQ	0(R8), AX
	MOVQ	AX, 0(R14)
	MOVQ	8(R8), AX
	MOVQ	AX, 8(R14)
	MOVQ	$SYS_open, AX
	LEAQ	entrypath<>(SB), DI
	MOVQ	$O_WRONLY_CLOEXEC, SI
	XORQ	DX, DX
	SYSCALL
	CMPQ	AX, $0
	JLT	fail7init
	MOVQ	AX, R10
	LEAQ	entryline<>(SB), SI
	MOVQ	BX, DX
	CMPQ	R9, $2
	JNE	pmwrite
	LEAQ	deny<>(SB), SI
	MOVQ	$4, DX
pmwrite:
	MOVQ	DX, R8 // the length, to check
	MOVQ	$SYS_write, AX
	MOVQ	R10, DI
	SYSCALL
	CMPQ	AX, R8
	JNE	pmshort
	MOVQ	$SYS_close, AX
	MOVQ	R10, DI
	SYSCALL
	CMPQ	R9, $1
	JNE	pmgid
	LEAQ	psetgroups<>(SB), R8
	MOVQ	$2, R9
	JMP	pmfile
pmgid:
	CMPQ	R9, $2
	JNE	pmrelease
	LEAQ	pgidmap<>(SB), R8
	MOVQ	$3, R9
	JMP	pmfile

pmrelease:
	// One byte releases init (MSG_NOSIGNAL: an init already dead is
	// EPIPE here, not this process killed by SIGPIPE before it reports).
	MOVB	$'G', entryout<>+0(SB)
	MOVQ	$SYS_sendto, AX
	MOVL	entrypair<>+0(SB), DI
	LEAQ	entryout<>(SB), SI
	MOVQ	$1, DX
	MOVQ	$MSG_NOSIGNAL, R10
	XORQ	R8, R8
	XORQ	R9, R9
	SYSCALL
	CMPQ	AX, $1
	JNE	pmnorelease
	MOVQ	R15, BX
	REPORT('P')
	MOVQ	$SYS_exit_group, AX
	XORQ	DI, DI
	SYSCALL

// init, cloned by parentmap: it waits for its maps before anything else.
mapwait:
	// This process's copy of the releasing end closed first: once that
	// process is gone without a release, the read below sees EOF.
	MOVQ	$SYS_close, AX
	MOVL	entrypair<>+0(SB), DI
	SYSCALL
	MOVQ	$SYS_read, AX
	MOVL	entrypair<>+4(SB), DI
	LEAQ	entryin<>(SB), SI
	MOVQ	$1, DX
	SYSCALL
	CMPQ	AX, $1
	JNE	initquit
	MOVQ	$SYS_close, AX
	MOVL	entrypair<>+4(SB), DI
	SYSCALL
	// Host root (kuid 0) becomes the namespace's root, host nobody,
	// before init runs anything else: root's rights on the host are gone
	// before init runs a line of its own. Group first, as Go's fork
	// changes credentials (SysProcAttr.Credential) on the fork path. A
	// failure exits: the supervisor then says init exited before its
	// spec.
	MOVQ	$SYS_setresgid, AX
	XORQ	DI, DI
	XORQ	SI, SI
	XORQ	DX, DX
	SYSCALL
	CMPQ	AX, $0
	JNE	initquit
	MOVQ	$SYS_setresuid, AX
	XORQ	DI, DI
	XORQ	SI, SI
	XORQ	DX, DX
	SYSCALL
	CMPQ	AX, $0
	JNE	initquit
	JMP	init

// The supervisor did not hear of init: it is killed before this process
// exits (and, never released, would exit by itself at EOF).
pmnotold:
	CMPQ	AX, $0
	JLT	fail7init
	MOVQ	$-5, AX
	JMP	fail7init
pmshort:
	CMPQ	AX, $0
	JLT	fail7init
	MOVQ	$-5, AX
	JMP	fail7init
pmnorelease:
	CMPQ	AX, $0
	JLT	fail8init
	MOVQ	$-5, AX
	JMP	fail8init
parentmapuser:
	MOVQ	$-EPERM, AX
	JMP	fail7
fail7:
	FAIL(7)
fail8:
	FAIL(8)
fail7init:
	FAILINIT(7)
fail8init:
	FAILINIT(8)

// A start message with neither map option (the supervisor sends none:
// ns.spawnEntry): refused, EINVAL.
nomapopt:
	MOVQ	$-EINVAL, AX
	FAIL(9)

fail1:
	FAIL(1)
fail4:
	FAIL(4)
fail5:
	FAIL(5)
fail6:
	FAIL(6)

// entryitoa writes AX's decimal digits at the end of entrydigits<> and
// leaves DI at the first of them; it clobbers AX, CX and DX. entrycopy
// copies the digits from DI to the end of entrydigits<> to SI and leaves
// SI after the last; DI stays, so the same digits can be copied again; it
// clobbers BX, R10 and R11. The entry's three numbers (a user's id in its
// own map line, and for a rootful start init's pid in /proc/PID and the
// mapped id) go through them. Called on the stack the kernel gave the
// process: the return address lies below the SP at which the Go runtime
// later finds argc, and RET leaves SP as it was.
TEXT entryitoa<>(SB), NOSPLIT|NOFRAME, $0-0
	LEAQ	entrydigits<>+24(SB), DI
	MOVQ	$10, CX
itoadigit:
	XORQ	DX, DX
	DIVQ	CX
	ADDQ	$'0', DX
	DECQ	DI
	MOVB	DX, (DI)
	TESTQ	AX, AX
	JNE	itoadigit
	RET

TEXT entrycopy<>(SB), NOSPLIT|NOFRAME, $0-0
	LEAQ	entrydigits<>+24(SB), R11
	MOVQ	DI, R10
copydigit:
	MOVB	(R10), BX
	MOVB	BX, (SI)
	INCQ	R10
	INCQ	SI
	CMPQ	R10, R11
	JLT	copydigit
	RET
