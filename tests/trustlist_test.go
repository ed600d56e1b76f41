//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// jail trust --list says what a run would make of each trusted file, and
// what to do about the ones not as trusted; --prune forgets only records
// whose directory is gone. Seen failing on main's binary (62db6d0): a
// record whose file became a symlink to the trusted bytes listed "ok"
// (runs refuse it), one that became a FIFO hung --list, and --prune was
// an unknown flag.
func TestTrustList(t *testing.T) {
	h := newHome(t)
	root := workspace(t)
	o := runOpts{env: h.env, dir: root}
	r := run(t, o, "trust", "--list")
	if mustCode(t, r, 0); r.stdout != "" || !strings.Contains(r.stderr, "no project file is trusted") {
		t.Fatalf("empty --list: %q %q", r.stdout, r.stderr)
	}
	files := map[string]string{}
	for _, name := range []string{"ok", "changed", "gone", "dirgone", "link", "fifo"} {
		p := filepath.Join(root, name, ".jail.toml")
		writeFile(t, p, "memory = \"1G\"\n")
		mustCode(t, run(t, o, "trust", "--yes", p), 0)
		files[name] = p
	}
	writeFile(t, files["changed"], "memory = \"2G\"\n")
	os.Remove(files["gone"])
	os.RemoveAll(filepath.Dir(files["dirgone"]))
	os.Remove(files["link"])
	if err := os.Symlink(files["ok"], files["link"]); err != nil {
		t.Fatal(err)
	}
	os.Remove(files["fifo"])
	if err := syscall.Mkfifo(files["fifo"], 0o644); err != nil {
		t.Fatal(err)
	}
	o.timeout = 10e9
	r = run(t, o, "trust", "--list")
	mustCode(t, r, 0)
	want := map[string]string{"ok": "ok", "changed": "changed", "gone": "gone", "dirgone": "dir-gone", "link": "not-file", "fifo": "not-file"}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != len(want) {
		t.Fatalf("--list: %q", r.stdout)
	}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 4 {
			t.Fatalf("--list line %q", l)
		}
		name := filepath.Base(filepath.Dir(f[3]))
		if f[0] != want[name] {
			t.Errorf("%s: %s, want %s", f[3], f[0], want[name])
		}
	}
	for _, w := range []string{"4 not as trusted", "jail trust --revoke FILE", "1 whose directory is gone: jail trust --prune"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("--list's lines lack %q: %q", w, r.stderr)
		}
	}
	r = run(t, o, "trust", "--prune")
	if mustCode(t, r, 0); strings.TrimSpace(r.stdout) != "forgot "+files["dirgone"]+" (its directory is gone)" {
		t.Fatalf("--prune: %q %q", r.stdout, r.stderr)
	}
	// The gone file's record stays: a run there is still refused.
	oneLine(t, sh(t, runOpts{env: h.env, dir: filepath.Dir(files["gone"])}, "true"), files["gone"]+" was trusted but is gone")
	r = run(t, o, "trust", "--prune")
	if mustCode(t, r, 0); r.stdout != "" || !strings.Contains(r.stderr, "no record's directory is gone") {
		t.Fatalf("--prune again: %q %q", r.stdout, r.stderr)
	}
}

// Several jail trust at once (processes, as from two terminals or a
// script) each keep their record: they change the store under a lock.
// Seen failing on main's binary (62db6d0): 8 at once kept 2 to 5.
func TestTrustConcurrentProcesses(t *testing.T) {
	h := newHome(t)
	root := workspace(t)
	o := runOpts{env: h.env, dir: root}
	const n = 8
	var paths []string
	for i := range n {
		p := filepath.Join(root, strconv.Itoa(i), ".jail.toml")
		writeFile(t, p, "memory = \"1G\"\n")
		paths = append(paths, p)
	}
	var wg sync.WaitGroup
	for _, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := run(t, o, "trust", "--yes", p); r.code != 0 {
				t.Errorf("trust %s: %d %s", p, r.code, r.stderr)
			}
		}()
	}
	wg.Wait()
	r := run(t, o, "trust", "--list")
	mustCode(t, r, 0)
	if got := strings.Count("\n"+r.stdout, "\nok "); got != n {
		t.Fatalf("%d of %d records kept:\n%s", got, n, r.stdout)
	}
}
