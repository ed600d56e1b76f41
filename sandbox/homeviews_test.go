package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
)

// TestHomeViews: each place another mount shows the HOME is hidden before
// the binds (none holds it), masked after them (a bind holds it), shown
// when a bind is that very place, and refused when a bind lies inside a
// view that must be masked after it, or is a writable second HOME.
func TestHomeViews(t *testing.T) {
	ws := ns.Mount{Kind: ns.KindBind, Path: "/w", Why: "workspace"}
	ro := func(p string) ns.Mount { return ns.Mount{Kind: ns.KindROBind, Path: p, Why: "--read"} }
	rw := func(p string) ns.Mount { return ns.Mount{Kind: ns.KindBind, Path: p, Why: "--write"} }
	whole := func(p string) fsrules.View { return fsrules.View{Path: p} }
	part := func(p string) fsrules.View { return fsrules.View{Path: p, Part: true} }
	for _, c := range []struct {
		name        string
		views       []fsrules.View
		bl          []ns.Mount
		allow       bool
		early, late string // comma-separated
		note, err   string // substrings; "" none
	}{
		{"none", nil, []ns.Mount{ws}, false, "", "", "", ""},
		{"outside every bind: before the binds", []fsrules.View{whole("/var/lib/v"), part("/etc/k")}, []ns.Mount{ws}, false, "/var/lib/v,/etc/k", "", "", ""},
		{"a read path inside it reappears", []fsrules.View{whole("/var/lib/v")}, []ns.Mount{ws, ro("/var/lib/v/proj")}, false, "/var/lib/v", "", "", ""},
		{"under the workspace: after the binds", []fsrules.View{whole("/w/v")}, []ns.Mount{ws}, false, "", "/w/v", "", ""},
		{"/w/vv is not in /w/v", []fsrules.View{whole("/w/v")}, []ns.Mount{ws, rw("/w/vv")}, false, "", "/w/v", "", ""},
		{"the workspace is a view of a part: shown", []fsrules.View{part("/w")}, []ns.Mount{ws}, false, "", "", "workspace /w is another mount", ""},
		{"a read path is a view of the whole HOME: shown", []fsrules.View{whole("/var/lib/v")}, []ns.Mount{ws, ro("/var/lib/v")}, false, "", "", "--read /var/lib/v", ""},
		{"a write path is a view of the whole HOME: refused", []fsrules.View{whole("/var/lib/v")}, []ns.Mount{ws, rw("/var/lib/v")}, false, "", "", "", "is your home directory"},
		{"... unless allow-writable-home", []fsrules.View{whole("/var/lib/v")}, []ns.Mount{ws, rw("/var/lib/v")}, true, "", "", "--write /var/lib/v", ""},
		{"a bind inside a view inside a bind: refused", []fsrules.View{whole("/w/v")}, []ns.Mount{ws, rw("/w/v/proj")}, false, "", "", "", "another mount of your home directory inside /w"},
	} {
		t.Run(c.name, func(t *testing.T) {
			early, late, notes, err := homeViews(c.views, c.bl, map[string]string{}, c.allow)
			if c.err != "" {
				var fe *policy.FieldError
				if err == nil || !strings.Contains(err.Error(), c.err) || !errors.As(err, &fe) {
					t.Fatalf("err %v, want a FieldError with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(early, ","); got != c.early {
				t.Errorf("early %q, want %q", got, c.early)
			}
			if got := strings.Join(late, ","); got != c.late {
				t.Errorf("late %q, want %q", got, c.late)
			}
			if got := strings.Join(notes, "\n"); (c.note == "") != (got == "") || !strings.Contains(got, c.note) {
				t.Errorf("notes %q, want %q", got, c.note)
			}
		})
	}
}

// TestPlaceViews: the places the plan hides outside the HOME (/var/tmp
// here) and the system secrets it masks (/etc/shadow) are hidden where
// another mount of their file system shows them, as the HOME is: a view
// outside every bind by an empty tmpfs of the place's mode, one in the
// workspace by a mask after the binds, a secret's view by a mask; a read
// path inside a view in the workspace is refused, naming the place. The
// host's mount table gets the second mounts only root could make (the
// e2e TestHiddenPlaceViewsHidden makes them). Seen failing before the
// places' and secrets' views were searched (no mount at any view).
func TestPlaceViews(t *testing.T) {
	real, err := fsrules.ReadMountinfo()
	if err != nil {
		t.Fatal(err)
	}
	// The file systems holding /var/tmp and /etc/shadow: the mounts with
	// the longest points that hold them, as fsrules.Views finds them.
	devOf := func(p string) (dev, root string) { return mountOf(real, p) }
	if fi, err := os.Lstat("/var/tmp"); err != nil || !fi.IsDir() {
		t.Fatalf("/var/tmp: %v (the test needs the hidden place)", err)
	}
	if _, err := os.Lstat("/etc/shadow"); err != nil {
		t.Fatalf("/etc/shadow: %v (the test needs the secret)", err)
	}
	f := newFixture(t)
	f.mkdir(t, "vt/x", "etcview")
	f.touch(t, "etcview/shadow")
	vtDev, vtRoot := devOf("/var/tmp")
	etcDev, etcRoot := devOf("/etc")
	esc := strings.NewReplacer(" ", `\040`).Replace
	extra := fmt.Sprintf("9001 1 %s %s %s rw - ext4 x rw\n9002 1 %s %s %s rw - ext4 x rw\n9003 1 %s %s %s rw - ext4 x rw\n",
		vtDev, esc(vtRoot), "/usr/share", vtDev, esc(vtRoot), esc(filepath.Join(f.ws, "vt")), etcDev, esc(etcRoot), esc(filepath.Join(f.ws, "etcview")))
	old := readMountinfo
	readMountinfo = func() ([]byte, error) { return append(slices.Clip(real), extra...), nil }
	t.Cleanup(func() { readMountinfo = old })

	plan, err := BuildPlan(f.policy(nil), f.env)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]ns.Mount{
		"/usr/share":                          {Kind: ns.KindTmpfs, Dir: true, Mode: 0o1777},
		filepath.Join(f.ws, "vt"):             {Kind: ns.KindMask, Dir: true},
		filepath.Join(f.ws, "etcview/shadow"): {Kind: ns.KindMask},
	}
	for _, m := range plan.Mounts {
		w, ok := want[m.Path]
		why := m.Why == "another mount of /var/tmp" || m.Why == "another mount of /var/tmp: empty; only read/write paths reappear" || m.Why == "host secret, another mount"
		if ok && why && m.Kind == w.Kind && m.Dir == w.Dir && (w.Kind != ns.KindTmpfs || m.Mode == w.Mode) {
			delete(want, m.Path)
		}
	}
	for p, w := range want {
		t.Errorf("no %v at %s (a view of a hidden place or secret)", w.Kind, p)
	}

	_, err = BuildPlan(f.policy(func(p *policy.Policy) { p.Read = []string{filepath.Join(f.ws, "vt/x")} }), f.env)
	var fe *policy.FieldError
	if !errors.As(err, &fe) || !strings.Contains(fe.Reason, "another mount of /var/tmp inside") {
		t.Errorf("a read path in a view of /var/tmp in the workspace: %v, want refused naming /var/tmp", err)
	}
}

// mountOf returns the file system (its device) holding p in the mount
// table and p's path in it: the mount with the longest point holding p,
// as fsrules.Views finds it. A test adds a second mount of it.
func mountOf(table []byte, p string) (dev, root string) {
	best := ""
	for _, m := range fsrules.ParseMountinfo(table) {
		if (m.Point == "/" || p == m.Point || strings.HasPrefix(p, m.Point+"/")) && len(m.Point) >= len(best) {
			best, dev = m.Point, m.Dev
			root = filepath.Join(m.Root, strings.TrimPrefix(p, m.Point))
		}
	}
	return dev, root
}
