// Package hostcheck finds out what kind of host jail runs on and, when the
// host refuses what a sandbox needs, says why in one line with the fix.
//
// It reads files only (procfs, sysfs and a few marker files, all under a
// root directory that tests replace with a fake tree) and the environment
// it is given; it makes no kernel call that changes anything. What reading
// cannot know (does clone with CLONE_NEWUSER work here, does seccomp user
// notification) is probed by the caller, which hands the outcome to
// Diagnose.
package hostcheck

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jail-sandbox/jail/procstat"
)

// Container kinds Read can name.
const (
	ContainerDocker     = "docker"
	ContainerPodman     = "podman"
	ContainerKubernetes = "kubernetes"
	ContainerLXC        = "lxc"
	ContainerNspawn     = "systemd-nspawn"
	ContainerJail       = "jail" // another jail's sandbox
	ContainerOther      = "container"
)

// Facts is what the host's files say.
type Facts struct {
	UID int
	// Sysctls as read ("" when the file is absent: the kernel lacks it).
	MaxUserNS                  string // user.max_user_namespaces
	UnprivUsernsClone          string // kernel.unprivileged_userns_clone (Debian, older Ubuntu)
	AppArmorRestrictUserns     string // kernel.apparmor_restrict_unprivileged_userns (Ubuntu 23.10+)
	AppArmorRestrictUnconfined string // kernel.apparmor_restrict_unprivileged_unconfined (Ubuntu 25.04+)
	// AppArmorLabel is this process's AppArmor confinement ("unconfined",
	// "jail (unconfined)", ...), "" without AppArmor.
	AppArmorLabel string
	// Container is the kind of container or outer sandbox this process
	// runs in ("" for none found) and ContainerWhy the evidence.
	Container    string
	ContainerWhy string
	// InUserNS: this process is already inside a user namespace (its
	// uid_map is not the initial namespace's identity map).
	InUserNS bool
	// SeccompFilters is how many seccomp filters confine this process
	// (from /proc/self/status; -1 unknown). A container runtime's or an
	// outer sandbox's filter is one.
	SeccompFilters int
	NoNewPrivs     bool
	// WSL is true on Windows Subsystem for Linux (2: a real kernel).
	WSL     bool
	Release string // the kernel release
	// SeccompActions is seccomp's actions_avail ("" without seccomp
	// filters); NotifyListed: it lists user_notif.
	SeccompActions string
	NotifyListed   bool
	// Landlock lists the LSMs ("" unknown): landlock absent means no ABI.
	LSMs string
	// CgroupV2Controllers are the controllers of this process's own cgroup
	// v2 directory ("" when there is no cgroup2 mount or none delegated).
	CgroupV2Controllers string
	// UserBus is the D-Bus address of the user's session bus, if any.
	UserBus string
}

// Read collects Facts from the files under root ("" means "/") and env
// (os.Environ() for the real host). uid is the caller's.
func Read(root string, env []string, uid int) Facts {
	if root == "" {
		root = "/"
	}
	rd := func(p string) string {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	exists := func(p string) bool {
		_, err := os.Lstat(filepath.Join(root, p))
		return err == nil
	}
	f := Facts{UID: uid, SeccompFilters: -1}
	f.MaxUserNS = rd("proc/sys/user/max_user_namespaces")
	f.UnprivUsernsClone = rd("proc/sys/kernel/unprivileged_userns_clone")
	f.AppArmorRestrictUserns = rd("proc/sys/kernel/apparmor_restrict_unprivileged_userns")
	f.AppArmorRestrictUnconfined = rd("proc/sys/kernel/apparmor_restrict_unprivileged_unconfined")
	f.AppArmorLabel = rd("proc/self/attr/apparmor/current")
	if f.AppArmorLabel == "" && strings.Contains(rd("sys/kernel/security/lsm"), "apparmor") {
		f.AppArmorLabel = rd("proc/self/attr/current")
	}
	f.AppArmorLabel = strings.TrimRight(f.AppArmorLabel, "\x00")
	f.Release = rd("proc/sys/kernel/osrelease")
	f.LSMs = rd("sys/kernel/security/lsm")
	f.SeccompActions = rd("proc/sys/kernel/seccomp/actions_avail")
	f.NotifyListed = strings.Contains(f.SeccompActions, "user_notif")
	low := strings.ToLower(f.Release + " " + rd("proc/version"))
	f.WSL = strings.Contains(low, "microsoft") || strings.Contains(low, "wsl") ||
		exists("proc/sys/fs/binfmt_misc/WSLInterop") || envHas(env, "WSL_DISTRO_NAME")

	status := []byte(rd("proc/self/status"))
	if v, ok := procstat.StatusField(status, "Seccomp_filters"); ok {
		if n, err := strconv.Atoi(string(v)); err == nil {
			f.SeccompFilters = n
		}
	} else if v, _ := procstat.StatusField(status, "Seccomp"); string(v) == "0" {
		f.SeccompFilters = 0 // no filter, on a kernel without the count (before 5.9)
	}
	v, _ := procstat.StatusField(status, "NoNewPrivs")
	f.NoNewPrivs = string(v) == "1"
	if m := strings.Fields(rd("proc/self/uid_map")); len(m) >= 3 {
		// The initial user namespace maps 0 0 4294967295; anything else
		// (a container's userns, another sandbox's) is a nested one.
		f.InUserNS = !(m[0] == "0" && m[1] == "0" && m[2] == "4294967295") || len(m) > 3
	}
	f.Container, f.ContainerWhy = container(rd, exists, env)
	if _, unified := parseSelfCgroup(rd("proc/self/cgroup")); unified != "" {
		for _, base := range []string{"sys/fs/cgroup", "sys/fs/cgroup/unified"} {
			if exists(filepath.Join(base, "cgroup.controllers")) {
				f.CgroupV2Controllers = rd(filepath.Join(base, filepath.Clean("/"+unified), "cgroup.controllers"))
				break
			}
		}
	}
	f.UserBus = envGet(env, "DBUS_SESSION_BUS_ADDRESS")
	if f.UserBus == "" {
		if rt := envGet(env, "XDG_RUNTIME_DIR"); rt != "" && exists(filepath.Join(rt, "bus")) {
			f.UserBus = "unix:path=" + filepath.Join(rt, "bus")
		}
	}
	return f
}

// container names the container or outer sandbox, from the markers the
// common runtimes leave.
func container(rd func(string) string, exists func(string) bool, env []string) (kind, why string) {
	// Inside jail, pid 1 of the pid namespace is jail's own init.
	if c := rd("proc/1/cmdline"); strings.HasPrefix(c, "jail:init") {
		return ContainerJail, "pid 1 is jail's init (/proc/1/cmdline)"
	}
	if envHas(env, "KUBERNETES_SERVICE_HOST") {
		return ContainerKubernetes, "KUBERNETES_SERVICE_HOST is set"
	}
	if exists("var/run/secrets/kubernetes.io") || exists("run/secrets/kubernetes.io") {
		return ContainerKubernetes, "/run/secrets/kubernetes.io exists"
	}
	if exists(".dockerenv") {
		return ContainerDocker, "/.dockerenv exists"
	}
	if exists("run/.containerenv") {
		return ContainerPodman, "/run/.containerenv exists"
	}
	switch v := envGet(env, "container"); v {
	case "":
	case "podman", "docker", "lxc", "systemd-nspawn":
		return v, "container=" + v + " in the environment"
	default:
		return ContainerOther, "container=" + v + " in the environment"
	}
	cg := rd("proc/1/cgroup")
	switch {
	case strings.Contains(cg, "kubepods"):
		return ContainerKubernetes, "/proc/1/cgroup names kubepods"
	case strings.Contains(cg, "/docker") || strings.Contains(cg, "docker-"):
		return ContainerDocker, "/proc/1/cgroup names docker"
	case strings.Contains(cg, "/lxc") || strings.Contains(cg, "lxc.payload"):
		return ContainerLXC, "/proc/1/cgroup names lxc"
	case strings.Contains(cg, "containerd") || strings.Contains(cg, "cri-containerd"):
		return ContainerOther, "/proc/1/cgroup names containerd"
	}
	return "", ""
}

// parseSelfCgroup returns the v1 controller paths and the v2 path of a
// /proc/PID/cgroup file.
func parseSelfCgroup(s string) (v1 map[string]string, unified string) {
	v1 = map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			unified = f[2]
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			v1[c] = f[2]
		}
	}
	return v1, unified
}

func envGet(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

func envHas(env []string, name string) bool { return envGet(env, name) != "" }

// AppArmorRestricts reports whether AppArmor's user-namespace restriction
// applies to this process: the sysctl is on and the process is unconfined
// (a profile granting `userns,` lifts it; root is not restricted).
func (f Facts) AppArmorRestricts() bool {
	if f.UID == 0 || f.AppArmorRestrictUserns != "1" {
		return false
	}
	l := f.AppArmorLabel
	return l == "" || l == "unconfined" || strings.HasPrefix(l, "unprivileged_userns")
}

// Step names the part of a sandbox start that a probe or a run saw fail.
type Step string

// Steps, in the order a sandbox start takes them.
const (
	StepClone    Step = "clone"    // clone(CLONE_NEWUSER|...) itself
	StepMount    Step = "mount"    // the first mount inside the new namespaces
	StepProc     Step = "proc"     // mounting a fresh /proc for the new pid namespace
	StepHostname Step = "hostname" // sethostname in the new uts namespace
)

// ProbeError is a refused sandbox start: which step and the errno.
type ProbeError struct {
	Step Step
	Err  error
}

func (e *ProbeError) Error() string { return string(e.Step) + ": " + e.Err.Error() }
func (e *ProbeError) Unwrap() error { return e.Err }

// Cause is why user namespaces (or what a sandbox does in them) are
// refused on this host, in one line, and what to do about it.
type Cause struct {
	Kind string // "apparmor", "sysctl", "container", "nested", "unknown"
	// Line is one line: the cause, then the fix.
	Line string
	// Why is the cause alone (for a run that goes on degraded).
	Why string
	// Degradable: jail --degraded can run here (Landlock and seccomp without
	// namespaces), and the line says so.
	Degradable bool
}

// Diagnose turns a refused start into one line naming the cause and the
// fix. err is what the probe or the run saw (a *ProbeError when the step
// is known).
func Diagnose(f Facts, err error) Cause {
	c := diagnose(f, err)
	c.Why, _, _ = strings.Cut(c.Line, ": ")
	if c.Kind == "container" || c.Kind == "nested" || c.Kind == "unknown" {
		// Their cause holds ": " itself: cut at the fix's start instead.
		if i := strings.LastIndex(c.Line, "): "); i >= 0 {
			c.Why = c.Line[:i+1]
		}
	}
	return c
}

func diagnose(f Facts, err error) Cause {
	var pe *ProbeError
	step := StepClone
	if errors.As(err, &pe) {
		step = pe.Step
	}
	errno := ""
	if err != nil {
		errno = err.Error()
		if pe != nil {
			errno = pe.Err.Error()
		}
	}
	degraded := " (or run with --degraded: Landlock and seccomp without namespaces, see README: Containers)"
	switch {
	case f.MaxUserNS == "0":
		return Cause{Kind: "sysctl", Line: "user namespaces are disabled (user.max_user_namespaces=0): run `sudo sysctl -w user.max_user_namespaces=15000`" + degraded, Degradable: true}
	case f.UID != 0 && f.UnprivUsernsClone == "0":
		return Cause{Kind: "sysctl", Line: "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0): run `sudo sysctl -w kernel.unprivileged_userns_clone=1`" + degraded, Degradable: true}
	case f.AppArmorRestricts():
		what := "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1, Ubuntu 23.10+)"
		if f.AppArmorRestrictUnconfined == "1" {
			what = "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1 and apparmor_restrict_unprivileged_unconfined=1, Ubuntu 25.04+)"
		}
		return Cause{Kind: "apparmor", Line: what + ": install jail's AppArmor profile (`jail doctor --apparmor-profile | sudo tee /etc/apparmor.d/jail && sudo apparmor_parser -r /etc/apparmor.d/jail`, see README: Ubuntu) or run `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`"}
	case f.Container == ContainerJail:
		return Cause{Kind: "nested", Line: "this is already inside a jail sandbox, whose seccomp filter refuses new namespaces: run with --degraded (Landlock and seccomp inside the outer sandbox), or run jail outside it", Degradable: true}
	case f.Container != "":
		fix := containerFix(f.Container, step)
		return Cause{Kind: "container", Line: "inside a " + f.Container + " container (" + f.ContainerWhy + ") that refuses " + stepWhat(step) + " (" + errno + "): " + fix + "; or run with --degraded (Landlock and seccomp without namespaces, see README: Containers)", Degradable: true}
	case f.InUserNS || f.SeccompFilters > 0:
		return Cause{Kind: "nested", Line: "inside another sandbox (" + nestedWhy(f) + ") that refuses " + stepWhat(step) + " (" + errno + "): let the outer sandbox allow user namespaces, or run with --degraded (Landlock and seccomp without namespaces)", Degradable: true}
	}
	return Cause{Kind: "unknown", Line: "the kernel refused " + stepWhat(step) + " (" + errno + "): check CONFIG_USER_NS and any LSM or seccomp policy confining jail (`jail doctor` shows what it finds)" + degraded, Degradable: true}
}

func stepWhat(s Step) string {
	switch s {
	case StepMount:
		return "mounts in a new user namespace"
	case StepProc:
		return "a fresh /proc in a new pid namespace"
	case StepHostname:
		return "sethostname in a new uts namespace"
	}
	return "a new user namespace"
}

func nestedWhy(f Facts) string {
	var w []string
	if f.InUserNS {
		w = append(w, "already in a user namespace")
	}
	if f.SeccompFilters > 0 {
		w = append(w, strconv.Itoa(f.SeccompFilters)+" seccomp filter(s) in force")
	}
	return strings.Join(w, ", ")
}

func containerFix(kind string, step Step) string {
	switch kind {
	case ContainerKubernetes:
		return "give the pod its own user namespace (hostUsers: false) with procMount: Unmasked and seccompProfile/appArmorProfile Unconfined (see README: Kubernetes)"
	case ContainerDocker, ContainerPodman:
		if step == StepProc {
			return "start the container with --security-opt systempaths=unconfined (its masked /proc forbids a fresh one)"
		}
		return "start the container with --security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined"
	}
	return "let the container allow unshare(CLONE_NEWUSER) and a fresh /proc (an unconfined seccomp and LSM profile, unmasked /proc)"
}
