// Package seccomp builds and installs jail's seccomp filters and serves the
// exec-audit notifications they raise. It has three parts:
//
//   - The deny filter (Install, in the sandbox's init): a default-allow
//     deny-list in github.com/elastic/go-seccomp-bpf's policy form, behind a
//     hand-written prefix that (1) kills the process on any foreign
//     architecture (i386 `int 0x80`, the x32 ABI), because go-seccomp-bpf
//     sends foreign arches to the default action, which for a deny-list is
//     "allow"; and (2) checks the arguments whose kernel type is a 32-bit
//     int (ioctl request, socket family/type/protocol, socketpair family,
//     personality) on their low 32 bits only, because a 64-bit comparison
//     is bypassed by setting the high bits (CVE-2019-10063); (3) refuses every syscall that would
//     set a setuid or setgid bit (chmod, fchmod, fchmodat, fchmodat2, and
//     open, openat, creat, mknod, mknodat when they create), comparing mode
//     and flags on their low 32 bits, and answers openat2 (whose mode it
//     cannot read) with ENOSYS so callers fall back to openat; (4) allows
//     only the socket families the network namespace isolates, and no
//     MPTCP (which Landlock's TCP rules do not check), and under Replace
//     no io_uring (its socket op goes around both); (5) refuses socket
//     filters (setsockopt SO_ATTACH_FILTER and kin: classic BPF reaches
//     the kernel's BPF JIT without bpf(2)). The arch check, the
//     set-id rule and those network walls stay under Config.Replace: other
//     options' promises (--net none, --no-local-tcp) rest on them; so do
//     the terminal ioctl rules (TIOCSTI, TCXONC, TIOCEXCL...), which reach
//     the user's terminal when jail hands it on as stdin. The
//     rules and the attack each one stops are listed beside them in
//     rules_linux.go.
//   - The agent filter (InstallAgent, on init's agent thread only): no
//     prlimit64 setting pid 1's limits, so the agent cannot set init's
//     limits by its pid (it has init's uid); other pids stay allowed (an
//     inner jail's init sets its agent's limits). Without a pid
//     namespace (degraded: init not pid 1) no other process's limits at
//     all, and no other process's nice, scheduling policy or I/O priority
//     (the supervisor's, by the same uid). Every run, under Replace too.
//   - Precomputed, not linked: the deny-list's program for each arch is
//     generated (zfilter.go, with the syscall tables in zsyscalls.go) by
//     `go generate`, and a user's --seccomp policy is compiled by
//     compile.go, a port of the library's assembler. The library's arch
//     package built the syscall maps of every architecture at package
//     init, 3-8 ms of every jail process's start; it is now a test
//     dependency only, and TestGenerated, TestCompileMatchesLibrary and
//     FuzzCompileMatchesLibrary fail when either side drifts from it.
//     The hand-written prefixes take syscall numbers from the same tables
//     (asm.sys), so the arm64 filter is built and run in a BPF VM on
//     amd64 too (TestArm64FilterEmulated), against the kernel's numbers
//     (testdata/arm64-syscalls.golden, TestArm64TableMatchesKernel).
//   - The exec audit (Install with Config.ExecNotify):
//     SECCOMP_RET_USER_NOTIF for execve/execveat, for kill, tkill and
//     tgkill of SIGTSTP, and for listen, merged into the deny filter (mergeNotify: one
//     program, the kernel's result of the two), or a second filter where
//     the merged one cannot be loaded; init passes its listener fd to the
//     supervisor.
//   - The supervisor side (Serve, ServeWith): reads each notification, the
//     path, argv (from /proc/PID/mem) and cwd of the exec'ing process,
//     asks the Guard, reports an ExecEvent and answers CONTINUE or EPERM;
//     a SIGTSTP is a SignalEvent for Handlers.OnSignal, held until it
//     answers CONTINUE (the supervisor carries out a stop the kernel would
//     discard: a jail exec command's own, which leads its pty's session);
//     a listen is continued at once, its socket's address (read from a
//     copy of the caller's fd, pidfd_getfd) a ListenEvent for
//     Handlers.OnListen.
//
// The Guard (--block-command) is a GUARD RAIL AGAINST MISTAKES, NOT A
// SECURITY BOUNDARY: the argv is read from the memory of a process that
// may change it after we read it (TOCTOU; seccomp(2) says USER_NOTIF
// CONTINUE must never be used to implement a security policy), and anything
// that does its work without exec'ing a matching command (a script, an
// interpreter, a renamed copy of the binary, a syscall) is not seen.
// The boundary is the namespaces, Landlock and the deny filter.
//
// AF_UNIX sockets stay allowed: the sandbox has its own network namespace
// (abstract sockets are per net namespace), the mount tree hides host
// socket directories and masks the host's bound sockets elsewhere
// (sandbox/hostsockets.go), so there is nothing outside to connect to.
//
// Kernel versions: seccomp filters with TSYNC need 3.17, KILL_PROCESS 4.14,
// USER_NOTIF 5.0, USER_NOTIF_FLAG_CONTINUE 5.5, TSYNC together with
// NEW_LISTENER needs SECCOMP_FILTER_FLAG_TSYNC_ESRCH (5.7). clone3 exists
// since 5.3 (denied with ENOSYS so glibc falls back to clone, whose flags a
// filter can read; clone3 passes them in memory it cannot). On kernels
// without 5.7 features, or where a listener already exists above us (EBUSY,
// seen on WSL2), Install runs without exec audit and says so in Report.
// Linux only: elsewhere Install and Serve return ErrUnsupported.
package seccomp
