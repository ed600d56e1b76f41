package agentcfg

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

type guardEnv struct {
	root, state string
	settings    File
	mu          sync.Mutex
	events      []Event
}

func newGuardEnv(t *testing.T) *guardEnv {
	t.Helper()
	e := &guardEnv{root: t.TempDir(), state: t.TempDir()}
	e.settings = fileFor(t, "claude", Home, ".claude/settings.json")
	return e
}

func (e *guardEnv) opts(id string) Options {
	return Options{Dir: e.state, ID: id, Context: Context{Workspace: "/w"}, Report: func(ev Event) {
		e.mu.Lock()
		e.events = append(e.events, ev)
		e.mu.Unlock()
	}}
}

func (e *guardEnv) evs() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Event(nil), e.events...)
}

func (e *guardEnv) target(rel string) Target {
	return Target{File: e.settings, Path: filepath.Join(e.root, rel), Root: e.root}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

const hostSettings = `{"model": "a", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}}`

// What is at the path is not a file the guard can merge: each shape is put
// back to the snapshot, and what the agent left is saved or moved aside.
func TestGuardShapes(t *testing.T) {
	tests := []struct {
		name  string
		agent func(t *testing.T, p string)
		want  string
	}{
		{"symlink to an agent file", func(t *testing.T, p string) {
			evil := filepath.Join(filepath.Dir(p), "evil.json")
			write(t, evil, `{"hooks": {"Stop": "evil"}}`)
			os.Remove(p)
			if err := os.Symlink(evil, p); err != nil {
				t.Fatal(err)
			}
		}, hostSettings},
		{"FIFO", func(t *testing.T, p string) {
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		}, hostSettings},
		{"directory", func(t *testing.T, p string) {
			os.Remove(p)
			os.Mkdir(p, 0o755)
		}, hostSettings},
		{"deleted", func(t *testing.T, p string) { os.Remove(p) }, hostSettings},
		{"garbage", func(t *testing.T, p string) { write(t, p, "{{{") }, hostSettings},
		{"ordinary change", func(t *testing.T, p string) {
			write(t, p, `{"model": "b", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}}`)
		},
			`{"model": "b", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newGuardEnv(t)
			tg := e.target(".claude/settings.json")
			write(t, tg.Path, hostSettings)
			g, skipped, err := New([]Target{tg}, e.opts("t1"))
			if err != nil || len(skipped) > 0 {
				t.Fatalf("New: %v %v", err, skipped)
			}
			tt.agent(t, tg.Path)
			g.Close()
			fi, err := os.Lstat(tg.Path)
			if err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("after the check %s is %v (%v)", tg.Path, fi, err)
			}
			if got := read(t, tg.Path); got != tt.want {
				t.Fatalf("after the check:\n%s\nwant:\n%s\nevents: %+v", got, tt.want, e.evs())
			}
			if _, err := os.Stat(filepath.Join(e.state, "t1.json")); !os.IsNotExist(err) {
				t.Errorf("the record is left after Close: %v", err)
			}
		})
	}
}

// A directory on the way swapped for a symlink: the symlink goes.
func TestGuardSymlinkedParent(t *testing.T) {
	e := newGuardEnv(t)
	tg := e.target("proj/.claude/settings.json")
	write(t, tg.Path, hostSettings)
	g, _, err := New([]Target{tg}, e.opts("t2"))
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	write(t, filepath.Join(elsewhere, "settings.json"), `{"hooks": {"Stop": "evil"}}`)
	os.Rename(filepath.Join(e.root, "proj/.claude"), filepath.Join(e.root, "proj/old"))
	if err := os.Symlink(elsewhere, filepath.Join(e.root, "proj/.claude")); err != nil {
		t.Fatal(err)
	}
	g.Close()
	if fi, err := os.Lstat(filepath.Join(e.root, "proj/.claude")); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		t.Fatalf("the symlinked directory is still there")
	}
	if got := read(t, filepath.Join(elsewhere, "settings.json")); !strings.Contains(got, "evil") {
		t.Fatalf("the guard wrote through the agent's symlink: %s", got)
	}
	if got := read(t, tg.Path); got != hostSettings {
		t.Fatalf("after the check %s holds %q", tg.Path, got)
	}
}

// A file bind-mounted in the sandbox is rewritten in place: same inode.
func TestGuardInPlace(t *testing.T) {
	e := newGuardEnv(t)
	p := filepath.Join(e.root, "claude.json")
	write(t, p, `{"a": 1, "mcpServers": {}}`)
	tg := Target{File: fileFor(t, "claude", Home, ".claude.json"), Path: p, Root: p, InPlace: true}
	g, _, err := New([]Target{tg}, e.opts("t3"))
	if err != nil {
		t.Fatal(err)
	}
	var before syscall.Stat_t
	syscall.Stat(p, &before)
	write(t, p, `{"a": 2, "mcpServers": {"x": {"command": "evil"}}}`)
	g.Close()
	var after syscall.Stat_t
	syscall.Stat(p, &after)
	if before.Ino != after.Ino {
		t.Fatalf("the file was replaced (inode %d -> %d): the sandbox's bind mount would keep the old one", before.Ino, after.Ino)
	}
	if got := read(t, p); got != `{"a": 2, "mcpServers": {}}` {
		t.Fatalf("after the check: %s", got)
	}
}

// While watching, a write is put back within a moment; a writer that is
// half-way through (unreadable, file still open) is left alone until it
// closes.
func TestGuardWatch(t *testing.T) {
	e := newGuardEnv(t)
	tg := e.target(".claude/settings.json")
	write(t, tg.Path, hostSettings)
	created := e.target("new/.claude/settings.local.json")
	created.File = fileFor(t, "claude", Project, ".claude/settings.local.json")
	g, _, err := New([]Target{tg, created}, e.opts("t4"))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Watch(); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	waitFor := func(p, want string) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Second)
		for read(t, p) != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %q, want %q (events %+v)", p, read(t, p), want, e.evs())
			}
			time.Sleep(time.Millisecond)
		}
	}
	write(t, tg.Path, `{"model": "b", "hooks": {}}`)
	waitFor(tg.Path, `{"model": "b", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}}`)

	// Half a document, file held open past Late: not touched.
	f, err := os.OpenFile(tg.Path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"model": "c", "hooks"`)
	time.Sleep(Late + 100*time.Millisecond)
	if got := read(t, tg.Path); got != `{"model": "c", "hooks"` {
		t.Fatalf("a write in progress was touched: %q", got)
	}
	f.WriteString(`: {}}`)
	f.Close()
	waitFor(tg.Path, `{"model": "c", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}}`)

	// A file created under directories that did not exist at start.
	write(t, created.Path, `{"outputStyle": "x", "env": {"NODE_OPTIONS": "--require evil"}}`)
	waitFor(created.Path, `{"outputStyle": "x"}`)
}

// A record left by a dead supervisor is finished at the next start; a file
// changed long after that supervisor was last alive is the user's.
func TestRecover(t *testing.T) {
	for _, late := range []bool{false, true} {
		e := newGuardEnv(t)
		tg := e.target(".claude/settings.json")
		write(t, tg.Path, hostSettings)
		g, _, err := New([]Target{tg}, e.opts("dead"))
		if err != nil {
			t.Fatal(err)
		}
		// Make the record look like another, dead supervisor's.
		rp := filepath.Join(e.state, "dead.json")
		var rec record
		b, _ := os.ReadFile(rp)
		json.Unmarshal(b, &rec)
		rec.Pid, rec.StartTick = 1, 1
		b, _ = json.Marshal(rec)
		os.WriteFile(rp, b, 0o600)
		g.record = "" // not removed by this process
		write(t, tg.Path, `{"model": "b", "hooks": {"SessionStart": "evil"}}`)
		if late {
			old := time.Now().Add(-time.Hour)
			os.Chtimes(rp, old, old)
		}
		Recover(e.opts("next"))
		got := read(t, tg.Path)
		if late {
			if !strings.Contains(got, "evil") {
				t.Errorf("a change made long after the run ended was reverted: %s", got)
			}
			if ev := e.evs(); len(ev) != 1 || ev[0].Action != "left" {
				t.Errorf("events %+v, want one left", ev)
			}
		} else if got != `{"model": "b", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}}` {
			t.Errorf("the next start did not put the hook back: %s", got)
		}
		if _, err := os.Stat(rp); !os.IsNotExist(err) {
			t.Errorf("record left after recovery")
		}
	}
}

// New refuses targets it cannot guard, says why, and leaves no record.
func TestGuardSkips(t *testing.T) {
	e := newGuardEnv(t)
	real := t.TempDir()
	write(t, filepath.Join(real, "settings.json"), `{}`)
	os.Symlink(real, filepath.Join(e.root, ".claude"))
	g, skipped, err := New([]Target{e.target(".claude/settings.json")}, e.opts("t5"))
	if !errors.Is(err, ErrUnguarded) || g != nil {
		t.Fatalf("New: %v, want ErrUnguarded", err)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0], "symlink") {
		t.Fatalf("skipped %q", skipped)
	}
	if ents, _ := os.ReadDir(e.state); len(ents) != 0 {
		t.Errorf("a refused guard left %v", ents)
	}
}

// The plan (Unguardable) and New look at a path at two times: what a
// concurrent run's agent swaps in between (a FIFO, a directory, a symlink
// on the way) fails New. Left out with a line said, the path was the
// agent's to write, and its hooks there outlived the run (session 18).
// Seen failing on main: New returned no error and guarded nothing.
func TestGuardRefusesSwappedSincePlan(t *testing.T) {
	for _, c := range []struct {
		name string
		swap func(e *guardEnv, p string) error
	}{
		{"fifo", func(e *guardEnv, p string) error { os.Remove(p); return syscall.Mkfifo(p, 0o644) }},
		{"dir", func(e *guardEnv, p string) error { os.Remove(p); return os.Mkdir(p, 0o755) }},
		{"symlink-on-the-way", func(e *guardEnv, p string) error {
			d := filepath.Dir(p)
			if err := os.Rename(d, d+".real"); err != nil {
				return err
			}
			return os.Symlink(filepath.Base(d)+".real", d)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newGuardEnv(t)
			tg := e.target(".claude/settings.json")
			write(t, tg.Path, `{}`)
			ok, bad := Unguardable([]Target{tg})
			if len(ok) != 1 || len(bad) != 0 {
				t.Fatalf("the plan: ok %v bad %v", ok, bad)
			}
			if err := c.swap(e, tg.Path); err != nil {
				t.Fatal(err)
			}
			g, skipped, err := New(ok, e.opts("swap"))
			if !errors.Is(err, ErrUnguarded) || g != nil || len(skipped) != 1 {
				t.Fatalf("New after the swap: guard %v, skipped %q, err %v; want refused", g != nil, skipped, err)
			}
		})
	}
}

// A file its owner cannot read (mode 0) is unguardable: the agent, the
// same owner, gives itself the access back and writes its hooks there.
// Root reads it all the same: checked as another user only.
func TestUnguardableUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Log("root reads a mode-0 file: nothing to check as root")
		return
	}
	e := newGuardEnv(t)
	tg := e.target(".claude/settings.json")
	write(t, tg.Path, `{}`)
	if err := os.Chmod(tg.Path, 0); err != nil {
		t.Fatal(err)
	}
	ok, bad := Unguardable([]Target{tg})
	if len(ok) != 0 || len(bad) != 1 || !strings.HasPrefix(bad[0].What, "unreadable") || bad[0].Dir {
		t.Fatalf("ok %v bad %+v, want it unguardable (unreadable)", ok, bad)
	}
}

func TestTargets(t *testing.T) {
	roots := []Root{{Path: "/h/.claude", Dir: true}, {Path: "/h/.claude.json"}, {Path: "/w", Dir: true}}
	got := map[string]bool{}
	for _, tg := range Targets("/h", roots, Files) {
		got[tg.Path] = tg.InPlace
	}
	for p, inPlace := range map[string]bool{
		"/h/.claude.json":                false || true,
		"/h/.claude/settings.json":       false,
		"/w/.claude/settings.json":       false,
		"/w/.claude/settings.local.json": false,
		"/w/.codex/config.toml":          false,
	} {
		ip, ok := got[p]
		if !ok {
			t.Errorf("%s not guarded", p)
		} else if ip != inPlace {
			t.Errorf("%s in place = %v", p, ip)
		}
	}
	for p := range got {
		if strings.HasPrefix(p, "/h/.codex") || strings.HasPrefix(p, "/h/.gemini") {
			t.Errorf("%s guarded though not writable", p)
		}
	}
}

// Claude Code rewrites ~/.claude.json in place (truncate, then write) many
// times a session when the file is a bind mount: a read between its
// truncate and its write sees a half-written file. The guard must never
// take that for the agent's version: no event, and the writer's last
// version stays.
func TestGuardInPlaceWriterRace(t *testing.T) {
	e := newGuardEnv(t)
	p := filepath.Join(e.root, "claude.json")
	write(t, p, `{"numStartups": 0, "mcpServers": {"docs": {"command": "d"}}}`)
	tg := Target{File: fileFor(t, "claude", Home, ".claude.json"), Path: p, Root: p, InPlace: true}
	g, _, err := New([]Target{tg}, e.opts("t6"))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Watch(); err != nil {
		t.Fatal(err)
	}
	last := ""
	for i := 1; i <= 300; i++ {
		last = `{"numStartups": ` + strings.Repeat("1", i%7+1) + `, "projects": {"/w": {"mcpServers": {}, "allowedTools": []}}, "mcpServers": {"docs": {"command": "d"}}, "pad": "` + strings.Repeat("x", 4096*(i%3)) + `"}`
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			t.Fatal(err)
		}
		// Two writes with a pause between: a reader can land in between.
		f.WriteString(last[:len(last)/2])
		time.Sleep(200 * time.Microsecond)
		f.WriteString(last[len(last)/2:])
		f.Close()
	}
	time.Sleep(Stale + 200*time.Millisecond)
	g.Close()
	if ev := e.evs(); len(ev) > 0 {
		t.Fatalf("legitimate in-place writes were taken for the agent's: %+v", ev[0])
	}
	if got := read(t, p); got != last {
		t.Fatalf("the writer's last version did not stay:\n%.200s", got)
	}
}

// Gemini CLI saves trustedFolders.json by creating it empty, locking it
// (the lock resolves the file's path, so it must exist), writing a new
// version and renaming it over. However slow that is, the guard must leave
// the empty file alone.
func TestGuardEmptyFileLeftAlone(t *testing.T) {
	e := newGuardEnv(t)
	tg := Target{File: fileFor(t, "gemini", Home, ".gemini/trustedFolders.json"), Path: filepath.Join(e.root, "trustedFolders.json"), Root: e.root}
	g, _, err := New([]Target{tg}, e.opts("t7"))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Watch(); err != nil {
		t.Fatal(err)
	}
	write(t, tg.Path, "")
	time.Sleep(Stale + 500*time.Millisecond)
	if _, err := os.Stat(tg.Path); err != nil {
		t.Fatalf("the empty file a writer created was removed: %v", err)
	}
	write(t, tg.Path+".tmp", `{"/w": "TRUST_FOLDER"}`)
	os.Rename(tg.Path+".tmp", tg.Path)
	time.Sleep(100 * time.Millisecond)
	g.Close()
	if got := read(t, tg.Path); got != `{"/w": "TRUST_FOLDER"}` {
		t.Fatalf("the workspace's trust was not kept: %q", got)
	}
	if ev := e.evs(); len(ev) > 0 {
		t.Fatalf("events for a legitimate save: %+v", ev)
	}
}

// A record whose workspace is gone (deleted since the interrupted run) is
// dropped without a word.
func TestRecoverRootGone(t *testing.T) {
	e := newGuardEnv(t)
	root := filepath.Join(e.root, "ws")
	tg := Target{File: e.settings, Path: filepath.Join(root, ".claude/settings.json"), Root: root}
	write(t, tg.Path, hostSettings)
	g, _, err := New([]Target{tg}, e.opts("gone"))
	if err != nil {
		t.Fatal(err)
	}
	rp := filepath.Join(e.state, "gone.json")
	var rec record
	b, _ := os.ReadFile(rp)
	json.Unmarshal(b, &rec)
	rec.Pid, rec.StartTick = 1, 1
	b, _ = json.Marshal(rec)
	os.WriteFile(rp, b, 0o600)
	g.record = ""
	os.RemoveAll(root)
	Recover(e.opts("next"))
	if ev := e.evs(); len(ev) > 0 {
		t.Fatalf("events for a record whose root is gone: %+v", ev)
	}
	if _, err := os.Stat(rp); !os.IsNotExist(err) {
		t.Errorf("record left")
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("the gone root was made again")
	}
}

// The run's quarantine directory is shared with the sentinel, which stores
// entries the agent named (symlinks too): save never writes through or over
// what is there, it takes the next number.
func TestSaveBesideSentinelEntries(t *testing.T) {
	e := newGuardEnv(t)
	q := t.TempDir()
	outside := filepath.Join(t.TempDir(), "bashrc")
	write(t, outside, "host\n")
	tg := e.target(".claude/settings.json")
	name := strings.ReplaceAll(strings.TrimPrefix(tg.Path, "/"), "/", "_")
	os.MkdirAll(filepath.Join(q, "run1"), 0o700)
	if err := os.Symlink(outside, filepath.Join(q, "run1", "001-"+name)); err != nil {
		t.Fatal(err)
	}
	g := &Guard{opts: Options{Dir: e.state, Quarantine: q, ID: "run1"}}
	p := g.save(&gtarget{Target: tg}, []byte("agent\n"))
	if got := read(t, outside); got != "host\n" {
		t.Fatalf("save wrote through the entry already there: %q", got)
	}
	if p != filepath.Join(q, "run1", "002-"+name) || read(t, p) != "agent\n" {
		t.Fatalf("saved as %q", p)
	}
}

// A big snapshot is kept beside the record, raw (the record itself stays
// small: base64 in JSON cost a 10 MB ~/.claude.json half a second at every
// start), and a killed supervisor's record is still finished with it.
func TestRecoverBigSnapshot(t *testing.T) {
	e := newGuardEnv(t)
	tg := e.target(".claude/settings.json")
	pad := strings.Repeat("x", 3*inlineMax)
	host := `{"model": "` + pad + `", "hooks": {"Stop": "mine"}}`
	write(t, tg.Path, host)
	g, _, err := New([]Target{tg}, e.opts("dead"))
	if err != nil {
		t.Fatal(err)
	}
	rp := filepath.Join(e.state, "dead.json")
	b, _ := os.ReadFile(rp)
	if len(b) > 16<<10 {
		t.Errorf("the record holds the snapshot: %d bytes", len(b))
	}
	var rec record
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	rec.Pid, rec.StartTick = 1, 1
	b, _ = json.Marshal(rec)
	os.WriteFile(rp, b, 0o600)
	g.record = "" // not removed by this process
	write(t, tg.Path, `{"model": "b", "hooks": {"SessionStart": "evil"}}`)
	Recover(e.opts("next"))
	if got := read(t, tg.Path); got != `{"model": "b", "hooks": {"Stop": "mine"}}` {
		t.Errorf("the next start did not put the hook back: %.200s", got)
	}
	if left, _ := filepath.Glob(filepath.Join(e.state, "dead*")); len(left) > 0 {
		t.Errorf("left after recovery: %v", left)
	}
	// A record whose snapshot file is not whole checks nothing (and says so).
	write(t, tg.Path, host)
	g, _, err = New([]Target{tg}, e.opts("dead2"))
	if err != nil {
		t.Fatal(err)
	}
	g.record = ""
	b, _ = os.ReadFile(filepath.Join(e.state, "dead2.json"))
	json.Unmarshal(b, &rec)
	rec.Pid, rec.StartTick = 1, 1
	b, _ = json.Marshal(rec)
	os.WriteFile(filepath.Join(e.state, "dead2.json"), b, 0o600)
	os.Truncate(filepath.Join(e.state, "dead2.0.snap"), 10)
	write(t, tg.Path, `{"hooks": {"SessionStart": "evil"}}`)
	e.events = nil
	Recover(e.opts("next"))
	if ev := e.evs(); len(ev) != 1 || ev[0].Err == nil {
		t.Errorf("events %+v, want one error", ev)
	}
}

// readAll with the last content: an unchanged file gives that content back
// (no buffer of its size); any change, the file's new content.
func TestReadAllPrev(t *testing.T) {
	prev := []byte(strings.Repeat("0123456789", 50000))
	changed := append([]byte(nil), prev...)
	changed[len(changed)-1] = 'x'
	p := filepath.Join(t.TempDir(), "f")
	for _, c := range []struct {
		name string
		data []byte
	}{{"same", prev}, {"last byte", changed}, {"first byte", append([]byte("x"), prev[1:]...)}, {"shorter", prev[:len(prev)-1]}, {"longer", append(append([]byte(nil), prev...), 'y')}, {"empty", nil}} {
		if err := os.WriteFile(p, c.data, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		got, err := readAll(f, fi.Size(), 64<<20, prev)
		f.Close()
		if err != nil || !bytes.Equal(got, c.data) {
			t.Errorf("%s: read %d bytes (%v), want %d", c.name, len(got), err, len(c.data))
		}
		if c.name == "same" && &got[0] != &prev[0] {
			t.Errorf("same: a new buffer, not prev")
		}
	}
}

// A supervisor killed between a big snapshot's file and the record that
// names it leaves the snapshot alone: the next start's Recover removes it
// once it is older than a live supervisor could take to write the record,
// and keeps a recent one and one its record names.
func TestRecoverOrphanSnapshot(t *testing.T) {
	e := newGuardEnv(t)
	orphan := filepath.Join(e.state, "gone.0.snap")
	recent := filepath.Join(e.state, "starting.0.snap")
	named := filepath.Join(e.state, "live.0.snap")
	for _, p := range []string{orphan, recent, named} {
		write(t, p, "snapshot")
	}
	old := time.Now().Add(-2 * orphanAge)
	os.Chtimes(orphan, old, old)
	os.Chtimes(named, old, old)
	// A live supervisor's record (this process) names its snapshot.
	b, _ := json.Marshal(record{ID: "live", Pid: os.Getpid(), StartTick: startTick(os.Getpid())})
	write(t, filepath.Join(e.state, "live.json"), string(b))
	Recover(e.opts("next"))
	if _, err := os.Stat(orphan); err == nil {
		t.Error("an orphaned snapshot of a killed run is left behind")
	}
	for _, p := range []string{recent, named} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
}

// A Home file reached through a symlinked directory (~/.claude ->
// dotfiles/claude) whose resolved directory is the writable root is
// guarded where it lies (review17d: it was not guarded at all).
func TestTargetsThroughSymlinkedDir(t *testing.T) {
	home := t.TempDir()
	real := filepath.Join(home, "dotfiles", "claude")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("dotfiles/claude", filepath.Join(home, ".claude")); err != nil {
		t.Fatal(err)
	}
	files := []File{{Agent: "claude", Path: ".claude/settings.json", Scope: Home}}
	got := Targets(home, []Root{{Path: real, Dir: true}}, files)
	want := filepath.Join(real, "settings.json")
	if len(got) != 1 || got[0].Path != want || got[0].Root != real {
		t.Fatalf("targets %+v, want %s under %s", got, want, real)
	}
	// Not writable: nothing to guard, resolved or not.
	if got := Targets(home, []Root{{Path: filepath.Join(home, "other"), Dir: true}}, files); len(got) != 0 {
		t.Fatalf("targets %+v with no root holding the file", got)
	}
}
