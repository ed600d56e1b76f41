package sentinel

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

type harness struct {
	root, qdir string
	mu         sync.Mutex
	events     []Event
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{root: filepath.Join(base, "ws"), qdir: filepath.Join(base, "state", "q", "run1")}
	os.MkdirAll(h.root, 0o755)
	return h
}

func (h *harness) notify(e Event) {
	h.mu.Lock()
	h.events = append(h.events, e)
	h.mu.Unlock()
}

func (h *harness) paths() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, e := range h.events {
		out = append(out, e.Path)
	}
	return out
}

func (h *harness) start(t *testing.T, cfg Config) *Sentinel {
	t.Helper()
	cfg.Dir, cfg.Notify = h.qdir, h.notify
	if cfg.Roots == nil {
		cfg.Roots = []string{h.root}
	}
	s := New(cfg)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// gone waits until p no longer exists; it returns how long that took.
func gone(t *testing.T, p string) time.Duration {
	t.Helper()
	t0 := time.Now()
	for time.Since(t0) < 3*time.Second {
		if _, err := os.Lstat(p); err != nil {
			return time.Since(t0)
		}
		time.Sleep(200 * time.Microsecond)
	}
	t.Fatalf("%s still there after 3s", p)
	return 0
}

func mkfile(t *testing.T, p, content string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

func manifest(t *testing.T, dir string) []Event {
	f, err := os.Open(filepath.Join(dir, "manifest.jsonl"))
	if err != nil {
		t.Fatalf("manifest: %v", err)
	}
	defer f.Close()
	var out []Event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// An absent path that appears (directly, below a directory made later, or
// by rename) is moved into the quarantine, content kept, with a manifest
// line and an event.
func TestAbsentAppears(t *testing.T) {
	h := newHarness(t)
	target := filepath.Join(h.root, ".git/commondir")
	deep := filepath.Join(h.root, ".husky/_")
	renamed := filepath.Join(h.root, "lefthook-local.yml")
	os.MkdirAll(filepath.Join(h.root, ".git"), 0o755)
	s := h.start(t, Config{Absent: []Absent{
		{Path: target, Rule: "git: commondir"},
		{Path: deep, Dir: true, Rule: "git: hooksPath"},
		{Path: renamed, Rule: "lefthook"},
	}})
	mkfile(t, target, "../evil\n")
	gone(t, target)
	// Made elsewhere, moved into place (a mkdir would be moved away
	// before the file could be written in it).
	mkfile(t, filepath.Join(h.root, "staging/_/pre-commit"), "#!/bin/sh\necho PWNED\n")
	os.Mkdir(filepath.Join(h.root, ".husky"), 0o755)
	time.Sleep(10 * time.Millisecond) // the sentinel now watches .husky
	os.Rename(filepath.Join(h.root, "staging/_"), deep)
	gone(t, deep)
	mkfile(t, filepath.Join(h.root, "x.yml"), "evil: 1\n")
	os.Rename(filepath.Join(h.root, "x.yml"), renamed)
	gone(t, renamed)
	// The event follows the rename that made the entry disappear.
	for t0 := time.Now(); len(h.paths()) < 3 && time.Since(t0) < time.Second; {
		time.Sleep(time.Millisecond)
	}
	if got := h.paths(); len(got) != 3 {
		t.Errorf("events during the run %v", got)
	}
	s.Finish()

	m := manifest(t, h.qdir)
	if len(m) != 3 {
		t.Fatalf("manifest: %+v", m)
	}
	for _, e := range m {
		if e.Stored == "" || e.Error != "" || e.Phase != "run" {
			t.Errorf("event %+v", e)
		}
	}
	b, _ := os.ReadFile(m[0].Stored)
	if string(b) != "../evil\n" {
		t.Errorf("stored content %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(m[1].Stored, "pre-commit")); !strings.Contains(string(b), "PWNED") {
		t.Errorf("stored tree lacks the hook: %q", b)
	}
	if fi, err := os.Stat(filepath.Join(m[1].Stored, "pre-commit")); err != nil || fi.Mode()&0o111 != 0 {
		t.Errorf("a quarantined hook stays executable: %v", fi)
	}
	if fi, _ := os.Stat(h.qdir); fi.Mode().Perm() != 0o700 {
		t.Errorf("quarantine dir mode %v", fi.Mode())
	}
	// Nothing of ours is left in the tree.
	ents, _ := os.ReadDir(h.root)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".jail-") {
			t.Errorf("left in the tree: %s", e.Name())
		}
	}
}

// A symlink where a directory on the way to a protected path would be is
// moved out (it would make the protected path reachable elsewhere); the
// supervisor never follows it.
func TestSymlinkOnTheWay(t *testing.T) {
	h := newHarness(t)
	outside := filepath.Join(filepath.Dir(h.root), "outside")
	mkfile(t, filepath.Join(outside, "_", "pre-commit"), "host file\n")
	p := filepath.Join(h.root, ".husky/_")
	h.start(t, Config{Absent: []Absent{{Path: p, Dir: true, Rule: "hooksPath"}}})
	os.Symlink(outside, filepath.Join(h.root, ".husky"))
	gone(t, filepath.Join(h.root, ".husky"))
	if b, _ := os.ReadFile(filepath.Join(outside, "_", "pre-commit")); string(b) != "host file\n" {
		t.Errorf("followed the symlink: outside file is %q", b)
	}
}

// The quarantine refuses a path whose parent is (now) a symlink leading out
// of the root: nothing outside is moved.
func TestQuarantineDoesNotFollow(t *testing.T) {
	h := newHarness(t)
	outside := filepath.Join(filepath.Dir(h.root), "outside")
	mkfile(t, filepath.Join(outside, "commondir"), "host\n")
	os.Symlink(outside, filepath.Join(h.root, "link"))
	s := New(Config{Dir: h.qdir, Roots: []string{h.root}, Notify: h.notify})
	defer s.Close()
	s.Quarantine([]Item{{Path: filepath.Join(h.root, "link/commondir"), Rule: "t"}}, "exit")
	s.Finish()
	if _, err := os.Stat(filepath.Join(outside, "commondir")); err != nil {
		t.Fatalf("a file outside the root was moved: %v", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.events) != 1 || h.events[0].Error == "" {
		t.Errorf("no error reported: %+v", h.events)
	}
}

// An observed directory: the judge names what must go; a replacement takes
// the place of a config, a harmless one is put back; new directories it
// returns are watched and judged at once.
func TestObserveAndReplace(t *testing.T) {
	h := newHarness(t)
	var mu sync.Mutex
	calls := map[string]int{}
	inspect := func(dir string, names []string) ([]Item, []string) {
		mu.Lock()
		calls[dir]++
		mu.Unlock()
		var items []Item
		var obs []string
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			switch {
			case e.Name() == "config":
				items = append(items, Item{Path: p, Rule: "config", Replace: func(b []byte) ([]byte, bool) {
					if !strings.Contains(string(b), "evil") {
						return b, false
					}
					return []byte("[core]\n\tbare = false\n"), true
				}})
			case e.Name() == "bad":
				items = append(items, Item{Path: p, Rule: "bad"})
			case e.IsDir() && e.Name() == "sub":
				obs = append(obs, p)
			}
		}
		return items, obs
	}
	s := h.start(t, Config{Observe: []string{h.root}, Inspect: inspect})
	cfg := filepath.Join(h.root, "config")
	mkfile(t, cfg, "[user]\n\tname = a\n")
	time.Sleep(100 * time.Millisecond)
	if b, _ := os.ReadFile(cfg); string(b) != "[user]\n\tname = a\n" {
		t.Errorf("a harmless config was touched: %q; events %+v", b, h.events)
	}
	mkfile(t, cfg+".lock", "[core]\n\tfsmonitor = evil\n")
	os.Rename(cfg+".lock", cfg) // as git config does
	deadline := time.Now().Add(3 * time.Second)
	for {
		b, _ := os.ReadFile(cfg)
		if string(b) == "[core]\n\tbare = false\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("config not replaced: %q", b)
		}
		time.Sleep(time.Millisecond)
	}
	// In a directory created later and handed to the sentinel by the judge.
	os.MkdirAll(filepath.Join(h.root, "sub"), 0o755)
	mkfile(t, filepath.Join(h.root, "sub/bad"), "x")
	gone(t, filepath.Join(h.root, "sub/bad"))
	s.Finish()
	var replaced bool
	for _, e := range manifest(t, h.qdir) {
		if e.Path == cfg && e.Replaced {
			replaced = true
			if b, _ := os.ReadFile(e.Stored); !strings.Contains(string(b), "evil") {
				t.Errorf("the original config is not in the quarantine: %q", b)
			}
		}
	}
	if !replaced {
		t.Errorf("no replaced config in the manifest")
	}
}

// Past the budget, an entry is renamed in place (no longer effective) and
// reported, never silently kept or lost.
func TestBudget(t *testing.T) {
	h := newHarness(t)
	p := filepath.Join(h.root, "big")
	mkfile(t, p, strings.Repeat("x", 4096))
	s := New(Config{Dir: h.qdir, Roots: []string{h.root}, Notify: h.notify, Budget: 1024})
	defer s.Close()
	s.Quarantine([]Item{{Path: p, Rule: "t"}}, "exit")
	s.Finish()
	h.mu.Lock()
	defer h.mu.Unlock()
	last := h.events[len(h.events)-1]
	if len(h.events) != 2 || last.Left == "" || last.Stored != "" || last.Error == "" {
		t.Fatalf("%+v", h.events)
	}
	if b, err := os.ReadFile(last.Left); err != nil || len(b) != 4096 {
		t.Errorf("the entry is not where the event says: %v", err)
	}
	if _, err := os.Lstat(p); err == nil {
		t.Errorf("still at its name")
	}
}

// A watched directory moved away and back (with the planted file in it),
// and a flood of events: the sentinel re-arms and still catches it.
func TestRearm(t *testing.T) {
	h := newHarness(t)
	g := filepath.Join(h.root, ".git")
	os.MkdirAll(g, 0o755)
	target := filepath.Join(g, "commondir")
	h.start(t, Config{Absent: []Absent{{Path: target, Rule: "commondir"}}})
	os.Rename(g, filepath.Join(h.root, "g2"))
	mkfile(t, filepath.Join(h.root, "g2/commondir"), "x")
	os.Rename(filepath.Join(h.root, "g2"), g)
	gone(t, target)

	os.MkdirAll(filepath.Join(h.root, "flood"), 0o755)
	for i := 0; i < 3000; i++ {
		os.WriteFile(filepath.Join(g, fmt.Sprint("f", i)), nil, 0o644)
	}
	mkfile(t, target, "y")
	gone(t, target)
}

// Check (the exit check) finds what appeared while nothing watched.
func TestCheck(t *testing.T) {
	h := newHarness(t)
	p := filepath.Join(h.root, "a/b/c")
	s := New(Config{Dir: h.qdir, Roots: []string{h.root}, Absent: []Absent{{Path: p, Rule: "t"}}, Notify: h.notify})
	defer s.Close()
	mkfile(t, p, "x")
	s.Check("exit")
	s.Finish()
	if _, err := os.Lstat(p); err == nil {
		t.Fatal("not moved")
	}
	if m := manifest(t, h.qdir); len(m) != 1 || m[0].Phase != "exit" {
		t.Errorf("%+v", m)
	}
}

// Latency from an appearance to its removal, measured over many trials:
// the window during which a host process can still see a planted file.
func TestLatency(t *testing.T) {
	h := newHarness(t)
	var targets []Absent
	for i := 0; i < 100; i++ {
		targets = append(targets, Absent{Path: filepath.Join(h.root, fmt.Sprint("t", i)), Rule: "t"})
	}
	h.start(t, Config{Absent: targets})
	var ds []time.Duration
	for _, a := range targets {
		mkfile(t, a.Path, "x")
		ds = append(ds, gone(t, a.Path))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	t.Logf("appearance to removal (test polls every 200µs): p50 %v, p90 %v, max %v", ds[len(ds)/2], ds[len(ds)*9/10], ds[len(ds)-1])
}

// A supervisor that died after renaming an entry aside: Resume (the next
// start) copies it into that run's quarantine and removes it from the tree.
func TestResume(t *testing.T) {
	h := newHarness(t)
	p := filepath.Join(h.root, "planted")
	mkfile(t, p, "payload")
	s := New(Config{Dir: h.qdir, Roots: []string{h.root}})
	s.Quarantine([]Item{{Path: p, Rule: "t"}}, "run")
	// No Finish: the supervisor "dies" here.
	ents, _ := os.ReadDir(h.root)
	if len(ents) != 1 || !strings.HasPrefix(ents[0].Name(), ".jail-quarantine-") {
		t.Fatalf("tree: %v", ents)
	}
	Resume(Config{Dir: h.qdir, Roots: []string{h.root}, Notify: h.notify})
	if ents, _ := os.ReadDir(h.root); len(ents) != 0 {
		t.Errorf("left in the tree: %v", ents)
	}
	if got := h.paths(); len(got) != 1 || got[0] != p {
		t.Errorf("resumed moves reported as %v, want %s", got, p)
	}
	m := manifest(t, h.qdir)
	if len(m) != 1 || m[0].Phase != "leftover" {
		t.Fatalf("%+v", m)
	}
	if b, _ := os.ReadFile(m[0].Stored); string(b) != "payload" {
		t.Errorf("stored %q", b)
	}
}

// Content written after the entry appeared is kept: the copy is made at
// the end, from the entry renamed aside.
func TestWrittenAfterAppearing(t *testing.T) {
	h := newHarness(t)
	p := filepath.Join(h.root, "planted")
	s := h.start(t, Config{Absent: []Absent{{Path: p, Rule: "t"}}})
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	gone(t, p)
	f.WriteString("written later")
	f.Close()
	s.Finish()
	m := manifest(t, h.qdir)
	if b, _ := os.ReadFile(m[0].Stored); string(b) != "written later" {
		t.Errorf("stored %q", b)
	}
}

// After a killed run, Config.Before keeps what changed later (perhaps the
// user's own) where it is, reported; older entries move.
func TestBefore(t *testing.T) {
	h := newHarness(t)
	old, fresh := filepath.Join(h.root, "old"), filepath.Join(h.root, "fresh")
	mkfile(t, old, "x")
	cut := time.Now()
	time.Sleep(20 * time.Millisecond)
	mkfile(t, fresh, "y")
	s := New(Config{Dir: h.qdir, Roots: []string{h.root}, Notify: h.notify, Before: cut,
		Absent: []Absent{{Path: old, Rule: "t"}, {Path: fresh, Rule: "t"}}})
	s.Check("leftover")
	s.Close()
	if _, err := os.Lstat(old); err == nil {
		t.Errorf("an entry older than the cut stayed")
	}
	if b, err := os.ReadFile(fresh); err != nil || string(b) != "y" {
		t.Errorf("an entry changed after the cut was moved: %v", err)
	}
	var reported bool
	for _, e := range manifest(t, h.qdir) {
		reported = reported || (e.Path == fresh && e.ReportOnly)
	}
	if !reported {
		t.Errorf("the newer entry is not reported: %+v", manifest(t, h.qdir))
	}
}

// A root supervisor replacing a config keeps the original's owner: the
// user's repository must not get a root-owned file it cannot change.
func TestReplaceKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a file of another owner")
	}
	h := newHarness(t)
	p := filepath.Join(h.root, "config")
	mkfile(t, p, "evil")
	if err := os.Chown(p, 4321, 4322); err != nil {
		t.Fatal(err)
	}
	s := New(Config{Dir: h.qdir, Roots: []string{h.root}})
	s.Quarantine([]Item{{Path: p, Rule: "t", Replace: func([]byte) ([]byte, bool) { return []byte("good"), true }}}, "exit")
	s.Close()
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "good" || st.Uid != 4321 || st.Gid != 4322 {
		t.Errorf("replacement %q owned by %d:%d, want 4321:4322", b, st.Uid, st.Gid)
	}
}

// A second Sentinel on the same quarantine directory (the next start
// finishing a killed run) stores beside what is there, never over it.
func TestSecondSentinelSameDir(t *testing.T) {
	h := newHarness(t)
	for i, content := range []string{"first", "second"} {
		p := filepath.Join(h.root, "planted-"+content)
		mkfile(t, p, content)
		s := New(Config{Dir: h.qdir, Roots: []string{h.root}, Notify: h.notify})
		s.Quarantine([]Item{{Path: p, Rule: "t"}}, "exit")
		s.Close()
		if m := manifest(t, h.qdir); len(m) != i+1 || m[i].Stored == "" || m[i].Error != "" {
			t.Fatalf("round %d: %+v", i, m)
		}
	}
	m := manifest(t, h.qdir)
	for i, want := range []string{"first", "second"} {
		if b, _ := os.ReadFile(m[i].Stored); string(b) != want {
			t.Errorf("%s holds %q, want %q", m[i].Stored, b, want)
		}
		if w := fmt.Sprintf("%03d-planted-%s", i+1, want); filepath.Base(m[i].Stored) != w {
			t.Errorf("stored as %s, want %s (numbering goes on)", m[i].Stored, w)
		}
	}
}

// CheckAbsent moves the absent paths that exist and asks the judge nothing
// (the caller sweeps the trees itself).
func TestCheckAbsent(t *testing.T) {
	h := newHarness(t)
	p := filepath.Join(h.root, "a")
	mkfile(t, p, "x")
	asked := false
	s := New(Config{Dir: h.qdir, Roots: []string{h.root}, Absent: []Absent{{Path: p, Rule: "t"}},
		Observe: []string{h.root}, Inspect: func(string, []string) ([]Item, []string) { asked = true; return nil, nil }})
	s.CheckAbsent("exit")
	s.Close()
	if _, err := os.Lstat(p); err == nil || asked {
		t.Errorf("moved: %v; judge asked: %v", err != nil, asked)
	}
}

// Stop right after Start (a run interrupted during its setup) ends the
// watcher: the loop must not run on without its file. It once read a nil
// file in a busy loop forever, and Stop waited for it.
func TestStopRightAfterStart(t *testing.T) {
	h := newHarness(t)
	for i := 0; i < 200; i++ {
		s := New(Config{Dir: h.qdir, Roots: []string{h.root}})
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		stopped := make(chan struct{})
		go func() { s.Stop(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: Stop right after Start did not return", i)
		}
		s.Close()
	}
}
