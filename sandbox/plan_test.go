package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/gitguard"
	"github.com/jail-sandbox/jail/internal/termsafe"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
)

// fixture is a temp workspace and a fake HOME, both symlink-free.
type fixture struct {
	ws, home string
	env      []string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{ws: filepath.Join(root, "ws"), home: filepath.Join(root, "home")}
	for _, d := range []string{f.ws, f.home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.env = []string{"HOME=" + f.home, "PATH=/usr/bin:/bin", "TERM=dumb", "AWS_SECRET_ACCESS_KEY=x", "TMPDIR=/host/tmp"}
	return f
}

func (f fixture) mkdir(t *testing.T, rel ...string) {
	t.Helper()
	for _, r := range rel {
		if err := os.MkdirAll(filepath.Join(f.ws, r), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func (f fixture) touch(t *testing.T, rel ...string) {
	t.Helper()
	for _, r := range rel {
		p := filepath.Join(f.ws, r)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func (f fixture) policy(mod func(p *policy.Policy)) *policy.Policy {
	p := policy.Default()
	p.Command = []string{"true"}
	p.Workspace = f.ws
	if mod != nil {
		mod(&p)
	}
	return &p
}

func find(mounts []ns.Mount, path string) (int, ns.Mount) {
	for i, m := range mounts {
		if m.Path == path {
			return i, m
		}
	}
	return -1, ns.Mount{}
}

func findKind(mounts []ns.Mount, kind, path string) int {
	for i, m := range mounts {
		if m.Kind == kind && m.Path == path {
			return i
		}
	}
	return -1
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func TestBuildPlanHides(t *testing.T) {
	f := newFixture(t)
	pl, err := BuildPlan(f.policy(func(p *policy.Policy) { p.TmpSize = 12345 }), f.env)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Workspace != f.ws || pl.Home != f.home {
		t.Errorf("workspace %q home %q", pl.Workspace, pl.Home)
	}
	for _, h := range hidden {
		i, m := find(pl.Mounts, h.path)
		fi, err := os.Lstat(h.path)
		present := err == nil && fi.IsDir()
		if !present {
			if i >= 0 {
				t.Errorf("%s is absent or a symlink on the host but planned: %+v", h.path, m)
			}
			continue
		}
		if i < 0 {
			t.Errorf("%s exists on the host but is not hidden", h.path)
			continue
		}
		if m.Kind != ns.KindTmpfs || !m.Dir || m.Mode != h.mode || m.Size != 12345 || m.FD != -1 {
			t.Errorf("%s: %+v", h.path, m)
		}
	}
	i, m := find(pl.Mounts, f.home)
	if i < 0 || m.Kind != ns.KindTmpfs || m.Mode != 0o700 {
		t.Errorf("home not an empty tmpfs: %+v", m)
	}
	// The tmpfs come first, shallow first, so a deeper one is not covered.
	last := -1
	for j, m := range pl.Mounts {
		if m.Kind != ns.KindTmpfs {
			continue
		}
		if j != last+1 {
			t.Errorf("tmpfs %s at %d after other mounts", m.Path, j)
		}
		if last >= 0 && depth(pl.Mounts[last].Path) > depth(m.Path) {
			t.Errorf("tmpfs %s (deeper) before %s", pl.Mounts[last].Path, m.Path)
		}
		last = j
	}
	// Never "/" itself, never twice.
	seen := map[string]bool{}
	for _, m := range pl.Mounts {
		if m.Kind == ns.KindTmpfs {
			if m.Path == "/" || seen[m.Path] {
				t.Errorf("bad tmpfs %s", m.Path)
			}
			seen[m.Path] = true
		}
	}
}

func TestBuildPlanHome(t *testing.T) {
	f := newFixture(t)
	link := filepath.Join(filepath.Dir(f.home), "homelink")
	if err := os.Symlink(f.home, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, home, want string
	}{
		{"symlinked HOME is resolved", link, f.home},
		{"missing HOME: no tmpfs", filepath.Join(f.home, "nope"), ""},
		{"no HOME", "", ""},
		{"HOME is /", "/", "/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := []string{"PATH=/bin"}
			if tt.home != "" {
				env = append(env, "HOME="+tt.home)
			}
			pl, err := BuildPlan(f.policy(nil), env)
			if err != nil {
				t.Fatal(err)
			}
			if pl.Home != tt.want {
				t.Errorf("Home = %q, want %q", pl.Home, tt.want)
			}
			for _, m := range pl.Mounts {
				if m.Kind == ns.KindTmpfs && m.Path == "/" {
					t.Error("tmpfs over /")
				}
				if m.Kind == ns.KindTmpfs && tt.home != "" && tt.want == "" && strings.HasPrefix(m.Path, f.home) {
					t.Errorf("tmpfs for a missing home: %+v", m)
				}
			}
			if tt.want != "" && tt.want != "/" {
				if i := findKind(pl.Mounts, ns.KindTmpfs, tt.want); i < 0 {
					t.Errorf("no tmpfs over %s", tt.want)
				}
				if !contains(pl.Landlock.ReadWrite, tt.want) {
					t.Errorf("home not writable in Landlock: %v", pl.Landlock.ReadWrite)
				}
			}
		})
	}
}

func TestBuildPlanWorkspace(t *testing.T) {
	f := newFixture(t)
	for _, ro := range []bool{false, true} {
		pl, err := BuildPlan(f.policy(func(p *policy.Policy) { p.ReadOnly = ro }), f.env)
		if err != nil {
			t.Fatal(err)
		}
		want := ns.KindBind
		if ro {
			want = ns.KindROBind
		}
		i, m := find(pl.Mounts, f.ws)
		if i < 0 || m.Kind != want || !m.Dir || m.FD != -1 {
			t.Errorf("read-only=%v: workspace mount %+v, want %s", ro, m, want)
		}
		if contains(pl.Writable, f.ws) == ro || contains(pl.Landlock.ReadWrite, f.ws) == ro {
			t.Errorf("read-only=%v: Writable %v, Landlock rw %v", ro, pl.Writable, pl.Landlock.ReadWrite)
		}
		// The bind comes after the tmpfs that hides its parent (/tmp).
		for j, m := range pl.Mounts {
			if m.Kind == ns.KindTmpfs && strings.HasPrefix(f.ws, m.Path+"/") && j > i {
				t.Errorf("tmpfs %s after the workspace bind", m.Path)
			}
		}
	}
}

func TestBuildPlanRootWorkspace(t *testing.T) {
	f := newFixture(t)
	_, err := BuildPlan(f.policy(func(p *policy.Policy) { p.Workspace = "/" }), f.env)
	if err == nil || !errors.Is(err, policy.ErrInvalid) || !strings.Contains(err.Error(), `workspace "/": the whole host`) {
		t.Errorf("writable / workspace: %v", err)
	}
	// A symlink to / is / too.
	link := filepath.Join(f.ws, "root")
	if err := os.Symlink("/", link); err != nil {
		t.Fatal(err)
	}
	_, err = BuildPlan(f.policy(func(p *policy.Policy) { p.Workspace = link }), f.env)
	if err == nil || !errors.Is(err, policy.ErrInvalid) {
		t.Errorf("workspace symlink to /: %v", err)
	}
	// A missing workspace.
	_, err = BuildPlan(f.policy(func(p *policy.Policy) { p.Workspace = filepath.Join(f.ws, "gone") }), f.env)
	if err == nil || !errors.Is(err, policy.ErrInvalid) || !strings.Contains(err.Error(), "workspace") {
		t.Errorf("missing workspace: %v", err)
	}
}

func TestBuildPlanRootWorkspaceReadOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("walks the host's root file system")
	}
	f := newFixture(t)
	p := f.policy(func(p *policy.Policy) { p.Workspace = "/"; p.ReadOnly = true })
	// With namespaces init binds nothing on the root itself: refused
	// when the plan is made (refuseOwnPlaces), not by init.
	var fe *policy.FieldError
	if _, err := BuildPlan(p, f.env); !errors.As(err, &fe) || fe.Key != "workspace" || fe.Value != "/" {
		t.Errorf("--read-only with workspace / and namespaces: %v, want refused", err)
	}
	// Degraded mode (Landlock rules, no mounts) keeps it.
	pl, err := planChecked(p, f.env, nil, nil, true)
	if err != nil {
		t.Fatalf("--read-only with workspace /, degraded: %v", err)
	}
	if i := findKind(pl.Mounts, ns.KindROBind, "/"); i < 0 {
		t.Error("no read-only bind of /")
	}
	if len(pl.Writable) != 0 {
		t.Errorf("writable: %v", pl.Writable)
	}
}

func TestBuildPlanWriteRead(t *testing.T) {
	f := newFixture(t)
	f.mkdir(t, "out", "data/sub", "both")
	f.touch(t, "data/file.txt")
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(f.ws, "out"), filepath.Join(f.ws, "outlink")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		write, read []string
		readOnly    bool
		want        map[string]string // path -> kind
		wantDir     map[string]bool
		wantErr     string
	}{
		{name: "relative --write", write: []string{"out"}, want: map[string]string{filepath.Join(f.ws, "out"): ns.KindBind}},
		{name: "symlinked --write resolved", write: []string{"outlink"}, want: map[string]string{filepath.Join(f.ws, "out"): ns.KindBind}},
		{name: "absolute --write outside", write: []string{outside}, want: map[string]string{outside: ns.KindBind}},
		{name: "--read dir", read: []string{"data"}, want: map[string]string{filepath.Join(f.ws, "data"): ns.KindROBind}},
		{name: "--read file", read: []string{"data/file.txt"}, want: map[string]string{filepath.Join(f.ws, "data/file.txt"): ns.KindROBind},
			wantDir: map[string]bool{filepath.Join(f.ws, "data/file.txt"): false}},
		{name: "--read outside", read: []string{outside}, want: map[string]string{outside: ns.KindROBind}},
		{name: "write wins over read", write: []string{outside}, read: []string{outside}, want: map[string]string{outside: ns.KindBind}},
		{name: "same path via symlink and direct", write: []string{"out"}, read: []string{"outlink"}, want: map[string]string{filepath.Join(f.ws, "out"): ns.KindBind}},
		{name: "--read of the workspace keeps it writable", read: []string{"."}, want: map[string]string{f.ws: ns.KindBind}},
		{name: "--write missing", write: []string{"nope"}, wantErr: `write "nope"`},
		{name: "--read missing", read: []string{"nope"}, wantErr: `read "nope"`},
		{name: "--write /", write: []string{"/"}, wantErr: `write "/"`},
		{name: "--write symlink to /", write: []string{"../../../../../../../../.."}, wantErr: "write"},
		{name: "--write empty", write: []string{""}, wantErr: "write"},
		{name: "--read empty", read: []string{""}, wantErr: "read"},
		{name: "read-only with the workspace writable", readOnly: true, write: []string{"."}, wantErr: `read-only conflicts with write "."`},
		{name: "read-only with a parent of the workspace writable", readOnly: true, write: []string{".."}, wantErr: `read-only conflicts with write ".."`},
		{name: "read-only with a path inside writable", readOnly: true, write: []string{"out"}, want: map[string]string{filepath.Join(f.ws, "out"): ns.KindBind, f.ws: ns.KindROBind}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := BuildPlan(f.policy(func(p *policy.Policy) { p.Write, p.Read, p.ReadOnly = tt.write, tt.read, tt.readOnly }), f.env)
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, policy.ErrInvalid) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an ErrInvalid naming %q", err, tt.wantErr)
				}
				// Libraries name options, never flags: the reader knows the source.
				if strings.Contains(err.Error(), "--") {
					t.Errorf("%q spells a flag", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for p, kind := range tt.want {
				n := 0
				for _, m := range pl.Mounts {
					if m.Path == p && (m.Kind == ns.KindBind || m.Kind == ns.KindROBind) {
						n++
						if m.Kind != kind {
							t.Errorf("%s: %s, want %s", p, m.Kind, kind)
						}
						wantDir := true
						if d, ok := tt.wantDir[p]; ok {
							wantDir = d
						}
						if m.Dir != wantDir {
							t.Errorf("%s: Dir %v", p, m.Dir)
						}
					}
				}
				if n != 1 {
					t.Errorf("%s bound %d times", p, n)
				}
				if contains(pl.Writable, p) != (kind == ns.KindBind) {
					t.Errorf("%s: Writable %v", p, pl.Writable)
				}
			}
			// Binds are ordered shallow first.
			var prev string
			for _, m := range pl.Mounts {
				if (m.Kind == ns.KindBind || m.Kind == ns.KindROBind) && !strings.HasPrefix(m.Why, "pinned") && m.Why != "git worktree's shared git dir" {
					if prev != "" && depth(prev) > depth(m.Path) {
						t.Errorf("bind %s after deeper %s", m.Path, prev)
					}
					prev = m.Path
				}
			}
		})
	}
}

func TestBuildPlanMasks(t *testing.T) {
	f := newFixture(t)
	f.touch(t, ".env", "secret.txt", "a/b/key.pem", ".git/config", ".git/HEAD", "src/main.go")
	f.mkdir(t, ".git/hooks", ".ssh")
	pl, err := BuildPlan(f.policy(func(p *policy.Policy) { p.Deny = []string{"secret.txt"} }), f.env)
	if err != nil {
		t.Fatal(err)
	}
	lastBind := -1
	for i, m := range pl.Mounts {
		if (m.Kind == ns.KindBind || m.Kind == ns.KindROBind) && !strings.HasPrefix(m.Why, "pinned") {
			lastBind = i
		}
	}
	wantMasks := map[string]string{
		filepath.Join(f.ws, ".env"):        ns.KindMask,
		filepath.Join(f.ws, "secret.txt"):  ns.KindMask,
		filepath.Join(f.ws, "a/b/key.pem"): ns.KindMask,
		filepath.Join(f.ws, ".ssh"):        ns.KindMask,
		filepath.Join(f.ws, ".git/config"): ns.KindReadOnly,
		filepath.Join(f.ws, ".git/hooks"):  ns.KindReadOnly,
	}
	for p, kind := range wantMasks {
		i := findKind(pl.Mounts, kind, p)
		if i < 0 {
			t.Errorf("no %s for %s", kind, p)
			continue
		}
		if i < lastBind {
			t.Errorf("%s %s at %d, before the bind at %d (deny must win)", kind, p, i, lastBind)
		}
	}
	if i, m := find(pl.Mounts, filepath.Join(f.ws, "src/main.go")); i >= 0 {
		t.Errorf("unprotected file planned: %+v", m)
	}
	if i, m := find(pl.Mounts, filepath.Join(f.ws, ".ssh")); i >= 0 && !m.Dir {
		t.Errorf(".ssh mask not a directory: %+v", m)
	}
	// Pins: every directory between the writable workspace and a mask, bound
	// onto itself, before the masks, and nothing else.
	pins := map[string]int{}
	for i, m := range pl.Mounts {
		if strings.HasPrefix(m.Why, "pinned") {
			if m.Kind != ns.KindPin || !m.Dir {
				t.Errorf("pin %+v", m)
			}
			if _, dup := pins[m.Path]; dup {
				t.Errorf("pinned twice: %s", m.Path)
			}
			pins[m.Path] = i
		}
	}
	wantPins := []string{filepath.Join(f.ws, ".git"), filepath.Join(f.ws, "a"), filepath.Join(f.ws, "a/b")}
	for _, p := range wantPins {
		if _, ok := pins[p]; !ok {
			t.Errorf("%s not pinned (pins %v)", p, pins)
		}
	}
	if len(pins) != len(wantPins) {
		t.Errorf("pins %v, want %v", pins, wantPins)
	}
	if pins[filepath.Join(f.ws, "a")] > pins[filepath.Join(f.ws, "a/b")] {
		t.Error("a/b pinned before a")
	}
	for p, i := range pins {
		if i < lastBind {
			t.Errorf("pin %s before the binds", p)
		}
		for mp := range wantMasks {
			if j := findKind(pl.Mounts, wantMasks[mp], mp); j >= 0 && j < i {
				t.Errorf("mask %s at %d before pin %s at %d", mp, j, p, i)
			}
		}
	}
	if _, ok := pins[f.ws]; ok {
		t.Error("the workspace itself pinned")
	}
	// System secrets come last.
	if fi, err := os.Lstat("/etc/shadow"); err == nil && fi.Mode()&os.ModeSymlink == 0 {
		if i := findKind(pl.Mounts, ns.KindMask, "/etc/shadow"); i < 0 {
			t.Error("/etc/shadow not masked")
		}
	}
	// Environment: secrets dropped, TMPDIR forced.
	env := strings.Join(pl.Env, "\n")
	if strings.Contains(env, "AWS_SECRET") || !strings.Contains(env, "TMPDIR=/tmp") || !strings.Contains(env, "PATH=/usr/bin:/bin") {
		t.Errorf("env %q", pl.Env)
	}
}

func TestBuildPlanNoPinsReadOnly(t *testing.T) {
	f := newFixture(t)
	f.touch(t, ".git/config", "a/.env")
	f.mkdir(t, ".git/hooks")
	pl, err := BuildPlan(f.policy(func(p *policy.Policy) { p.ReadOnly = true }), f.env)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range pl.Mounts {
		if strings.HasPrefix(m.Why, "pinned") {
			t.Errorf("pin in a read-only workspace: %+v", m)
		}
	}
	if findKind(pl.Mounts, ns.KindMask, filepath.Join(f.ws, "a/.env")) < 0 {
		t.Error(".env not masked in a read-only workspace")
	}
}

func TestBuildPlanDenyConflicts(t *testing.T) {
	f := newFixture(t)
	f.mkdir(t, "secrets", ".git/hooks")
	tests := []struct {
		name string
		mod  func(p *policy.Policy)
	}{
		{"--write inside a denied dir", func(p *policy.Policy) { p.Deny = []string{"secrets/"}; p.Write = []string{"secrets"} }},
		{"--write inside .git/hooks", func(p *policy.Policy) { p.Write = []string{".git/hooks"} }},
		{"bad pattern", func(p *policy.Policy) { p.Deny = []string{"[unclosed"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := BuildPlan(f.policy(tt.mod), f.env)
			if err == nil || !errors.Is(err, policy.ErrInvalid) {
				t.Errorf("got %v, want ErrInvalid", err)
			}
		})
	}
}

func TestBuildPlanLandlock(t *testing.T) {
	f := newFixture(t)
	f.mkdir(t, "out")
	tests := []struct {
		net        string
		noLocalTCP bool
		denyTCP    bool
	}{
		{policy.NetNone, false, false},
		{policy.NetNone, true, true},
		{policy.NetAllow, false, false},
		{policy.NetAllow, true, false},
		{policy.NetHost, false, false},
		{policy.NetHost, true, false},
	}
	for _, tt := range tests {
		pl, err := BuildPlan(f.policy(func(p *policy.Policy) {
			p.Net, p.NoLocalTCP, p.RequireLandlock, p.Write = tt.net, tt.noLocalTCP, 3, []string{"out"}
		}), f.env)
		if err != nil {
			t.Fatal(err)
		}
		ll := pl.Landlock
		if ll.DenyTCP != tt.denyTCP {
			t.Errorf("net %s no-local-tcp %v: DenyTCP %v, want %v", tt.net, tt.noLocalTCP, ll.DenyTCP, tt.denyTCP)
		}
		if !ll.Scope || ll.Require != 3 {
			t.Errorf("Scope %v Require %d", ll.Scope, ll.Require)
		}
		if len(ll.ReadExec) != 1 || ll.ReadExec[0] != "/" {
			t.Errorf("ReadExec %v", ll.ReadExec)
		}
		for _, p := range []string{f.ws, filepath.Join(f.ws, "out"), "/tmp", "/var/tmp", "/dev/shm", "/dev/null", f.home} {
			if !contains(ll.ReadWrite, p) {
				t.Errorf("ReadWrite %v lacks %s", ll.ReadWrite, p)
			}
		}
		for _, p := range ll.ReadWrite {
			if p == "/" {
				t.Error("/ writable in Landlock")
			}
		}
		if !contains(ll.DevIoctl, "/dev/tty") || !contains(ll.DevIoctl, "/dev/pts") {
			t.Errorf("DevIoctl %v", ll.DevIoctl)
		}
	}
}

func TestEnclosing(t *testing.T) {
	roots := []string{"/ws", "/ws/sub", "/other", "/w"}
	tests := []struct{ p, want string }{
		{"/ws", "/ws"},
		{"/ws/a", "/ws"},
		{"/ws/sub", "/ws/sub"},
		{"/ws/sub/x/y", "/ws/sub"},
		{"/ws/subx", "/ws"},
		{"/wsx/a", ""},
		{"/w/a", "/w"},
		{"/other2", ""},
		{"/", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := enclosing(tt.p, roots); got != tt.want {
			t.Errorf("enclosing(%q) = %q, want %q", tt.p, got, tt.want)
		}
	}
	if got := enclosing("/a", nil); got != "" {
		t.Errorf("no roots: %q", got)
	}
}

func TestLookupEnv(t *testing.T) {
	env := []string{"HOMEX=1", "HOME=/h", "HOME=/second", "PATH"}
	tests := []struct{ name, want string }{{"HOME", "/h"}, {"PATH", ""}, {"HOMEX", "1"}, {"NONE", ""}}
	for _, tt := range tests {
		if got := lookupEnv(env, tt.name); got != tt.want {
			t.Errorf("lookupEnv(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestPlanPrint(t *testing.T) {
	f := newFixture(t)
	f.touch(t, ".env")
	pl, err := BuildPlan(f.policy(nil), append(f.env, "SECRETVAL=hunter2"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	pl.Print(&b)
	out := b.String()
	for _, want := range []string{"workspace  " + f.ws, "bind       " + f.ws, "mask       " + filepath.Join(f.ws, ".env"), "env        PATH", "deny tcp false"} {
		if !strings.Contains(out, want) {
			t.Errorf("--dry-run output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "/usr/bin:/bin") || strings.Contains(out, "hunter2") {
		t.Error("--dry-run prints environment values")
	}
}

// Adversarial: --dry-run printed each path as it was, so a name another
// local user chose (a host socket's, bound in a directory of theirs) or an
// earlier agent left in the workspace put its escape sequences on the
// user's terminal (a title, a cleared screen, OSC 52's clipboard write).
// Seen failing on main's Print: the socket's ESC and BEL came out raw
// (and, by hand, `jail --dry-run` beside such a socket set the terminal's
// title).
func TestPlanPrintEscapes(t *testing.T) {
	f := newFixture(t)
	f.touch(t, ".env.\x1b]0;WS\x07")
	pl, err := BuildPlan(f.policy(nil), f.env)
	if err != nil {
		t.Fatal(err)
	}
	sock := "/var/lib/other/e\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2K\rx\nl.sock\x9b2J"
	pl.Mounts = append(pl.Mounts, ns.Mount{Kind: ns.KindMask, Path: sock, FD: -1, Why: whyHostSocket})
	pl.Notes = append(pl.Notes, "a note naming "+sock)
	var b strings.Builder
	pl.Print(&b)
	out := b.String()
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if strings.ContainsFunc(l, termsafe.Control) || !utf8.ValidString(l) {
			t.Errorf("--dry-run writes a control character to the terminal: %q", l)
		}
	}
	if want := "mask       " + termsafe.Escape(sock) + "  (" + whyHostSocket + ")\n"; !strings.Contains(out, want) {
		t.Errorf("--dry-run output lacks %q:\n%s", want, out)
	}
}

// git (gitguard) is wired into the mounts: its read-only and hidden paths
// are mounted after the binds, with pins, once each (fsrules' .git/config is
// not mounted twice); the plan carries what is watched; --allow-git-config
// lifts it.
func TestBuildPlanGit(t *testing.T) {
	f := newFixture(t)
	f.touch(t, ".git/HEAD", ".git/config", "sub/.git", "tools/fsmon")
	f.mkdir(t, ".git/hooks", ".git/objects", ".git/refs", ".githooks", "src")
	os.WriteFile(filepath.Join(f.ws, ".git/config"), []byte("[core]\n\thooksPath = .githooks\n\tfsmonitor = tools/fsmon\n"), 0o644)
	os.WriteFile(filepath.Join(f.ws, "sub/.git"), []byte("gitdir: ../elsewhere\n"), 0o644)
	pl, err := BuildPlan(f.policy(nil), f.env)
	if err != nil {
		t.Fatal(err)
	}
	for p, kind := range map[string]string{
		".githooks":   ns.KindReadOnly,
		"tools/fsmon": ns.KindReadOnly,
		".git/config": ns.KindReadOnly,
		"sub/.git":    ns.KindMask,
	} {
		n := 0
		for _, m := range pl.Mounts {
			if m.Path == filepath.Join(f.ws, p) {
				n++
				if m.Kind != kind {
					t.Errorf("%s: %s, want %s", p, m.Kind, kind)
				}
			}
		}
		if n != 1 {
			t.Errorf("%s mounted %d times", p, n)
		}
	}
	for _, d := range []string{"sub", "tools", ".git"} {
		if findKind(pl.Mounts, ns.KindPin, filepath.Join(f.ws, d)) < 0 {
			t.Errorf("%s not pinned", d)
		}
	}
	if pl.Git == nil || pl.Git.Guard == nil {
		t.Fatal("no git plan")
	}
	var watched []string
	for _, w := range pl.Git.Watch {
		watched = append(watched, w.Path)
	}
	if !contains(watched, filepath.Join(f.ws, ".git/commondir")) || !contains(pl.Git.Observe, filepath.Join(f.ws, "src")) {
		t.Errorf("watch %v observe %v", watched, pl.Git.Observe)
	}
	var b strings.Builder
	pl.Print(&b)
	for _, want := range []string{"watch      " + f.ws + "/.git/commondir", "observe    " + f.ws + "/src", "git        exit check"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("--dry-run lacks %q", want)
		}
	}

	pl, err = BuildPlan(f.policy(func(p *policy.Policy) { p.AllowGitConfig = true }), f.env)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Git != nil || findKind(pl.Mounts, ns.KindReadOnly, filepath.Join(f.ws, ".githooks")) >= 0 {
		t.Errorf("--allow-git-config: git plan %v", pl.Git)
	}
}

func TestMergeMasks(t *testing.T) {
	fm := []fsrules.Mask{
		{Path: "/w/.git/config", Kind: fsrules.ReadOnly, Rule: "default: .git/config"},
		{Path: "/w/.husky", Kind: fsrules.ReadOnly, Dir: true, Rule: "x"},
		{Path: "/w/secret", Kind: fsrules.Hide, Dir: true, Rule: "--deny secret/"},
		{Path: "/w/sub/.git", Kind: fsrules.ReadOnly, Rule: "x"},
	}
	gp := gitguard.Plan{
		ReadOnly: []gitguard.Protect{
			{Path: "/w/.git/config", Why: "dup"},
			{Path: "/w/.husky/_", Dir: true, Why: "inside a read-only dir"},
			{Path: "/w/secret/.git/config", Why: "inside a hidden dir"},
			{Path: "/w/.git/hooks", Dir: true, Why: "new"},
			{Path: "/w/.git-x", Why: "sorts between"},
		},
		Hide: []gitguard.Protect{{Path: "/w/sub/.git", Why: "hide wins"}},
	}
	var got []string
	for _, m := range mergeMasks(fm, gp) {
		got = append(got, m.Kind.String()+" "+m.Path+" "+m.Rule)
	}
	want := []string{
		"read-only /w/.git-x git: sorts between",
		"read-only /w/.git/config default: .git/config",
		"read-only /w/.git/hooks git: new",
		"read-only /w/.husky x",
		"hide /w/secret --deny secret/",
		"hide /w/sub/.git git: hide wins",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// BenchmarkMergeMasksRepos: the masks of 2,000 repositories in a writable
// tree (each git dir's config, hooks directory and a pack), merged. Each
// path's ancestors are looked up: before gitpacks3 every path was compared
// with every read-only directory (1.4 s of such a start).
func BenchmarkMergeMasksRepos(b *testing.B) {
	var gp gitguard.Plan
	for i := 0; i < 2000; i++ {
		d := fmt.Sprintf("/w/r%04d/.git", i)
		gp.ReadOnly = append(gp.ReadOnly,
			gitguard.Protect{Path: d + "/config", Why: "x"},
			gitguard.Protect{Path: d + "/hooks", Dir: true, Why: "x"},
			gitguard.Protect{Path: d + "/hooks/pre-commit", Why: "inside"})
		gp.History = append(gp.History, gitguard.Protect{Path: d + "/objects/pack/pack-1.pack", Why: "x"})
	}
	for b.Loop() {
		if n := len(mergeMasks(nil, gp)); n != 3*2000 {
			b.Fatalf("%d masks", n)
		}
	}
}
