package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/jail-sandbox/jail/cgroup"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/userscope"
)

func doctorRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

var doctorPlain = map[string]string{
	"proc/self/uid_map":                     "0 0 4294967295\n",
	"proc/self/status":                      "Seccomp:\t0\nSeccomp_filters:\t0\n",
	"proc/sys/kernel/osrelease":             "6.18.0\n",
	"proc/sys/kernel/seccomp/actions_avail": "kill_process errno user_notif allow\n",
	"proc/1/cmdline":                        "/sbin/init\x00",
}

func doctorWith(kv ...string) map[string]string {
	m := map[string]string{}
	for k, v := range doctorPlain {
		m[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "<absent>" {
			delete(m, kv[i])
		} else {
			m[kv[i]] = kv[i+1]
		}
	}
	return m
}

// Doctor on faked hosts: each WARN and FAIL line, with the fix it prints,
// and the exit status (1 when a run would fail).
func TestDoctorBranches(t *testing.T) {
	uid := 1000
	cgNone := func() (cgroup.Report, error) { return cgroup.Report{Mode: "none"}, nil }
	cgV2 := func() (cgroup.Report, error) { return cgroup.Report{Mode: "v2", Strategy: "leaf"}, nil }
	egressOK := func() (bool, string) { return true, "" }
	ok := func() error { return nil }
	for _, c := range []struct {
		name    string
		files   map[string]string
		env     []string
		userns  error
		notify  error
		abi     int
		limits  func() (cgroup.Report, error)
		egress  func() (bool, string)
		um      UserManagerProbe
		code    int
		want    []string
		notWant []string
	}{
		{name: "all ok", files: doctorPlain, userns: nil, notify: nil, abi: 7, limits: cgV2, egress: egressOK, code: 0,
			want:    []string{"ok   user namespaces  ok", "ok   landlock         ABI 7", "ok   seccomp          ok", "ok   limits           cgroup v2"},
			notWant: []string{"WARN", "FAIL"}},
		{name: "ubuntu apparmor refuses", files: doctorWith("proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1\n", "proc/self/attr/apparmor/current", "unconfined\n"),
			userns: &ns.ProbeError{Step: "mount", Errno: syscall.EPERM}, abi: 6, limits: cgV2, egress: egressOK, code: 1,
			want: []string{"FAIL user namespaces  refused        mount: operation not permitted: AppArmor restricts", "WARN apparmor         restricting", "jail doctor --apparmor-profile | sudo tee /etc/apparmor.d/jail"}},
		{name: "ubuntu apparmor with jail's profile", files: doctorWith("proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1\n", "proc/sys/kernel/apparmor_restrict_unprivileged_unconfined", "1\n", "proc/self/attr/apparmor/current", "jail (unconfined)\n"),
			abi: 7, limits: cgV2, egress: egressOK, code: 0,
			want:    []string{"ok   user namespaces  ok", "jail's profile (jail (unconfined)) lifts it", "ok   apparmor         restricting", "apparmor_restrict_unprivileged_unconfined=1"},
			notWant: []string{"FAIL"}},
		{name: "docker", files: doctorWith(".dockerenv", "", "proc/self/status", "Seccomp:\t2\nSeccomp_filters:\t1\n"),
			userns: &ns.ProbeError{Step: "clone", Errno: syscall.EPERM}, abi: 5, limits: cgNone, egress: egressOK, code: 1,
			want: []string{"host: a docker container", "FAIL user namespaces", "seccomp=unconfined", "WARN landlock         ABI 5", "WARN degraded mode    available", "no mount masks", "WARN egress           unavailable"}},
		{name: "inside jail", files: doctorWith("proc/1/cmdline", "jail:init\x00", "proc/self/uid_map", "0 65534 1\n"),
			userns: &ns.ProbeError{Step: "clone", Errno: syscall.EPERM}, notify: syscall.EBUSY, abi: 7, limits: cgNone, egress: egressOK, code: 1,
			want: []string{"host: inside another jail sandbox", "FAIL user namespaces", "WARN seccomp          filter only    user notification refused (EBUSY: a listener already exists", "--require-exec-audit", "WARN degraded mode"}},
		{name: "wsl2", files: doctorWith("proc/sys/kernel/osrelease", "6.6.87.2-microsoft-standard-WSL2\n"),
			notify: syscall.EBUSY, abi: 3, limits: cgNone, egress: egressOK, code: 0,
			um:   UserManagerProbe{Asked: true, Err: fmt.Errorf("%w: DBUS_SESSION_BUS_ADDRESS is unset and there is no /run/user/1000/bus", userscope.ErrNoBus)},
			want: []string{"WSL2", "WARN landlock         ABI 3          no TCP rules", "--net none still holds through the network namespace", "EBUSY: WSL2's kernel refuses it", "WARN limits           no cgroup      --memory is watched", "not kernel-enforced", "WARN user manager     unreachable    no user D-Bus: DBUS_SESSION_BUS_ADDRESS is unset", "loginctl enable-linger"}},
		{name: "no landlock, degraded impossible", files: doctorWith(".dockerenv", ""), userns: &ns.ProbeError{Step: "clone", Errno: syscall.EPERM}, abi: 0, limits: cgNone, egress: egressOK, code: 1,
			want: []string{"FAIL landlock         absent", "FAIL degraded mode    available      jail --degraded needs Landlock"}},
		{name: "no seccomp", files: doctorWith("proc/sys/kernel/seccomp/actions_avail", "<absent>"), notify: syscall.EINVAL, abi: 7, limits: cgV2, egress: egressOK, code: 1,
			want: []string{"FAIL seccomp          absent"}},
		{name: "user bus without a manager", files: doctorPlain, abi: 7, limits: cgNone, egress: egressOK, code: 0,
			um:   UserManagerProbe{Asked: true, Err: fmt.Errorf("user bus unix:path=/run/user/1000/bus: %w (no owner)", userscope.ErrNoManager)},
			want: []string{"WARN user manager     absent         user bus unix:path=/run/user/1000/bus: no systemd user manager", "WARN limits", "systemd user session that delegates"}},
		{name: "user manager delegates", files: doctorPlain, abi: 7, egress: egressOK, code: 0,
			limits: func() (cgroup.Report, error) {
				return cgroup.Report{Mode: "v2", Strategy: "scope", Enforced: []string{"memory=64M(cgroup-v2)"}}, nil
			},
			um:      UserManagerProbe{Asked: true, Unit: "jail-run-1-a.scope", Controllers: []string{"cpu", "memory", "pids"}, Usable: true},
			want:    []string{"ok   user manager     delegates      a transient scope with Delegate=yes (jail-run-1-a.scope) got controllers: cpu memory pids", "ok   limits           cgroup v2      scope memory=64M(cgroup-v2)"},
			notWant: []string{"WARN"}},
		{name: "user manager without cpu", files: doctorPlain, abi: 7, egress: egressOK, code: 0,
			limits: func() (cgroup.Report, error) { return cgroup.Report{Mode: "v2", Strategy: "scope"}, nil },
			um:     UserManagerProbe{Asked: true, Unit: "jail-run-1-a.scope", Controllers: []string{"memory", "pids"}, Usable: true},
			want:   []string{"WARN user manager     delegates", "not delegated: cpu (--cpus is not enforced"}},
		{name: "user manager scope unusable", files: doctorPlain, abi: 7, egress: egressOK, code: 0,
			limits: func() (cgroup.Report, error) {
				return cgroup.Report{Mode: "none", ScopeErr: errors.New("the manager reported /a.scope, but this process is in /b.scope")}, nil
			},
			um:   UserManagerProbe{Asked: true, Unit: "a.scope", Controllers: []string{"cpu", "memory", "pids"}},
			want: []string{"WARN user manager     delegates", "unusable: the manager reported /a.scope"}},
		{name: "host proxy", files: doctorPlain, env: []string{"https_proxy=http://ada:pw-secret@proxy.corp:3128", "ALL_PROXY=socks5://proxy.corp:1080"}, abi: 7, limits: cgV2, egress: egressOK, code: 0,
			want:    []string{"ok   host proxy       chained        allowed flows are chained through the host's proxy: TLS flows via http://proxy.corp:3128 (https_proxy)", "WARN host proxy       unusable       ALL_PROXY names a socks5 proxy"},
			notWant: []string{"pw-secret", "ada"}},
		{name: "egress proxy-aware", files: doctorPlain, abi: 7, limits: cgV2, egress: func() (bool, string) { return false, "kernel lacks nft_tproxy" }, code: 0,
			want: []string{"WARN egress           proxy-aware", "nft_tproxy"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			env := c.env
			if env == nil {
				env = []string{}
			}
			nsErr, nErr := c.userns, c.notify
			code := doctor(&b, DoctorOptions{
				Root: doctorRoot(t, c.files), Env: env, UID: &uid, Version: "test",
				ProbeUserNS: func() error { return nsErr }, ProbeNotify: func() error { return nErr },
				LandlockABI: func() int { return c.abi }, Limits: c.limits, Egress: c.egress,
				UserManager: func() UserManagerProbe { return c.um },
			})
			_ = ok
			out := b.String()
			if code != c.code {
				t.Errorf("exit %d, want %d\n%s", code, c.code, out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q\n%s", w, out)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(out, w) {
					t.Errorf("output has %q\n%s", w, out)
				}
			}
		})
	}
}

func TestCover(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a/b/c", "a/b/d", "a/e", "f", "home/u/.ssh", "home/v"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	os.WriteFile(filepath.Join(root, "a/b/file"), nil, 0o644)
	os.Symlink(filepath.Join(root, "home"), filepath.Join(root, "a/link"))
	got, err := cover(root, []string{filepath.Join(root, "a/b/c"), filepath.Join(root, "home")})
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i] = strings.TrimPrefix(got[i], root)
	}
	want := "/a/b/d /a/b/file /a/e /f"
	if strings.Join(got, " ") != want {
		t.Errorf("cover = %v, want %s (hidden a/b/c and home left out, the symlink into home left out)", got, want)
	}
	if all, _ := cover(root, nil); len(all) != 1 || all[0] != root {
		t.Errorf("nothing hidden: want the root alone, got %v", all)
	}
}
