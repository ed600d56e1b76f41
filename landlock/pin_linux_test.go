package landlock

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// pinRoot turns a read-exec grant on root into READ_DIR on root plus
// read-exec on each entry root holds now: a directory made later gets no
// rule of its own; a symlink gets none (its target is checked).
func TestPinRoot(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"etc", "usr"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("usr/bin", filepath.Join(root, "bin")); err != nil {
		t.Fatal(err)
	}
	s := setsFor(Rules{}, 3)
	rest, rules, err := pinRoot([]string{root, "/other"}, root, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(rest) != 1 || rest[0] != "/other" {
		t.Errorf("rest = %v, want [/other]: root must leave the read-exec list", rest)
	}
	j := func(p ...string) string { return fmt.Sprint(p) }
	want := []string{
		landlock.PathAccess(ll.AccessFSReadDir, root).String(),
		landlock.PathAccess(s.readExec, filepath.Join(root, "etc"), filepath.Join(root, "usr")).String(),
		landlock.PathAccess(s.readExec&fileRights, filepath.Join(root, "file")).String(),
	}
	var got []string
	for _, r := range rules {
		got = append(got, fmt.Sprint(r))
	}
	if j(got...) != j(want...) {
		t.Errorf("rules:\n got %v\nwant %v", got, want)
	}
	for _, r := range got {
		if strings.Contains(r, filepath.Join(root, "bin")) {
			t.Errorf("a symlink at the root got a rule: %s", r)
		}
	}
	// Without root in the list nothing changes.
	rest, rules, err = pinRoot([]string{"/other"}, root, s)
	if err != nil || len(rules) != 0 || len(rest) != 1 {
		t.Errorf("no root in the list: rest %v rules %v err %v", rest, rules, err)
	}
	// An unlistable root fails closed (an error, not a wider grant).
	if _, _, err := pinRoot([]string{root + "/missing"}, root+"/missing", s); err == nil {
		t.Error("a root that cannot be listed gave no error")
	}
}
