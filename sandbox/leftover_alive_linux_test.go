package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/procstat"
)

// A supervisor that is a zombie (SIGKILLed, not yet reaped) is gone for
// jail gc, as for jail ps (List): its record, TMPDIR and trail are a dead
// run's. A live one, and a pid reused by another process, are told apart
// by the start tick.
func TestSupervisorAliveZombie(t *testing.T) {
	pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	var ws syscall.WaitStatus
	t.Cleanup(func() { syscall.Wait4(pid, &ws, 0, nil) })
	var tick uint64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		s, err := procstat.Read("", pid)
		if err == nil && tick == 0 {
			tick = s.StartTime
		}
		if err == nil && s.State == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %d never became a zombie (%v, %+v)", pid, err, s)
		}
	}
	for _, tk := range []uint64{0, tick} {
		if supervisorAlive(pid, tk) {
			t.Errorf("supervisorAlive(zombie %d, tick %d) = true, want false", pid, tk)
		}
	}
	self := procstat.SelfStartTick()
	if !supervisorAlive(os.Getpid(), self) || !supervisorAlive(os.Getpid(), 0) {
		t.Errorf("supervisorAlive(self) = false, want true")
	}
	if supervisorAlive(os.Getpid(), self+1) {
		t.Errorf("supervisorAlive(self, another start tick) = true, want false (a reused pid)")
	}
}

// A registry file no reader can judge (empty: a supervisor killed while
// writing it, by an older jail; or a .tmp register never renamed) is
// removed by jail gc once it is older than a write takes, never while it
// may be being written; a .tmp whose supervisor lives is kept. Seen in CI:
// a supervisor SIGKILLed right after its record appeared left it empty,
// and gc, which skipped it, left it for ever.
func TestRemoveUnreadableRecords(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Minute)
	mk := func(name, body string, at time.Time) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		return p
	}
	live := fmt.Sprintf(`{"id":"l","pid":%d,"start_tick":%d}`, os.Getpid(), procstat.SelfStartTick())
	emptyOld := mk("a.json", "", old)
	emptyNew := mk("b.json", "", time.Now())
	partialOld := mk("c.json", `{"id":"c","pi`, old)
	tmpOld := mk("d.json.tmp", "", old)
	tmpLive := mk("e.json.tmp", live, old)
	tmpDead := mk("f.json.tmp", `{"id":"f","pid":999999999,"start_tick":1}`, time.Now())
	record := mk("g.json", live, old)
	got := removeUnreadableRecords(dir, time.Now())
	for _, p := range []string{emptyOld, partialOld, tmpOld, tmpDead} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there (removed: %v)", filepath.Base(p), got)
		}
	}
	for _, p := range []string{emptyNew, tmpLive, record} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
}

// register leaves exactly one record that parses, and no .tmp.
func TestRegisterAtomic(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	unregister := register(Entry{ID: "atomic1", Command: []string{"true"}})
	defer unregister()
	dir, err := checkRegistry()
	if err != nil || dir == "" {
		t.Fatalf("registry: %q %v", dir, err)
	}
	m, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(m) != 1 || filepath.Base(m[0]) != "atomic1.json" {
		t.Fatalf("registry holds %v, want atomic1.json alone", m)
	}
	es, err := List()
	if err != nil || len(es) != 1 || es[0].ID != "atomic1" || es[0].Pid != os.Getpid() {
		t.Fatalf("List = %+v, %v", es, err)
	}
}
