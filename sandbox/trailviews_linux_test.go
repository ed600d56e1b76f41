package sandbox

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
)

// Adversarial: an --audit trail whose directory another mount also shows
// (a host bind of it, or of a parent, inside the workspace or under the
// root's read-only view). Hidden by its own path only, the agent read its
// live trail, and every other one there, through the other mount, and
// rewrote it where that mount lay in the workspace: seen with main's
// binary as jailtest (mount --bind ua uws/logs; jail --audit ua/t.jsonl
// -- sh -c 'echo FORGED >> logs/t.jsonl' appended, and --verify then
// failed at line 4). Each such place is refused when the sandbox can write
// the trail there, masked when it can see it; a view of a part of the
// directory that a bind of the plan shows (the workspace may be a
// subdirectory of the trail's) is left to that bind.
func TestTrailViews(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	state := filepath.Join(root, "state")
	ro := filepath.Join(root, "ro")
	for _, d := range []string{ws, state, ro, filepath.Join(ro, "part"), filepath.Join(root, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	trail := filepath.Join(root, "trails", "t.jsonl")
	plan := []ns.Mount{
		{Kind: ns.KindROBind, Path: "/"},
		{Kind: ns.KindBind, Path: ws},
		{Kind: ns.KindTmpfs, Path: filepath.Join(root, "home")},
		{Kind: ns.KindMask, Path: state, Dir: true}, // the plan's mask of jail's state directory
	}
	writable, hidden := []string{ws}, []string{state}
	whole := func(p string) fsrules.View { return fsrules.View{Path: p} }
	part := func(p string) fsrules.View { return fsrules.View{Path: p, Part: true} }
	for _, c := range []struct {
		name  string
		views []fsrules.View
		masks []string // paths masked, in order
		err   bool
	}{
		{"no other mount", nil, nil, false},
		{"the directory in the workspace: refused", []fsrules.View{whole(filepath.Join(ws, "logs"))}, nil, true},
		{"a part of it in the workspace: the workspace's", []fsrules.View{part(filepath.Join(ws, "old"))}, nil, false},
		{"a part of it is the workspace: not masked", []fsrules.View{part(ws)}, nil, false},
		{"the directory under the read-only root: masked", []fsrules.View{whole(filepath.Join(ro, "v"))}, []string{filepath.Join(ro, "v")}, false},
		{"a part of it under the read-only root: masked", []fsrules.View{part(filepath.Join(ro, "part"))}, []string{filepath.Join(ro, "part")}, false},
		{"under a private tmpfs: not visible", []fsrules.View{whole(filepath.Join(root, "home", "v"))}, nil, false},
		{"in the masked state directory: fine", []fsrules.View{whole(filepath.Join(state, "v"))}, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			masks, err := trailViews(nil, trail, c.views, writable, hidden, plan)
			if c.err {
				if !errors.Is(err, audit.ErrWritableBySandbox) {
					t.Fatalf("err %v, want ErrWritableBySandbox", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range masks {
				if m.Kind != ns.KindMask {
					t.Errorf("mount %+v is not a mask", m)
				}
				got = append(got, m.Path)
			}
			if len(got) != len(c.masks) {
				t.Fatalf("masks %q, want %q", got, c.masks)
			}
			for i := range got {
				if got[i] != c.masks[i] {
					t.Errorf("masks %q, want %q", got, c.masks)
				}
			}
		})
	}
}

// The --audit trail's other mounts are found in the mount table the plan
// read (Plan.hostMounts), not in one read again later: the trail's masks
// and the plan's agree, and a table the plan could not read refuses the
// trail as a failed read did. Here the plan's table has a second mount of
// the trail's directory in the workspace (only root could make it: the
// e2e TestTrailViews* make them): the trail, writable there, is refused.
// Seen failing on main's openTrail, which read /proc/self/mountinfo
// afresh (no such mount there: the trail was accepted), and accepted the
// trail when the plan's read failed.
func TestTrailViewsFromPlan(t *testing.T) {
	real, err := fsrules.ReadMountinfo()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	trails := filepath.Join(filepath.Dir(f.ws), "trails")
	if err := os.Mkdir(trails, 0o700); err != nil {
		t.Fatal(err)
	}
	f.mkdir(t, "logs")
	dev, root := mountOf(real, trails)
	esc := strings.NewReplacer(" ", `\040`).Replace
	extra := fmt.Sprintf("9001 1 %s %s %s rw - ext4 x rw\n", dev, esc(root), esc(filepath.Join(f.ws, "logs")))
	// After the plan the table is as it is now: openTrail must not read it.
	now := func() ([]byte, error) { return real, nil }
	openAt := func(dir string, table func() ([]byte, error)) error {
		t.Helper()
		return openTrailWith(t, f, dir, table, now)
	}
	open := func(table func() ([]byte, error)) error { return openAt(trails, table) }
	if err := open(func() ([]byte, error) { return real, nil }); err != nil {
		t.Fatalf("a trail outside the workspace, with no other mount: %v", err)
	}
	if err := open(func() ([]byte, error) { return append(slices.Clip(real), extra...), nil }); !errors.Is(err, audit.ErrWritableBySandbox) {
		t.Errorf("ATTACK WORKED: the trail's directory mounted in the workspace in the plan's table, accepted (err %v)", err)
	}
	if err := open(func() ([]byte, error) { return nil, errors.New("unreadable") }); err == nil {
		t.Errorf("a plan without a mount table: the trail accepted with no view ruled out")
	}
	// The path spelled through a link and "..": the views are the
	// directory's the kernel opens (trails), not the text's (elsewhere).
	// Seen failing before the directory was resolved as the kernel does
	// (the views of elsewhere: none; accepted).
	elsewhere := filepath.Join(filepath.Dir(f.ws), "elsewhere")
	if err := os.MkdirAll(filepath.Join(trails, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(elsewhere, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(trails, "sub"), filepath.Join(elsewhere, "l")); err != nil {
		t.Fatal(err)
	}
	if err := openAt(elsewhere+"/l/..", func() ([]byte, error) { return append(slices.Clip(real), extra...), nil }); !errors.Is(err, audit.ErrWritableBySandbox) {
		t.Errorf("ATTACK WORKED: elsewhere/l/.. (the trail's directory, mounted in the workspace) accepted (err %v)", err)
	}
}

// Adversarial: the --audit path goes through another mount of the
// workspace (a host bind of it elsewhere) and leaves it again, by a
// symlink there or by "..". The trail lies outside, but the link is the
// workspace's: the agent points it at a forgery of its own after the run,
// and the path then leads there. CheckPlacement refuses such a path
// through the workspace's own path; through its other mount it was
// accepted: seen with main's binary as root (mount --bind ws wsview;
// ws/out -> trails; jail --audit wsview/out/t.jsonl -- sh -c 'ln -sfn
// ws/forged out.new; mv -T out.new out; echo FORGED > forged/t.jsonl':
// exit 0, and wsview/out/t.jsonl was FORGED after the run), and here on
// main's openTrail (both cases accepted). The places the plan's mount
// table shows the writable paths at are writable too.
func TestTrailPathThroughAViewOfTheWorkspace(t *testing.T) {
	real, err := fsrules.ReadMountinfo()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	base := filepath.Dir(f.ws)
	trails := filepath.Join(base, "trails")
	// wsview stands for the workspace's other mount: the plan's table
	// says so; on disk it holds what the workspace would show there.
	wsview := filepath.Join(base, "wsview")
	for _, d := range []string{trails, filepath.Join(wsview, "sub")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(trails, filepath.Join(wsview, "out")); err != nil {
		t.Fatal(err)
	}
	dev, root := mountOf(real, f.ws)
	esc := strings.NewReplacer(" ", `\040`).Replace
	view := fmt.Sprintf("9002 1 %s %s %s rw - ext4 x rw\n", dev, esc(root), esc(wsview))
	withView := func() ([]byte, error) { return append(slices.Clip(real), view...), nil }
	open := func(dir string, table func() ([]byte, error)) error {
		t.Helper()
		return openTrailWith(t, f, dir, table, nil)
	}
	// Without the other mount in the table wsview is a place of the
	// user's own, and the path is fine.
	if err := open(filepath.Join(wsview, "out"), func() ([]byte, error) { return real, nil }); err != nil {
		t.Fatalf("no other mount of the workspace: %v", err)
	}
	for _, dir := range []string{filepath.Join(wsview, "out"), wsview + "/sub/../../trails"} {
		if err := open(dir, withView); !errors.Is(err, audit.ErrWritableBySandbox) {
			t.Errorf("ATTACK WORKED: %s, through another mount of the workspace and out of it, accepted (err %v)", dir, err)
		}
	}
	// Where it stays out of every writable place: still fine.
	if err := open(trails, withView); err != nil {
		t.Errorf("a trail outside, the workspace mounted elsewhere too: %v", err)
	}
}

// openTrailWith plans a run with its trail in dir while the mount table
// reads as table, then opens the trail (the table reading as now, when
// given, from after the plan on) and closes it: openTrail's answer.
func openTrailWith(t *testing.T, f fixture, dir string, table, now func() ([]byte, error)) error {
	t.Helper()
	old := readMountinfo
	readMountinfo = table
	defer func() { readMountinfo = old }()
	pol := f.policy(func(p *policy.Policy) { p.AuditFile = dir + "/t" + strconv.Itoa(rand.Int()) + ".jsonl" })
	plan, err := BuildPlan(pol, f.env)
	if err != nil {
		t.Fatal(err)
	}
	if now != nil {
		readMountinfo = now
	}
	r := &runner{pol: pol, plan: plan, started: time.Now()}
	err = r.openTrail(&ns.Spec{Mounts: plan.Mounts})
	if r.trail != nil {
		r.trail.Close()
	}
	return err
}
