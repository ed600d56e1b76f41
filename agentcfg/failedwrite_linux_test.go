package agentcfg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fsImmutableFL is FS_IMMUTABLE_FL (linux/fs.h; not in x/sys/unix).
const fsImmutableFL = 0x10

// failWrites makes the guard's writes into dir fail until the undo it
// returns, as the agent can make them fail: for root, the immutable
// attribute (root's supervisor ignores modes; an agent cannot set the
// attribute, but a full disk fails the write the same way); for a user,
// whose supervisor gives itself back what a chmod of the agent takes away,
// a full disk (writeFault: a test cannot fill one of its own).
func failWrites(t *testing.T, dir string) func() {
	t.Helper()
	if os.Geteuid() != 0 {
		writeFault = func(d string) error {
			if d == dir {
				return unix.ENOSPC
			}
			return nil
		}
		undo := func() { writeFault = nil }
		t.Cleanup(undo)
		return undo
	}
	setFlags := func(on bool) error {
		f, err := os.Open(dir)
		if err != nil {
			return err
		}
		defer f.Close()
		flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
		if err != nil {
			return err
		}
		if on {
			flags |= fsImmutableFL
		} else {
			flags &^= fsImmutableFL
		}
		return unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(flags))
	}
	if err := setFlags(true); err != nil {
		t.Fatalf("make %s immutable (root's way to refuse the guard's write): %v", dir, err)
	}
	undo := func() { _ = setFlags(false) }
	t.Cleanup(undo)
	return undo
}

// TestGuardFailedWriteRejudgedAtEnd: the agent writes a hook into a
// guarded file and makes the guard's restore fail for a while (it fills
// the disk, then frees it; it took write away from the file's directory
// with chmod before the guard gave itself that back: TestGuardLockedToTheEnd),
// then lets the write succeed again. The failed restore is reported, but what was there must not
// be taken as settled: Close's last check, with no writer left and the
// directory writable again, must put the host's version back. Seen
// failing on the old settle, which accepted whatever was there after a
// failed write: every later check, Close's too, found "no change" and the
// hook stayed after the run.
func TestGuardFailedWriteRejudgedAtEnd(t *testing.T) {
	const evil = `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch /tmp/pwned-failed"}]}]}}`
	e := newGuardEnv(t)
	tg := e.target(".claude/settings.json")
	write(t, tg.Path, hostSettings)
	g, _, err := New([]Target{tg}, e.opts("failed"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, tg.Path, evil)
	undo := failWrites(t, filepath.Dir(tg.Path))
	g.CheckNow()
	failed := false
	for _, ev := range e.evs() {
		failed = failed || ev.Err != nil
	}
	if !failed {
		t.Fatalf("control: the guard's restore into the refusing directory did not fail (events %+v, file %s)", e.evs(), read(t, tg.Path))
	}
	undo()
	g.Close()
	if got := read(t, tg.Path); strings.Contains(got, "pwned-failed") || !strings.Contains(got, `"mine"`) {
		t.Fatalf("the agent's hook is left after Close, once its directory was writable again: %s", got)
	}
}
