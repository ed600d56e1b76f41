//go:build unix

package audit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Adversarial: a trail in a directory another user owns (a shared
// directory that user made under /tmp) can be renamed away by that user
// and replaced by one of theirs, with a chain computed afresh: --verify
// passes. Seen with main's binary: jailtest ran jail --audit shared/t.jsonl
// in a directory of nobody's; nobody moved the trail away and put an empty
// file there, and jail audit --verify said "chain verified". CheckDirs
// refuses such a place; the supervisor calls it for an --audit FILE.
func TestCheckDirs(t *testing.T) {
	root := t.TempDir()
	mine := filepath.Join(root, "mine")
	theirs := filepath.Join(root, "theirs")
	for _, d := range []string{mine, theirs} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	// "Another user": as root, a directory chowned to nobody; as anyone
	// else, the check asked on behalf of a uid that is not the owner.
	uid := uint32(os.Geteuid())
	other := uid + 1
	if uid == 0 {
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		other = 0
	}
	check := func(p string, asOther bool) error {
		if asOther && uid != 0 {
			return checkDirs(p, other)
		}
		return checkDirs(p, uid)
	}
	if err := CheckDirs(filepath.Join(mine, "t.jsonl")); err != nil {
		t.Fatalf("a directory of mine refused: %v", err)
	}
	if err := CheckDirs(filepath.Join(mine, "not", "yet", "t.jsonl")); err != nil {
		t.Fatalf("a directory to be made in mine refused: %v", err)
	}
	target := theirs
	if uid != 0 {
		target = mine // its owner is not `other`
	}
	for _, p := range []string{filepath.Join(target, "t.jsonl"), filepath.Join(target, "not", "yet", "t.jsonl")} {
		if err := check(p, true); !errors.Is(err, ErrReplaceable) {
			t.Errorf("ATTACK WORKED: %s, in another user's directory, accepted (err %v)", p, err)
		}
	}
	// Through a symlink of mine: where it leads is checked.
	link := filepath.Join(root, "l")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := check(filepath.Join(link, "t.jsonl"), true); !errors.Is(err, ErrReplaceable) {
		t.Errorf("ATTACK WORKED: a symlink to another user's directory accepted (err %v)", err)
	}
}

// An empty file verifies (no line is broken) but is no trail jail wrote:
// --verify says so rather than "chain verified" alone.
func TestVerifyEmptyWarns(t *testing.T) {
	p := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, _ := runCLI(t, "--verify", p)
	if !strings.Contains(out, "warning: no line at all") {
		t.Errorf("--verify of an empty file: %q, want a warning", out)
	}
}
