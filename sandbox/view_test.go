package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/dircache"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
)

// TestBuildPlanHomeRefused: a writable workspace or --write path that is the
// home directory or holds it is refused, naming the path, the reason and the
// flag that accepts it; read-only, a path inside the home, or the flag pass.
func TestBuildPlanHomeRefused(t *testing.T) {
	f := newFixture(t)
	parent := filepath.Dir(f.home)
	for _, c := range []struct {
		name  string
		mod   func(p *policy.Policy)
		words []string // in the error; none: accepted
	}{
		{"workspace = home", func(p *policy.Policy) { p.Workspace = f.home }, []string{`workspace "` + f.home + `"`, "is your home directory"}},
		{"workspace holds home", func(p *policy.Policy) { p.Workspace = parent }, []string{`workspace "` + parent + `"`, "holds your home directory " + f.home}},
		{"-w home", func(p *policy.Policy) { p.Write = []string{f.home} }, []string{`write "` + f.home + `"`}},
		{"-w parent", func(p *policy.Policy) { p.Write = []string{parent} }, []string{`write "` + parent + `"`}},
		{"-w home via symlink", func(p *policy.Policy) {
			// Outside the workspace: a link in it is refused as such
			// (grantLinks), whatever it leads to.
			l := filepath.Join(filepath.Dir(f.ws), "h")
			if err := os.Symlink(f.home, l); err != nil {
				t.Fatal(err)
			}
			p.Write = []string{l}
		}, []string{`write "` + filepath.Join(filepath.Dir(f.ws), "h") + `"`, "is your home directory " + f.home}},
		{"read-only home workspace", func(p *policy.Policy) { p.Workspace, p.ReadOnly = f.home, true }, nil},
		{"-r home", func(p *policy.Policy) { p.Read = []string{f.home} }, nil},
		{"inside home", func(p *policy.Policy) {
			d := filepath.Join(f.home, "proj")
			os.MkdirAll(d, 0o755)
			p.Workspace = d
		}, nil},
		{"sibling with a common prefix", func(p *policy.Policy) {
			d := f.home + "x"
			os.MkdirAll(d, 0o755)
			p.Write = []string{d}
		}, nil},
		{"flag: workspace = home", func(p *policy.Policy) { p.Workspace, p.AllowWritableHome = f.home, true }, nil},
		{"flag: -w parent", func(p *policy.Policy) { p.Write, p.AllowWritableHome = []string{parent}, true }, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := BuildPlan(f.policy(c.mod), f.env)
			if len(c.words) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, policy.ErrInvalid) {
				t.Errorf("not ErrInvalid: %v", err)
			}
			for _, w := range append(c.words, "`allow-writable-home`", "startup files") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("not one line: %q", err)
			}
		})
	}
}

// TestBuildPlanDataPlaces: every data place on this host (/opt, /srv, /mnt,
// unknown top-level directories) is an empty tmpfs, and no system
// directory is; the fsrules walk is told not to enter them.
func TestBuildPlanDataPlaces(t *testing.T) {
	f := newFixture(t)
	pl, err := BuildPlan(f.policy(nil), f.env)
	if err != nil {
		t.Fatal(err)
	}
	dirs := dataDirs()
	for _, d := range dirs {
		if i := findKind(pl.Mounts, ns.KindTmpfs, d); i < 0 {
			t.Errorf("data place %s is not hidden", d)
		}
		if name := strings.TrimPrefix(d, "/"); systemTop[name] {
			t.Errorf("system directory %s counted as a data place", d)
		}
	}
	for _, sys := range []string{"/usr", "/etc", "/bin", "/lib", "/var", "/boot"} {
		if slices.Contains(dirs, sys) {
			t.Errorf("%s is a data place", sys)
		}
	}
	ents, _ := os.ReadDir("/")
	for _, e := range ents {
		if e.IsDir() && !systemTop[e.Name()] && !slices.Contains(dirs, "/"+e.Name()) {
			t.Errorf("unknown top-level directory /%s is not a data place", e.Name())
		}
	}
}

// TestProgramRoots: PATH entries in data places reappear by their
// installation directory, so do the targets of symlinks in system PATH
// directories and the command named by path; nothing else of the place.
func TestProgramRoots(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	opt, srv, sys := filepath.Join(root, "opt"), filepath.Join(root, "srv"), filepath.Join(root, "usr/bin")
	for _, d := range []string{"opt/tool/bin", "opt/app", "opt/google/chrome", "opt/bin", "opt/cmd/sbin", "srv/x/libexec", "usr/bin", "ws", "home/u/bin",
		"opt/agents/node_modules/.bin", "opt/agents/node_modules/@a/cli/bin", "opt/lnk/bin", "opt/node_modules/.bin"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, fl := range []string{"opt/google/chrome/chrome", "opt/cmd/sbin/run", "opt/app/.env",
		"opt/agents/node_modules/@a/cli/bin/cli.js", "opt/tool/bin/t"} {
		if err := os.WriteFile(filepath.Join(root, fl), []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(filepath.Join(opt, "google/chrome/chrome"), filepath.Join(sys, "google-chrome")))
	must(os.Symlink("../../opt/missing/bin/x", filepath.Join(sys, "dangling")))
	must(os.Symlink("ls", filepath.Join(sys, "dir"))) // inside the system: nothing
	must(os.Symlink(filepath.Join(srv, "x/libexec"), filepath.Join(root, "link-to-srv")))
	must(os.Symlink(filepath.Join(opt, "app/.env"), filepath.Join(root, "home/u/bin/app"))) // in a hidden place: not scanned
	// npm's layout (/opt/agents/node_modules/.bin/claude -> ../@anthropic-ai/...):
	// the program needs the whole project its node_modules belongs to.
	must(os.Symlink("../@a/cli/bin/cli.js", filepath.Join(opt, "agents/node_modules/.bin/cli")))
	must(os.Symlink("../@a/cli/bin/cli.js", filepath.Join(opt, "node_modules/.bin/cli")))
	// A PATH directory in a data place linking elsewhere in the place.
	must(os.Symlink("../../tool/bin/t", filepath.Join(opt, "lnk/bin/t")))
	places := []string{opt, srv}
	for _, c := range []struct {
		name, path string
		command    []string
		want       []string
	}{
		{"bin dir", opt + "/tool/bin", nil, []string{opt + "/tool"}},
		{"symlink in a system dir", sys, nil, []string{opt + "/google/chrome"}},
		{"PATH entry via symlink, not bin", root + "/link-to-srv", nil, []string{srv + "/x/libexec"}},
		{"bin right in the place", opt + "/bin", nil, []string{opt + "/bin"}},
		{"the place itself", opt, nil, []string{opt}},
		{"relative and empty entries", ":.:bin", nil, nil},
		{"missing", opt + "/nope/bin", nil, nil},
		{"command by path", "", []string{opt + "/cmd/sbin/run"}, []string{opt + "/cmd"}},
		{"command by name", "", []string{"run"}, nil},
		{"hidden PATH entry", root + "/home/u/bin", nil, nil},
		{"node_modules/.bin on PATH", opt + "/agents/node_modules/.bin", nil, []string{opt + "/agents"}},
		{"node_modules/.bin command by path", "", []string{opt + "/agents/node_modules/.bin/cli"}, []string{opt + "/agents"}},
		{"node_modules right in the place", opt + "/node_modules/.bin", nil, []string{opt + "/node_modules"}},
		{"command by path, a symlink into another place", "", []string{opt + "/lnk/bin/t"}, []string{opt + "/lnk", opt + "/tool"}},
		{"PATH dir in a place linking into another", opt + "/lnk/bin", nil, []string{opt + "/lnk", opt + "/tool"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := programRoots(places, []string{root + "/home"}, nil, c.path, c.command, root+"/ws", nil)
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("got %q, want %q", got, c.want)
			}
			// The same through the directory cache (read, as the
			// directories are new).
			dc, _ := dircache.Open(t.TempDir())
			got = programRoots(places, []string{root + "/home"}, nil, c.path, c.command, root+"/ws", dc)
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("with the directory cache: got %q, want %q", got, c.want)
			}
		})
	}
}

func TestWSLDrive(t *testing.T) {
	for p, want := range map[string]bool{
		"/mnt/c": true, "/mnt/c/Windows/system32": true, "/mnt/d/x": true,
		"/mnt/wsl": false, "/mnt/cdrom": false, "/mnt": false, "/opt/c": false, "/mnt/C/x": false,
	} {
		if got := wslDrive(p); got != want {
			t.Errorf("wslDrive(%q) = %v", p, got)
		}
	}
}

// TestHiddenPaths: a tmpfs that a later bind shows again (a /home
// workspace) is not hidden for the walk.
func TestHiddenPaths(t *testing.T) {
	ms := []ns.Mount{
		{Kind: ns.KindTmpfs, Path: "/home"}, {Kind: ns.KindTmpfs, Path: "/home/u"}, {Kind: ns.KindTmpfs, Path: "/opt"},
		{Kind: ns.KindTmpfs, Path: "/srv"},
		{Kind: ns.KindBind, Path: "/home"}, {Kind: ns.KindROBind, Path: "/opt/tool"}, {Kind: ns.KindMask, Path: "/srv"},
	}
	if got := strings.Join(hiddenPaths(ms), " "); got != "/opt /srv" {
		t.Errorf("got %q", got)
	}
}
