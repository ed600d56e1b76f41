package hostcheck

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fakeRoot writes files (path relative to the root -> content) into a
// fresh directory standing in for / (procfs, sysfs, marker files).
func fakeRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// A plain host: identity uid map, no filter, no marker.
var plain = map[string]string{
	"proc/self/uid_map":                     "         0          0 4294967295\n",
	"proc/self/status":                      "Name:\tjail\nNoNewPrivs:\t0\nSeccomp:\t0\nSeccomp_filters:\t0\n",
	"proc/sys/user/max_user_namespaces":     "63382\n",
	"proc/sys/kernel/osrelease":             "6.8.0-45-generic\n",
	"proc/sys/kernel/seccomp/actions_avail": "kill_process kill_thread trap errno user_notif trace log allow\n",
	"proc/1/cmdline":                        "/sbin/init\x00",
	"proc/1/cgroup":                         "0::/init.scope\n",
	"proc/self/cgroup":                      "0::/user.slice/user-1000.slice/session-2.scope\n",
	"sys/fs/cgroup/cgroup.controllers":      "cpuset cpu io memory pids\n",
	"sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope/cgroup.controllers": "memory pids\n",
}

func with(base map[string]string, kv ...string) map[string]string {
	m := map[string]string{}
	for k, v := range base {
		m[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "<absent>" {
			delete(m, kv[i])
			continue
		}
		m[kv[i]] = kv[i+1]
	}
	return m
}

var eperm = &ProbeError{Step: StepClone, Err: syscall.EPERM}

// Each branch of Diagnose on a faked host: the cause it names and the fix.
func TestDiagnose(t *testing.T) {
	ubuntu := with(plain,
		"proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1\n",
		"sys/kernel/security/lsm", "lockdown,capability,landlock,yama,apparmor",
		"proc/self/attr/apparmor/current", "unconfined\n")
	for _, c := range []struct {
		name  string
		files map[string]string
		env   []string
		uid   int
		err   error
		kind  string
		want  []string // substrings of Line
	}{
		{"max_user_namespaces=0", with(plain, "proc/sys/user/max_user_namespaces", "0\n"), nil, 1000, eperm, "sysctl",
			[]string{"user.max_user_namespaces=0", "sudo sysctl -w user.max_user_namespaces=15000"}},
		{"debian unprivileged_userns_clone=0", with(plain, "proc/sys/kernel/unprivileged_userns_clone", "0\n"), nil, 1000, eperm, "sysctl",
			[]string{"kernel.unprivileged_userns_clone=0", "sudo sysctl -w kernel.unprivileged_userns_clone=1"}},
		{"ubuntu 24.04 apparmor", ubuntu, nil, 1000, &ProbeError{Step: StepMount, Err: syscall.EPERM}, "apparmor",
			[]string{"apparmor_restrict_unprivileged_userns=1", "Ubuntu 23.10+", "jail doctor --apparmor-profile", "apparmor_parser -r /etc/apparmor.d/jail", "kernel.apparmor_restrict_unprivileged_userns=0"}},
		{"ubuntu 26.04 apparmor unconfined", with(ubuntu, "proc/sys/kernel/apparmor_restrict_unprivileged_unconfined", "1\n"), nil, 1000, eperm, "apparmor",
			[]string{"apparmor_restrict_unprivileged_unconfined=1", "Ubuntu 25.04+", "/etc/apparmor.d/jail"}},
		{"apparmor on but jail's profile loaded", with(ubuntu, "proc/self/attr/apparmor/current", "jail (unconfined)\n"), nil, 1000, eperm, "unknown",
			[]string{"kernel refused a new user namespace", "--degraded"}},
		{"inside jail", with(plain, "proc/1/cmdline", "jail:init\x00", "proc/self/uid_map", "0 65534 1\n"), nil, 0, eperm, "nested",
			[]string{"inside a jail sandbox", "--degraded"}},
		{"docker default seccomp", with(plain, ".dockerenv", "", "proc/self/status", "Seccomp:\t2\nSeccomp_filters:\t1\n"), nil, 0, eperm, "container",
			[]string{"docker container", "/.dockerenv", "seccomp=unconfined", "--degraded"}},
		{"docker masked /proc", with(plain, ".dockerenv", ""), nil, 0, &ProbeError{Step: StepProc, Err: syscall.EPERM}, "container",
			[]string{"a fresh /proc", "systempaths=unconfined"}},
		{"kubernetes pod", plain, []string{"KUBERNETES_SERVICE_HOST=10.0.0.1"}, 1000, eperm, "container",
			[]string{"kubernetes", "hostUsers: false", "procMount: Unmasked", "--degraded"}},
		{"kubernetes by cgroup", with(plain, "proc/1/cgroup", "0::/kubepods/besteffort/pod1/abc\n"), nil, 0, eperm, "container",
			[]string{"kubernetes", "kubepods"}},
		{"podman", with(plain, "run/.containerenv", ""), nil, 0, eperm, "container",
			[]string{"podman container", "seccomp=unconfined"}},
		{"github actions container job", with(plain, "proc/1/cgroup", "0::/system.slice/docker-abc.scope\n"), nil, 0, eperm, "container",
			[]string{"docker container", "/proc/1/cgroup names docker"}},
		{"bubblewrap or another sandbox", with(plain, "proc/self/uid_map", "1000 1000 1\n", "proc/self/status", "Seccomp:\t2\nSeccomp_filters:\t2\n"), nil, 1000, eperm, "nested",
			[]string{"already in a user namespace", "2 seccomp filter(s)", "--degraded"}},
		{"unknown", plain, nil, 1000, eperm, "unknown",
			[]string{"CONFIG_USER_NS", "jail doctor"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := Read(fakeRoot(t, c.files), c.env, c.uid)
			got := Diagnose(f, c.err)
			if got.Kind != c.kind {
				t.Errorf("kind %q, want %q (facts %+v)\n%s", got.Kind, c.kind, f, got.Line)
			}
			for _, w := range c.want {
				if !strings.Contains(got.Line, w) {
					t.Errorf("line lacks %q:\n%s", w, got.Line)
				}
			}
			if strings.Contains(got.Line, "\n") || got.Why == "" || !strings.HasPrefix(got.Line, got.Why) || len(got.Why) >= len(got.Line) {
				t.Errorf("want one line whose cause (Why %q) precedes the fix:\n%s", got.Why, got.Line)
			}
		})
	}
}

func TestRead(t *testing.T) {
	f := Read(fakeRoot(t, plain), []string{"XDG_RUNTIME_DIR=/run/user/1000"}, 1000)
	if f.Container != "" || f.InUserNS || f.SeccompFilters != 0 || f.WSL || !f.NotifyListed || f.CgroupV2Controllers != "memory pids" || f.UserBus != "" {
		t.Errorf("plain host read as %+v", f)
	}
	wsl := Read(fakeRoot(t, with(plain, "proc/sys/kernel/osrelease", "6.6.87.2-microsoft-standard-WSL2\n")), nil, 1000)
	if !wsl.WSL {
		t.Errorf("WSL2 kernel release not recognised: %+v", wsl)
	}
	if bus := Read(fakeRoot(t, with(plain, "run/user/1000/bus", "")), []string{"XDG_RUNTIME_DIR=/run/user/1000"}, 1000); bus.UserBus != "unix:path=/run/user/1000/bus" {
		t.Errorf("the user bus socket in XDG_RUNTIME_DIR not found: %q", bus.UserBus)
	}
	if b := Read(fakeRoot(t, plain), []string{"DBUS_SESSION_BUS_ADDRESS=unix:path=/x"}, 1000); b.UserBus != "unix:path=/x" {
		t.Errorf("user bus %q", b.UserBus)
	}
	root := Read(fakeRoot(t, with(plain, "proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1\n")), nil, 0)
	if root.AppArmorRestricts() {
		t.Errorf("root is not subject to AppArmor's userns restriction")
	}
	if (Read(fakeRoot(t, with(plain, "proc/sys/kernel/seccomp/actions_avail", "<absent>")), nil, 0)).SeccompActions != "" {
		t.Errorf("no actions_avail must read as no seccomp")
	}
}
