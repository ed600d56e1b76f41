package policy

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	cmd := []string{"true"}
	tests := []struct {
		name    string
		mod     func(p *Policy)
		wantErr string // substring; "" means valid
		wantNet string
	}{
		{"defaults", func(p *Policy) {}, "", NetNone},
		{"no command", func(p *Policy) { p.Command = nil }, "no command", ""},
		{"empty net is none", func(p *Policy) { p.Net = "" }, "", NetNone},
		{"empty net with allow-domain is allow", func(p *Policy) { p.Net = ""; p.AllowDomain = []string{"example.com"} }, "", NetAllow},
		{"empty net with allow-ip is allow", func(p *Policy) { p.Net = ""; p.AllowIP = []string{"1.2.3.4"} }, "", NetAllow},
		{"empty net with allow-host-port is allow", func(p *Policy) { p.Net = ""; p.AllowHostPort = []string{"5432"} }, "", NetAllow},
		{"empty net with publish is allow", func(p *Policy) { p.Net = ""; p.Publish = []string{"8080"} }, "", NetAllow},
		{"empty net with deny-domain only stays none", func(p *Policy) { p.Net = ""; p.DenyDomain = []string{"x.com"} }, "", NetNone},
		{"explicit allow", func(p *Policy) { p.Net = NetAllow }, "", NetAllow},
		{"allow with rules", func(p *Policy) { p.Net = NetAllow; p.AllowDomain = []string{"a"}; p.DenyDomain = []string{"b"} }, "", NetAllow},
		{"host", func(p *Policy) { p.Net = NetHost }, "", NetHost},
		{"none with allow-domain", func(p *Policy) { p.Net = NetNone; p.AllowDomain = []string{"a"} }, `net "none" conflicts with allow-domain "a"`, ""},
		{"none with deny-domain only is none", func(p *Policy) { p.Net = NetNone; p.DenyDomain = []string{"a"} }, "", NetNone},
		{"host with deny-domain", func(p *Policy) { p.Net = NetHost; p.DenyDomain = []string{"a"} }, `net "host" conflicts with deny-domain`, ""},
		{"host with publish", func(p *Policy) { p.Net = NetHost; p.Publish = []string{"80"} }, `net "host" conflicts with publish "80"`, ""},
		{"host with allow-ip", func(p *Policy) { p.Net = NetHost; p.AllowIP = []string{"10.0.0.1"} }, `net "host" conflicts with allow-ip`, ""},
		{"host with allow-host-port", func(p *Policy) { p.Net = NetHost; p.AllowHostPort = []string{"22"} }, `net "host" conflicts with allow-host-port`, ""},
		{"unknown net", func(p *Policy) { p.Net = "bridge" }, `net "bridge": want none, allow or host`, ""},
		{"net is case sensitive", func(p *Policy) { p.Net = "None" }, `net "None"`, ""},
		{"zero tmp size", func(p *Policy) { p.TmpSize = 0 }, "tmp-size", ""},
		{"negative tmp size", func(p *Policy) { p.TmpSize = -1 }, "tmp-size", ""},
		{"negative pids", func(p *Policy) { p.Pids = -1 }, "negative", ""},
		{"negative memory", func(p *Policy) { p.Memory = -1 }, "negative", ""},
		{"negative cpus", func(p *Policy) { p.CPUs = -0.5 }, "negative", ""},
		{"negative timeout", func(p *Policy) { p.Timeout = -time.Second }, "negative", ""},
		{"negative kill grace", func(p *Policy) { p.KillGrace = -1 }, "negative", ""},
		{"negative max file size", func(p *Policy) { p.MaxFileSize = -1 }, "negative", ""},
		{"tiny memory", func(p *Policy) { p.Memory = 4096 }, `memory "4k": below 1M`, ""},
		{"tiny cpus", func(p *Policy) { p.CPUs = 0.001 }, `cpus "0.001": below 0.01`, ""},
		{"zero limits are fine", func(p *Policy) { p.Pids, p.Memory, p.CPUs, p.Timeout, p.KillGrace, p.MaxFileSize = 0, 0, 0, 0, 0, 0 }, "", NetNone},
		{"setenv ok", func(p *Policy) { p.SetEnv = []string{"A=1", "B=", "C=x=y", "D=\xff"} }, "", NetNone},
		{"setenv without =", func(p *Policy) { p.SetEnv = []string{"A"} }, `setenv "A": want NAME=VALUE`, ""},
		{"setenv empty name", func(p *Policy) { p.SetEnv = []string{"=1"} }, `setenv "=1"`, ""},
		{"setenv empty", func(p *Policy) { p.SetEnv = []string{""} }, "setenv", ""},
		{"setenv second bad", func(p *Policy) { p.SetEnv = []string{"A=1", "B"} }, `setenv "B"`, ""},
		{"env ok", func(p *Policy) { p.Env = []string{"GITHUB_TOKEN", "LC_ALL", "x.y"} }, "", NetNone},
		{"env empty", func(p *Policy) { p.Env = []string{""} }, "env", ""},
		{"env with =", func(p *Policy) { p.Env = []string{"A=1"} }, `env "A=1"`, ""},
		{"env with NUL", func(p *Policy) { p.Env = []string{"A\x00B"} }, "env", ""},
		{"runnable ok", func(p *Policy) { p.Runnable = []string{"cargo", "node.js", "x-y_z"} }, "", NetNone},
		{"runnable empty", func(p *Policy) { p.Runnable = []string{""} }, "runnable: want a program NAME", ""},
		{"runnable dot", func(p *Policy) { p.Runnable = []string{".."} }, `runnable ".."`, ""},
		{"runnable path", func(p *Policy) { p.Runnable = []string{"bin/cargo"} }, `runnable "bin/cargo"`, ""},
		{"runnable absolute", func(p *Policy) { p.Runnable = []string{"/usr/bin/cargo"} }, "runnable", ""},
		{"runnable NUL", func(p *Policy) { p.Runnable = []string{"a\x00b"} }, "runnable", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Default()
			p.Command = cmd
			tt.mod(&p)
			err := p.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				if p.Net != tt.wantNet {
					t.Errorf("Net = %q, want %q", p.Net, tt.wantNet)
				}
				// Idempotent: the supervisor checks again what the CLI checked.
				if err := p.Check(); err != nil || p.Net != tt.wantNet {
					t.Errorf("second Check: %v, Net %q", err, p.Net)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate succeeded, want an error containing %q", tt.wantErr)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestDefault(t *testing.T) {
	p := Default()
	p.Command = []string{"x"}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if p.Net != NetNone || p.TmpSize != 1<<30 || p.Pids != 1024 || p.Hostname != "jail" || p.KillGrace != 5*time.Second {
		t.Errorf("unexpected defaults %+v", p)
	}
}

func TestResolvePath(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home")
	for _, d := range []string{filepath.Join(base, "real", "sub"), filepath.Join(home, "proj")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(base, "real", "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{"real", "link"}, {filepath.Join(base, "real", "sub"), "abslink"}, {"nowhere", "dangling"}, {"link/sub", "chain"}} {
		if err := os.Symlink(l[0], filepath.Join(base, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)

	tests := []struct {
		name, in, want string
		wantErr        string
	}{
		{"absolute", filepath.Join(base, "real"), filepath.Join(base, "real"), ""},
		{"relative", "real/sub", filepath.Join(base, "real", "sub"), ""},
		{"dot", ".", base, ""},
		{"dot dot", "real/sub/../..", base, ""},
		{"unclean absolute", base + "//real/./sub/", filepath.Join(base, "real", "sub"), ""},
		{"file", "real/f", filepath.Join(base, "real", "f"), ""},
		{"symlink", "link", filepath.Join(base, "real"), ""},
		{"through a symlink", "link/sub", filepath.Join(base, "real", "sub"), ""},
		{"absolute symlink", "abslink", filepath.Join(base, "real", "sub"), ""},
		{"symlink chain", "chain", filepath.Join(base, "real", "sub"), ""},
		{"tilde", "~", home, ""},
		{"tilde slash", "~/proj", filepath.Join(home, "proj"), ""},
		{"tilde user is not expanded", "~proj", "", "no such file"},
		{"missing", "nope", "", "no such file"},
		{"missing absolute", "/nonexistent/jail/test", "", "no such file"},
		{"dangling symlink", "dangling", "", "no such file"},
		{"through a file", "real/f/x", "", "not a directory"},
		{"empty", "", "", "empty path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolvePath("write", base, tt.in)
			if tt.wantErr == "" {
				if err != nil || got != tt.want {
					t.Fatalf("ResolvePath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("ResolvePath(%q) = %q, want an error", tt.in, got)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Key != "write" || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "--") {
				t.Errorf("error %q is not a FieldError naming write (and no flag) with %q", err, tt.wantErr)
			}
		})
	}
	t.Run("tilde without HOME", func(t *testing.T) {
		t.Setenv("HOME", "")
		_, err := ResolvePath("read", base, "~/x")
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "~") {
			t.Errorf("got %v, want an ErrInvalid about ~", err)
		}
	})
	if os.Geteuid() != 0 {
		t.Run("permission denied wraps ErrInvalid", func(t *testing.T) {
			locked := filepath.Join(base, "locked")
			if err := os.MkdirAll(filepath.Join(locked, "in"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(locked, 0); err != nil {
				t.Fatal(err)
			}
			defer os.Chmod(locked, 0o755)
			_, err := ResolvePath("write", base, "locked/in")
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "write") {
				t.Errorf("got %v, want an ErrInvalid naming write", err)
			}
		})
	}
}

func envMap(t *testing.T, env []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, kv := range env {
		i := strings.IndexByte(kv, '=')
		if i <= 0 {
			t.Fatalf("bad entry %q", kv)
		}
		if _, dup := m[kv[:i]]; dup {
			t.Fatalf("duplicate name %q", kv[:i])
		}
		m[kv[:i]] = kv[i+1:]
	}
	return m
}

func TestBuildEnv(t *testing.T) {
	host := []string{
		"PATH=/host/bin:/usr/bin", "HOME=/home/u", "TERM=xterm-256color", "LANG=C.UTF-8",
		"LC_ALL=de_DE.UTF-8", "LC_TIME=C", "TZ=UTC", "USER=u", "SHELL=/bin/zsh",
		"AWS_SECRET_ACCESS_KEY=s3cr3t", "GITHUB_TOKEN=ghp_x", "SSH_AUTH_SOCK=/run/ssh", "LD_PRELOAD=/evil.so",
		"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/bus", "TMPDIR=/host/tmp", "EDITOR=vim",
		"=weird", "noequals", "EMPTY=", "LCX=no", "lc_all=no",
	}
	tests := []struct {
		name      string
		host      []string
		pass, set []string
		want      map[string]string // names that must be there with these values
		absent    []string
	}{
		{
			name: "safe list kept, secrets dropped",
			host: host,
			want: map[string]string{"PATH": "/host/bin:/usr/bin", "HOME": "/home/u", "TERM": "xterm-256color", "LANG": "C.UTF-8",
				"LC_ALL": "de_DE.UTF-8", "LC_TIME": "C", "TZ": "UTC", "USER": "u", "SHELL": "/bin/zsh", "EDITOR": "vim", "TMPDIR": "/tmp"},
			absent: []string{"AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "SSH_AUTH_SOCK", "LD_PRELOAD", "DBUS_SESSION_BUS_ADDRESS", "EMPTY", "LCX", "lc_all", ""},
		},
		{
			name: "--env passes a host variable",
			host: host, pass: []string{"GITHUB_TOKEN", "EMPTY", "NOT_ON_HOST"},
			want:   map[string]string{"GITHUB_TOKEN": "ghp_x", "EMPTY": ""},
			absent: []string{"AWS_SECRET_ACCESS_KEY", "NOT_ON_HOST"},
		},
		{
			name: "--setenv wins over host and --env",
			host: host, pass: []string{"GITHUB_TOKEN"}, set: []string{"GITHUB_TOKEN=fake", "PATH=/opt/bin", "NEW=a=b", "LANG="},
			want: map[string]string{"GITHUB_TOKEN": "fake", "PATH": "/opt/bin", "NEW": "a=b", "LANG": ""},
		},
		{
			name: "last --setenv wins",
			set:  []string{"A=1", "A=2"},
			want: map[string]string{"A": "2"},
		},
		{
			name: "TMPDIR forced to /tmp even with --env",
			host: host, pass: []string{"TMPDIR"},
			want: map[string]string{"TMPDIR": "/tmp"},
		},
		{
			name: "TMPDIR from --setenv kept",
			host: host, set: []string{"TMPDIR=/tmp/mine"},
			want: map[string]string{"TMPDIR": "/tmp/mine"},
		},
		{
			name:   "no TMPDIR on the host: none inside",
			host:   []string{"PATH=/bin"},
			absent: []string{"TMPDIR"},
		},
		{
			name: "PATH default when the host has none",
			host: []string{"HOME=/h"},
			want: map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin", "HOME": "/h"},
		},
		{
			name: "empty host PATH is kept (not defaulted)",
			host: []string{"PATH="},
			want: map[string]string{"PATH": ""},
		},
		{
			name: "nil everything",
			want: map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"},
		},
		{
			name: "duplicate host entries: last wins",
			host: []string{"TERM=a", "TERM=b"},
			want: map[string]string{"TERM": "b"},
		},
		{
			name: "non-UTF-8 values pass unchanged",
			host: []string{"LANG=\xff\xfe", "LC_X=\x80"},
			want: map[string]string{"LANG": "\xff\xfe", "LC_X": "\x80"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := BuildEnv(tt.host, tt.pass, tt.set)
			if !sort.StringsAreSorted(out) {
				t.Errorf("not sorted: %q", out)
			}
			m := envMap(t, out)
			for k, v := range tt.want {
				if got, ok := m[k]; !ok || got != v {
					t.Errorf("%s = %q (present %v), want %q", k, got, ok, v)
				}
			}
			for _, k := range tt.absent {
				if _, ok := m[k]; ok {
					t.Errorf("%s passed through: %q", k, m[k])
				}
			}
		})
	}
}

// BuildEnv must not modify its inputs.
func TestBuildEnvInputsUntouched(t *testing.T) {
	host := []string{"B=1", "PATH=/x", "A=2"}
	set := []string{"Z=1", "TMPDIR=/t"}
	hc, sc := append([]string{}, host...), append([]string{}, set...)
	BuildEnv(host, []string{"B"}, set)
	if strings.Join(host, "\n") != strings.Join(hc, "\n") || strings.Join(set, "\n") != strings.Join(sc, "\n") {
		t.Error("inputs modified")
	}
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func FuzzBuildEnv(f *testing.F) {
	f.Add("PATH=/bin\nAWS_SECRET=x\nLC_ALL=C\nTMPDIR=/h", "AWS_SECRET", "X=1")
	f.Add("=\n==\nA\nLC_=1\nHOME=\xff", "", "TMPDIR=/t\nTMPDIR=")
	f.Add("TMPDIR=/x\nPATH=", "TMPDIR\nPATH", "PATH=/y")
	f.Add("LC_X=1\nLCX=2\nlc_y=3", "lc_y", "")
	f.Fuzz(func(t *testing.T, hostS, passS, setS string) {
		host, pass, set := splitList(hostS), splitList(passS), splitList(setS)
		// BuildEnv's --env/--setenv inputs are what Validate accepted.
		p := Policy{Command: []string{"x"}, TmpSize: 1, Env: pass, SetEnv: set}
		if p.Validate() != nil {
			return
		}
		out := BuildEnv(host, pass, set)
		allowed := map[string]bool{"PATH": true}
		for _, n := range SafeEnvNames {
			allowed[n] = true
		}
		for _, n := range pass {
			allowed[n] = true
		}
		setVal := map[string]string{}
		for _, kv := range set {
			i := strings.IndexByte(kv, '=')
			allowed[kv[:i]] = true
			setVal[kv[:i]] = kv[i+1:]
		}
		if !sort.StringsAreSorted(out) {
			t.Fatalf("not sorted: %q", out)
		}
		seen := map[string]bool{}
		for _, kv := range out {
			i := strings.IndexByte(kv, '=')
			if i <= 0 {
				t.Fatalf("bad entry %q", kv)
			}
			name, val := kv[:i], kv[i+1:]
			if seen[name] {
				t.Fatalf("duplicate %q in %q", name, out)
			}
			seen[name] = true
			if !allowed[name] && !strings.HasPrefix(name, "LC_") {
				t.Fatalf("name %q not allowed got through: %q", name, out)
			}
			if v, ok := setVal[name]; ok && v != val {
				t.Fatalf("--setenv %s=%q lost: got %q", name, v, val)
			}
			if name == "TMPDIR" {
				if _, ok := setVal[name]; !ok && val != "/tmp" {
					t.Fatalf("TMPDIR = %q, want /tmp", val)
				}
			}
		}
		if !seen["PATH"] {
			t.Fatalf("no PATH in %q", out)
		}
		for n := range setVal {
			if !seen[n] {
				t.Fatalf("--setenv %s missing from %q", n, out)
			}
		}
	})
}
