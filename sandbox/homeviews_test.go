package sandbox

import (
	"errors"
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
