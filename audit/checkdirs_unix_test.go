//go:build unix

package audit

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/hostpath"
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
		if err := os.Mkdir(d, 0o755); err != nil { // not writable by others, whatever the umask
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

// Adversarial: a symlink on the trail's path that another user can point
// elsewhere (it lies in their directory, or it is theirs) leads, at the
// check, to a good place. CheckDirs looked only where the path led (the
// symlinks resolved): the user's trail was written there, then the other
// user pointed the link at a directory of theirs with a forged trail, and
// `jail audit --verify` on the path the user gave said "chain verified"
// (seen with main's binary: jailtest, --audit /var/lib/X/other/x/t.jsonl,
// other/ and x nobody's, x -> a directory of jailtest's; nobody then
// pointed x at its own copy of a trail). Seen failing here on main's
// CheckDirs (both cases accepted).
func TestCheckDirsSymlinkOnTheWay(t *testing.T) {
	root := t.TempDir()
	uid := uint32(os.Geteuid())
	mine := filepath.Join(root, "mine")
	theirs := filepath.Join(root, "theirs")
	for _, d := range []string{mine, theirs} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Where the links lead: a place the checked user may use. As root,
	// mine, with theirs nobody's; as another user, / (root's), checked on
	// behalf of a uid that does not own root (the temporary directory is
	// "another user's" then).
	good, as := mine, uid
	if uid == 0 {
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	} else {
		good, as = "/", uid+1
	}
	inTheirs := filepath.Join(theirs, "l")
	if err := os.Symlink(good, inTheirs); err != nil {
		t.Fatal(err)
	}
	if err := checkDirs(filepath.Join(inTheirs, "t.jsonl"), as); !errors.Is(err, ErrReplaceable) {
		t.Errorf("ATTACK WORKED: a symlink in another user's directory accepted (err %v)", err)
	}
	if err := checkDirs(filepath.Join(inTheirs, "not", "yet", "t.jsonl"), as); !errors.Is(err, ErrReplaceable) {
		t.Errorf("ATTACK WORKED: a symlink in another user's directory, to a directory to be made, accepted (err %v)", err)
	}
	if uid == 0 {
		// A symlink of theirs in a directory of mine (a sticky shared
		// directory lets them replace it; ownership is what counts).
		theirLink := filepath.Join(mine, "their-link")
		if err := os.Symlink(mine, theirLink); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(theirLink, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := checkDirs(filepath.Join(theirLink, "t.jsonl"), uid); !errors.Is(err, ErrReplaceable) {
			t.Errorf("ATTACK WORKED: another user's symlink accepted (err %v)", err)
		}
	}
	// Mine all the way, through links of mine, relative and absolute, and
	// "..": accepted.
	if err := os.Mkdir(filepath.Join(mine, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/../sub", filepath.Join(mine, "rel")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(mine, "rel"), filepath.Join(mine, "abs")); err != nil {
		t.Fatal(err)
	}
	if err := CheckDirs(filepath.Join(mine, "abs", "t.jsonl")); err != nil {
		t.Errorf("links of mine to a directory of mine refused: %v", err)
	}
	loop := filepath.Join(mine, "loop")
	if err := os.Symlink("loop", loop); err != nil {
		t.Fatal(err)
	}
	if err := CheckDirs(filepath.Join(loop, "t.jsonl")); err == nil {
		t.Errorf("a symlink loop accepted")
	}
}

// Adversarial: between CheckDirs and the trail's creation the path can
// change (another user makes a missing directory of it in a shared /tmp);
// CheckPlace, asked once the trail exists, sees that the path no longer
// leads to the file the writer holds.
func TestCheckPlaceSwapped(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "d")
	w, err := Create(filepath.Join(dir, "t.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.CheckPlace(); err != nil {
		t.Fatalf("a trail where it was made refused: %v", err)
	}
	if err := os.Rename(dir, dir+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "t.jsonl"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := w.CheckPlace(); !errors.Is(err, ErrReplaceable) {
		t.Errorf("ATTACK WORKED: a path that leads to another file accepted (err %v)", err)
	}
}

// Adversarial: a trail in a directory others may write without the sticky
// bit (a shared 0777 or 0775 directory) can be renamed away and replaced by
// anyone who may write there, as by the owner of TestCheckDirs. Seen with
// main's code: CheckDirs accepted a 0777 and a 0775 directory of the user's
// own. A sticky one (/tmp) is accepted: only the trail's owner may rename
// or remove it there.
func TestCheckDirsWritableByOthers(t *testing.T) {
	root := t.TempDir()
	for _, c := range []struct {
		mode os.FileMode
		ok   bool
	}{
		{0o777, false}, {0o775, false}, {0o757, false},
		{0o777 | os.ModeSticky, true}, {0o775 | os.ModeSticky, true}, {0o755, true}, {0o700, true},
	} {
		d := filepath.Join(root, "d"+c.mode.String())
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, c.mode); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{filepath.Join(d, "t.jsonl"), filepath.Join(d, "not", "yet", "t.jsonl")} {
			err := CheckDirs(p)
			if c.ok && err != nil {
				t.Errorf("%s (mode %v) refused: %v", p, c.mode, err)
			}
			if !c.ok && !errors.Is(err, ErrReplaceable) {
				t.Errorf("ATTACK WORKED: %s, in a directory of mode %v, accepted (err %v)", p, c.mode, err)
			}
		}
	}
}

// Adversarial: a ".." is taken from where the path has led so far, as the
// kernel takes it, not as text. --audit mine/l/../t.jsonl, l a symlink of
// another user's (or leading through their directory), is created in the
// directory above l's target: a place of theirs. Seen failing on main's
// CheckDirs, which cleaned the path as text (filepath.Abs) to
// mine/t.jsonl and checked that: both paths accepted, and the trail was
// created where the other user could swap it.
func TestCheckDirsDotDotAfterTheirs(t *testing.T) {
	root := t.TempDir()
	uid := uint32(os.Geteuid())
	if uid != 0 {
		// As another user: a path through the temporary directory (this
		// user's, so "another user's" for the uid checked) and back up to
		// / as text: the text names only root's /, the kernel walks
		// through the other user's directories, whose owner can swap one
		// of them for a symlink and so choose where the ".."s lead.
		depth := strings.Count(strings.Trim(root, "/"), "/") + 1
		p := root + strings.Repeat("/..", depth) + "/t.jsonl"
		if err := checkDirs(p, uid+1); !errors.Is(err, ErrReplaceable) {
			t.Errorf("ATTACK WORKED: %s, through another user's directories, accepted (err %v)", p, err)
		}
		return
	}
	mine := filepath.Join(root, "mine")
	sub := filepath.Join(root, "theirs", "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(sub), sub} {
		if err := os.Chown(d, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	// A symlink of theirs, and one of root's leading into their directory.
	theirLink, rootLink := filepath.Join(mine, "their-link"), filepath.Join(mine, "root-link")
	for _, l := range []string{theirLink, rootLink} {
		if err := os.Symlink(sub, l); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Lchown(theirLink, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{theirLink, rootLink} {
		p := l + "/../t.jsonl" // not filepath.Join: it would clean the ".." away
		if err := checkDirs(p, uid); !errors.Is(err, ErrReplaceable) {
			t.Errorf("ATTACK WORKED: %s (the kernel opens %s) accepted (err %v)", p, filepath.Join(filepath.Dir(sub), "t.jsonl"), err)
		}
	}
	// Links of mine to a directory of mine, and ".." after them: accepted.
	if err := os.Mkdir(filepath.Join(mine, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(mine, "a"), filepath.Join(mine, "to-a")); err != nil {
		t.Fatal(err)
	}
	if err := checkDirs(filepath.Join(mine, "to-a")+"/../a/t.jsonl", uid); err != nil {
		t.Errorf("a link of mine and .. in my directories refused: %v", err)
	}
}

// A chain of links as long as the kernel follows (40) is checked link by
// link and accepted; one more is refused, as the kernel would refuse to
// open the trail (ELOOP), and a file on the way is no directory to put a
// trail in.
func TestCheckDirsLongChain(t *testing.T) {
	root := t.TempDir()
	prev := root
	for i := range 41 {
		l := filepath.Join(root, "c"+strconv.Itoa(i))
		if err := os.Symlink(prev, l); err != nil {
			t.Fatal(err)
		}
		prev = l
	}
	if err := CheckDirs(filepath.Join(root, "c39", "t.jsonl")); err != nil {
		t.Errorf("40 links of mine refused: %v", err)
	}
	if err := CheckDirs(filepath.Join(root, "c40", "t.jsonl")); !errors.Is(err, hostpath.ErrLoop) {
		t.Errorf("41 links: %v, want a loop", err)
	}
	f := filepath.Join(root, "file")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckDirs(filepath.Join(f, "t.jsonl")); err == nil || errors.Is(err, ErrReplaceable) {
		t.Errorf("a file on the way: %v, want an error (not a directory)", err)
	}
}

// Create makes the missing directories where the kernel opens the trail,
// the one place CheckDirs and CheckPlacement checked: mine/l/../new/t.jsonl
// with l -> mine/a/b is mine/a/new/t.jsonl. Seen failing on main's Create,
// which made mine/new (the path cleaned as text) and then could not open
// the trail (ENOENT).
func TestCreateWhereTheKernelOpens(t *testing.T) {
	mine := t.TempDir()
	if err := os.MkdirAll(filepath.Join(mine, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(mine, "a", "b"), filepath.Join(mine, "l")); err != nil {
		t.Fatal(err)
	}
	w, err := Create(filepath.Join(mine, "l") + "/../new/t.jsonl")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	defer w.Close()
	if err := w.CheckPlace(); err != nil {
		t.Errorf("CheckPlace: %v", err)
	}
	if _, err := os.Stat(filepath.Join(mine, "a", "new", "t.jsonl")); err != nil {
		t.Errorf("the trail is not where the kernel opens its path: %v", err)
	}
	if _, err := os.Stat(filepath.Join(mine, "new")); err == nil {
		t.Errorf("a directory made where the path, cleaned as text, leads")
	}
}
