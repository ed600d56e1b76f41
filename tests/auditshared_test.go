//go:build linux

package tests

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Adversarial: an --audit FILE in a shared directory that others may write
// without the sticky bit (0777, 0775): anyone who may write there can
// rename the trail away and put one of their own, with a chain computed
// afresh, at its name. jail refuses it before the run, in one line naming
// --audit, and creates nothing; a sticky shared directory (as /tmp) is
// accepted. Seen failing with main's binary: the 0777 and 0775 runs
// exited 0 and wrote their trails there.
func TestAuditInSharedDirRefused(t *testing.T) {
	base := auditDir(t)
	for _, c := range []struct {
		name string
		mode os.FileMode
		ok   bool
	}{
		{"world", 0o777, false},
		{"group", 0o775, false},
		{"sticky", 0o777 | os.ModeSticky, true},
	} {
		dir := filepath.Join(base, c.name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, c.mode); err != nil {
			t.Fatal(err)
		}
		trail := filepath.Join(dir, "t.jsonl")
		r := run(t, runOpts{}, "--quiet", "--audit", trail, "--", "/bin/true")
		if c.ok {
			mustCode(t, r, 0)
			continue
		}
		if r.code == 0 {
			t.Errorf("ATTACK WORKED: --audit in a %s-writable directory (mode %v) accepted", c.name, c.mode)
		} else if !strings.Contains(r.stderr, "--audit") || !strings.Contains(r.stderr, "writable by others") {
			t.Errorf("--audit in a %s-writable directory refused without naming --audit and why: %q", c.name, r.stderr)
		}
		if _, err := os.Lstat(trail); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the refused trail %s was created (lstat: %v)", trail, err)
		}
	}
}
