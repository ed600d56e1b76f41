package sandbox

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/cgroup"
	"github.com/jail-sandbox/jail/landlock"
	"github.com/jail-sandbox/jail/netproxy/nsnet"
)

// Doctor reports what this machine offers jail and what is in force for the
// invoking user, with the fix for each missing piece. It changes nothing
// (a cgroup it opens to find out is removed at once).
func Doctor(w io.Writer) int {
	var uts unix.Utsname
	_ = unix.Uname(&uts)
	read := func(p string) string {
		b, _ := os.ReadFile(p)
		return strings.TrimSpace(string(b))
	}
	line := func(what, state, note string) {
		fmt.Fprintf(w, "%-18s %-14s %s\n", what, state, note)
	}
	fmt.Fprintf(w, "jail %s on Linux %s, uid %d\n\n", Version, unix.ByteSliceToString(uts.Release[:]), os.Getuid())
	ok := true

	// User namespaces: the one hard requirement.
	switch {
	case read("/proc/sys/user/max_user_namespaces") == "0":
		line("user namespaces", "disabled", "sudo sysctl user.max_user_namespaces=15000")
		ok = false
	case os.Getuid() != 0 && read("/proc/sys/kernel/unprivileged_userns_clone") == "0":
		line("user namespaces", "root only", "sudo sysctl kernel.unprivileged_userns_clone=1")
		ok = false
	case os.Getuid() != 0 && read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1":
		line("user namespaces", "restricted", "AppArmor: sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile for jail with `userns,`")
		ok = false
	default:
		line("user namespaces", "ok", "")
	}
	if os.Getuid() == 0 {
		line("identity", "nobody", "started by root: the agent runs as host uid 65534; writable paths are idmapped mounts")
	} else {
		line("identity", "own uid", "the agent runs as you, without capabilities")
	}

	if abi := landlock.ABI(); abi > 0 {
		note := ""
		if abi < 6 {
			note = "older than ABI 6: no abstract-socket/signal scoping"
		}
		line("landlock", fmt.Sprintf("ABI %d", abi), note)
	} else {
		line("landlock", "absent", "mounts are the only filesystem wall; boot with lsm=...,landlock (Linux 5.13+)")
	}

	acts := read("/proc/sys/kernel/seccomp/actions_avail")
	switch {
	case acts == "":
		line("seccomp", "absent", "no syscall filter: a kernel with CONFIG_SECCOMP_FILTER is needed")
		ok = false
	case strings.Contains(acts, "user_notif"):
		line("seccomp", "ok", "filter and exec audit (user notification)")
	default:
		line("seccomp", "filter only", "no user notification: commands run without exec audit")
	}

	g, rep, err := cgroup.Open(fmt.Sprintf("jail-%d-doctor", os.Getpid()), cgroup.Limits{Pids: 64, MemoryBytes: 64 << 20}, cgroup.Options{})
	if err != nil {
		line("limits", "error", err.Error())
	} else {
		switch rep.Mode {
		case "none":
			line("limits", "rlimits only", "no writable cgroup: memory is per process (RLIMIT_AS), no cpu quota; run as root or in a delegated scope: systemd-run --user --scope -p Delegate=yes jail ...")
		default:
			line("limits", "cgroup "+rep.Mode, rep.Strategy)
		}
		_ = g.Delete()
	}

	if avail, why := nsnet.Available(); avail {
		line("egress", "transparent", "veth + nftables TPROXY in the sandbox's own namespaces")
	} else {
		line("egress", "proxy-aware", "only programs honouring HTTP(S)_PROXY/ALL_PROXY get --allow-domain egress: "+why)
	}
	if !ok {
		return 1
	}
	return 0
}
