package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/jail-sandbox/jail/cgroup"
	"github.com/jail-sandbox/jail/contrib/apparmor"
	"github.com/jail-sandbox/jail/hostcheck"
	"github.com/jail-sandbox/jail/landlock"
	"github.com/jail-sandbox/jail/netproxy"
	"github.com/jail-sandbox/jail/netproxy/nsnet/kernelcheck"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/userscope"
)

// DoctorOptions are Doctor's seams: tests fake the host's files (Root) and
// the probes' outcomes; the zero value is the real host.
type DoctorOptions struct {
	Root string   // where procfs and sysfs are read ("" = /)
	Env  []string // nil = os.Environ()
	UID  *int     // nil = os.Getuid()
	// Version is the jail version printed ("" = Version).
	Version string
	// ProbeUserNS tries what a run does in new namespaces (nil = ns.Probe
	// with this uid's clone flags).
	ProbeUserNS func() error
	// ProbeNotify tries seccomp user notification (nil = a probe child).
	ProbeNotify func() error
	// LandlockABI (nil = landlock.ABI).
	LandlockABI func() int
	// Limits reports the cgroup mode jail would get (nil = cgroup.Open,
	// asking the systemd user manager as a run does).
	Limits func() (cgroup.Report, error)
	// UserManager says what the systemd user manager did when Limits asked
	// it for a delegated scope (nil = what the default Limits recorded).
	UserManager func() UserManagerProbe
	// Egress reports whether transparent egress works (nil = kernelcheck.Available).
	Egress func() (bool, string)
}

// Doctor reports what this machine offers jail and what is in force for the
// invoking user, with the fix for each missing piece. It tries what a run
// does (a clone with the run's flags and the first mounts, a seccomp
// listener) in throwaway children, so that inside a container or another
// sandbox it says what a run would meet. It changes nothing on the host
// (a cgroup it opens to find out is removed at once).
func Doctor(w io.Writer) int { return doctor(w, DoctorOptions{}) }

// AppArmorProfile prints jail's AppArmor profile attached to this binary's
// path (`jail doctor --apparmor-profile`).
func AppArmorProfile(w, errw io.Writer) int {
	exe, err := os.Executable()
	if err == nil {
		exe, err = realpath(exe)
	}
	if err != nil {
		fmt.Fprintf(errw, "jail: cannot find this binary's path: %v\n", err)
		return 1
	}
	p, err := apparmor.For(exe)
	if err != nil {
		fmt.Fprintf(errw, "jail: %v\n", err)
		return 1
	}
	fmt.Fprint(w, p)
	return 0
}

func doctor(w io.Writer, o DoctorOptions) int {
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	uid := os.Getuid()
	if o.UID != nil {
		uid = *o.UID
	}
	ver := o.Version
	if ver == "" {
		ver = Version
	}
	f := hostcheck.Read(o.Root, env, uid)
	if o.ProbeUserNS == nil {
		o.ProbeUserNS = func() error { return ns.Probe(uid == 0, false) }
	}
	if o.ProbeNotify == nil {
		o.ProbeNotify = probeNotify
	}
	if o.LandlockABI == nil {
		o.LandlockABI = landlock.ABI
	}
	if o.Limits == nil {
		var probe UserManagerProbe
		o.Limits = func() (cgroup.Report, error) {
			opts := cgroup.Options{}
			if os.Geteuid() != 0 {
				// What a run does: ask for a delegated scope (the doctor
				// process moves into it and it ends with the doctor).
				opts.Scope = func() (string, error) {
					probe.Asked = true
					sc, err := userscope.Start(context.Background(), userscope.Options{})
					probe.Unit, probe.Err = sc.Unit, err
					if err == nil {
						probe.Controllers = strings.Fields(readV2Controllers(o.Root, sc.Cgroup))
					}
					return sc.Cgroup, err
				}
			}
			g, rep, err := cgroup.Open(fmt.Sprintf("jail-%d-doctor", os.Getpid()), cgroup.Limits{Pids: 64, MemoryBytes: 64 << 20, CPUs: 1}, opts)
			if err == nil {
				_ = g.Delete()
			}
			probe.Usable = rep.Strategy == "scope"
			return rep, err
		}
		if o.UserManager == nil {
			o.UserManager = func() UserManagerProbe { return probe }
		}
	}
	if o.UserManager == nil {
		o.UserManager = func() UserManagerProbe { return UserManagerProbe{} }
	}
	if o.Egress == nil {
		o.Egress = kernelcheck.Available
	}
	fails := 0
	line := func(status, what, state, note string) {
		if status == "FAIL" {
			fails++
		}
		fmt.Fprintf(w, "%-4s %-16s %-14s %s\n", status, what, state, note)
	}
	fmt.Fprintf(w, "jail %s on Linux %s, uid %d\n", ver, f.Release, uid)
	host := "a Linux host"
	switch {
	case f.Container == hostcheck.ContainerJail:
		host = "inside another jail sandbox"
	case f.Container != "":
		host = "a " + f.Container + " container (" + f.ContainerWhy + ")"
	case f.InUserNS:
		host = "inside a user namespace (another sandbox or container)"
	}
	if f.WSL {
		host += ", WSL2"
	}
	fmt.Fprintf(w, "host: %s\n\n", host)

	// User namespaces: what a run does, tried for real.
	nsErr := o.ProbeUserNS()
	degraded := false
	if nsErr == nil {
		note := "tried: clone with the run's namespaces, mounts, a fresh /proc, hostname"
		if f.AppArmorRestrictUserns == "1" && uid != 0 {
			note += "; AppArmor's restriction is on and jail's profile (" + f.AppArmorLabel + ") lifts it"
		}
		line("ok", "user namespaces", "ok", note)
	} else {
		c := hostcheck.Diagnose(f, probeErr(nsErr))
		line("FAIL", "user namespaces", "refused", nsErr.Error()+": "+c.Line)
		degraded = c.Degradable
	}
	if f.AppArmorRestrictUserns != "" || f.AppArmorRestrictUnconfined != "" {
		st, note := "ok", "kernel.apparmor_restrict_unprivileged_userns="+orDash(f.AppArmorRestrictUserns)+", apparmor_restrict_unprivileged_unconfined="+orDash(f.AppArmorRestrictUnconfined)+"; this process: "+orDash(f.AppArmorLabel)
		if f.AppArmorRestricts() {
			st = "WARN"
			note += "; install the profile: jail doctor --apparmor-profile | sudo tee /etc/apparmor.d/jail && sudo apparmor_parser -r /etc/apparmor.d/jail"
		}
		line(st, "apparmor", "restricting", note)
	}
	if uid == 0 {
		line("ok", "identity", "nobody", "started by root: the agent runs as host uid 65534; writable paths are idmapped mounts")
	} else {
		line("ok", "identity", "own uid", "the agent runs as you, without capabilities")
	}

	abi := o.LandlockABI()
	switch {
	case abi <= 0:
		st := "WARN"
		if degraded {
			st = "FAIL" // without namespaces, Landlock is the only filesystem wall
		}
		line(st, "landlock", "absent", "mounts are the only filesystem wall; boot with lsm=...,landlock (Linux 5.13+)")
	case abi < 4:
		line("WARN", "landlock", fmt.Sprintf("ABI %d", abi), "no TCP rules (ABI 4, Linux 6.7): --net none still holds through the network namespace; no abstract-socket/signal scoping (ABI 6)")
	case abi < 6:
		line("WARN", "landlock", fmt.Sprintf("ABI %d", abi), "no abstract-socket/signal scoping (ABI 6, Linux 6.12): the pid and network namespaces still separate the sandbox")
	default:
		line("ok", "landlock", fmt.Sprintf("ABI %d", abi), "")
	}

	switch nerr := o.ProbeNotify(); {
	case f.SeccompActions == "":
		line("FAIL", "seccomp", "absent", "no syscall filter: a kernel with CONFIG_SECCOMP_FILTER is needed")
	case nerr == nil:
		line("ok", "seccomp", "ok", "filter and exec audit (user notification, tried)")
	case errors.Is(nerr, syscall.EBUSY):
		why := "a listener already exists above jail (an outer sandbox)"
		if f.WSL {
			why = "WSL2's kernel refuses it"
		}
		line("WARN", "seccomp", "filter only", "user notification refused (EBUSY: "+why+"): runs have no exec audit and no guard rail, and say so; --require-exec-audit makes that fatal")
	default:
		line("WARN", "seccomp", "filter only", "user notification unavailable ("+nerr.Error()+"): runs have no exec audit and no guard rail, and say so")
	}

	rep, limErr := o.Limits()
	if um := o.UserManager(); um.Asked {
		switch {
		case errors.Is(um.Err, userscope.ErrNoBus):
			line("WARN", "user manager", "unreachable", um.Err.Error()+"; a systemd user session (a desktop or ssh login, or loginctl enable-linger) gives one")
		case errors.Is(um.Err, userscope.ErrNoManager):
			line("WARN", "user manager", "absent", um.Err.Error())
		case um.Err != nil:
			line("WARN", "user manager", "refused", um.Err.Error())
		default:
			st, note := "ok", "a transient scope with Delegate=yes ("+um.Unit+") got controllers: "+strings.Join(um.Controllers, " ")
			if m := missingOf(um.Controllers, "memory", "pids", "cpu"); len(m) > 0 {
				st, note = "WARN", note+"; not delegated: "+strings.Join(m, " ")
				if len(m) == 1 && m[0] == "cpu" {
					note += " (--cpus is not enforced; systemd 252+ delegates cpu to user sessions)"
				}
			}
			if !um.Usable && rep.ScopeErr != nil {
				st, note = "WARN", note+"; unusable: "+rep.ScopeErr.Error()
			}
			line(st, "user manager", "delegates", note)
		}
	}
	if limErr != nil {
		line("WARN", "limits", "error", limErr.Error())
	} else if rep.Mode == "none" {
		fix := "run as root, or in a systemd user session that delegates memory, pids and cpu (jail asks the user manager for a scope itself)"
		if uid == 0 {
			fix = "as root jail uses cgroup v1 or v2 directly: no writable hierarchy was found"
		}
		line("WARN", "limits", "no cgroup", "--memory is watched (the sandbox's resident memory, sampled; not kernel-enforced), --cpus is not enforced, --pids is RLIMIT_NPROC; "+fix+"; --require-limits refuses to run like this")
	} else {
		line("ok", "limits", "cgroup "+rep.Mode, rep.Strategy+" "+strings.Join(rep.Enforced, " "))
	}

	if nsErr != nil {
		line("WARN", "egress", "unavailable", "no network namespace can be made here: --degraded runs with --net none (seccomp refuses IP sockets) or --net host (no filtering)")
	} else if avail, why := o.Egress(); avail {
		line("ok", "egress", "transparent", "veth + nftables TPROXY in the sandbox's own namespaces")
	} else {
		line("WARN", "egress", "proxy-aware", "only programs honouring HTTP(S)_PROXY/ALL_PROXY get --allow-domain egress: "+why)
	}
	getenv := func(k string) string {
		for _, e := range env {
			if name, v, ok := strings.Cut(e, "="); ok && name == k {
				return v
			}
		}
		return ""
	}
	up, problems := netproxy.UpstreamFromEnv(getenv)
	if up != nil {
		line("ok", "host proxy", "chained", strings.TrimPrefix(up.String(), "egress: "))
	}
	for _, p := range problems {
		line("WARN", "host proxy", "unusable", strings.TrimPrefix(p, "egress: "))
	}
	if degraded {
		st, note := "WARN", fmt.Sprintf("jail --degraded runs here without namespaces: Landlock ABI %d, seccomp, no_new_privs, rlimits; no mount masks (secrets inside writable paths are readable), no pid or network namespace (--net none only); see README: Containers", abi)
		if abi <= 0 {
			st, note = "FAIL", "jail --degraded needs Landlock, which this kernel lacks"
		}
		line(st, "degraded mode", "available", note)
	}
	if fails > 0 {
		return 1
	}
	return 0
}

// UserManagerProbe is what asking the systemd user manager for a
// delegated scope gave (jail doctor's "user manager" line).
type UserManagerProbe struct {
	Asked       bool     // jail asked (an ordinary user whose own cgroup is not delegated)
	Unit        string   // the scope it got
	Controllers []string // the controllers of the scope's cgroup
	Usable      bool     // the limits are in that scope
	Err         error    // why there is no scope
}

// readV2Controllers reads cgroup.controllers of a cgroup2 path under root
// ("" = /), on a unified or hybrid host.
func readV2Controllers(root, path string) string {
	for _, base := range []string{"sys/fs/cgroup", "sys/fs/cgroup/unified"} {
		b, err := os.ReadFile(filepath.Join("/", root, base, filepath.Clean("/"+path), "cgroup.controllers"))
		if err == nil {
			return string(b)
		}
	}
	return ""
}

func missingOf(have []string, want ...string) []string {
	var m []string
	for _, w := range want {
		if !slices.Contains(have, w) {
			m = append(m, w)
		}
	}
	return m
}

// probeErr turns ns's probe error into hostcheck's.
func probeErr(err error) error {
	var pe *ns.ProbeError
	if errors.As(err, &pe) {
		return &hostcheck.ProbeError{Step: hostcheck.Step(pe.Step), Err: pe.Errno}
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return &hostcheck.ProbeError{Step: hostcheck.StepClone, Err: errno}
	}
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func realpath(p string) (string, error) {
	r, err := os.Readlink("/proc/self/exe")
	if err != nil || strings.HasSuffix(r, " (deleted)") {
		return p, nil
	}
	return r, nil
}
