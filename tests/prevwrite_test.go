//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A symlink in a tree that only an earlier run could write (an earlier
// --write path, another project's workspace) is the agent's, not the
// user's: a later run's --write, --read or --workspace through it is
// refused, naming the link and its target, as for this run's own writable
// trees (prevwrite). Run 1 with --write DATA points DATA/l at a victim;
// run 2, in another project and without DATA writable, with --write DATA/l
// would make the victim writable. Seen failing on main's binary (a34609b),
// as root and as jailtest: run 2 wrote into the victim directory.
func TestLinkInEarlierWriteTree(t *testing.T) {
	state := workspace(t) // one state directory for both runs, this test's own
	env := []string{"XDG_STATE_HOME=" + state}
	data := workspace(t)
	victim := workspace(t)
	if err := os.WriteFile(filepath.Join(victim, "secret"), []byte("s3cr3t\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	proj1 := workspace(t)
	o1 := runOpts{dir: proj1, env: env}
	mustCode(t, sh(t, o1, `ln -s `+victim+` `+data+`/l && ln -s `+victim+` `+proj1+`/l`, "--write", data), 0)
	for _, l := range []string{filepath.Join(data, "l"), filepath.Join(proj1, "l")} {
		if got, err := os.Readlink(l); err != nil || got != victim {
			t.Fatalf("the sandbox could not make the link: the test checks nothing (%q %v)", got, err)
		}
	}
	o2 := runOpts{dir: workspace(t), env: env}
	for _, c := range []struct {
		name, link string
		flags      []string
	}{
		{"--write through an earlier write path", filepath.Join(data, "l"), []string{"--write", filepath.Join(data, "l")}},
		{"--read through an earlier write path", filepath.Join(data, "l"), []string{"--read", filepath.Join(data, "l")}},
		{"--workspace through an earlier write path", filepath.Join(data, "l"), []string{"--workspace", filepath.Join(data, "l")}},
		{"--write through another project's workspace", filepath.Join(proj1, "l"), []string{"--write", filepath.Join(proj1, "l")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(filepath.Join(victim, "planted"))
			r := sh(t, o2, `cat `+victim+`/secret; echo x > `+victim+`/planted`, c.flags...)
			if _, err := os.Stat(filepath.Join(victim, "planted")); err == nil {
				t.Fatalf("a link an earlier run planted chose what this run grants: %s", r.stderr)
			}
			if strings.Contains(r.stdout, "s3cr3t") {
				t.Fatalf("the victim was readable: %s", r.stderr)
			}
			mustCode(t, r, 125)
			for _, w := range []string{c.link, victim, "earlier run"} {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("refusal lacks %q: %s", w, r.stderr)
				}
			}
			if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("not one line: %q", r.stderr)
			}
		})
	}
	// Given itself, the target is the user's choice.
	r := sh(t, o2, `echo x > `+data+`/l/planted && echo ok`, "--write", filepath.Join(data, "l"), "--write", victim)
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "ok" {
		t.Fatalf("target given: %q %s", r.stdout, r.stderr)
	}
	// A link the user made in a tree no run could write works as before.
	mine := workspace(t)
	if err := os.Symlink(victim, filepath.Join(mine, "l")); err != nil {
		t.Fatal(err)
	}
	r = sh(t, o2, `echo x > `+mine+`/l/planted2 && echo ok`, "--write", filepath.Join(mine, "l"))
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "ok" {
		t.Fatalf("the user's own link: %q %s", r.stdout, r.stderr)
	}
}

// The record of earlier runs' trees is in jail's state directory, which no
// sandbox sees: a run whose workspace holds the state directory can
// neither read nor change it. A record that is not what jail writes (here
// a tree struck out by hand into a line of garbage) refuses every run, in
// one line naming the file and the fix, rather than forget a tree.
func TestWrittenTreesRecord(t *testing.T) {
	ws := workspace(t)
	state := filepath.Join(ws, "state")
	env := []string{"XDG_STATE_HOME=" + state}
	o := runOpts{dir: ws, env: env}
	mustCode(t, sh(t, o, `true`), 0)
	file := filepath.Join(state, "jail", "written-trees")
	before, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(before), ws) {
		t.Fatalf("the run's workspace is not recorded: %q %v", before, err)
	}
	r := sh(t, o, `cat state/jail/written-trees; echo junk > state/jail/written-trees; ls state/jail`)
	if strings.Contains(r.stdout, ws) {
		t.Errorf("the sandbox read the record: %s", r.stdout)
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Errorf("the sandbox changed the record: %q", after)
	}
	if err := os.WriteFile(file, []byte("jail written trees v1\n1 2 \"relative\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = sh(t, o, `echo ran`)
	mustCode(t, r, 125)
	if strings.Contains(r.stdout, "ran") || !strings.Contains(r.stderr, file) || !strings.Contains(r.stderr, "remove it") ||
		strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("corrupt record: %q %q", r.stdout, r.stderr)
	}
}

// The host's own directories that --host-caches binds writable (a cache
// path, ~/go/pkg/mod from a profile) are trees an earlier run could write
// as much as its --write paths: run 1 with --cache DIR --host-caches
// points DIR/l at a victim; run 2 in another project, without the cache,
// with --write DIR/l would make the victim writable (so would `cd DIR/l;
// jail`, DIR/l a module directory the user looks into). Seen failing on
// main's binary (30093d6), as root and as jailtest: run 2 wrote into the
// victim (only the workspace and --write paths were recorded; review15b).
func TestLinkInEarlierHostCache(t *testing.T) {
	state := workspace(t)
	env := []string{"XDG_STATE_HOME=" + state}
	cache := filepath.Join(workspace(t), "cache")
	victim := workspace(t)
	o1 := runOpts{dir: workspace(t), env: env}
	mustCode(t, sh(t, o1, `ln -s `+victim+` `+cache+`/l`, "--cache", cache, "--host-caches"), 0)
	link := filepath.Join(cache, "l")
	if got, err := os.Readlink(link); err != nil || got != victim {
		t.Fatalf("the sandbox could not make the link: the test checks nothing (%q %v)", got, err)
	}
	o2 := runOpts{dir: workspace(t), env: env}
	for _, c := range []struct {
		name string
		o    runOpts
		args []string
	}{
		{"--write", o2, []string{"--write", link}},
		{"current directory", runOpts{dir: link, env: append([]string{"PWD=" + link}, env...)}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(filepath.Join(victim, "planted"))
			r := sh(t, c.o, `echo x > `+victim+`/planted`, c.args...)
			if _, err := os.Stat(filepath.Join(victim, "planted")); err == nil {
				t.Fatalf("a link an earlier run planted in a host cache chose what this run grants: %s", r.stderr)
			}
			mustCode(t, r, 125)
			for _, w := range []string{link, cache, "earlier run"} {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("refusal lacks %q: %s", w, r.stderr)
				}
			}
		})
	}
}
