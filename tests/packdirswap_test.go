//go:build linux

package tests

// End-to-end test of the end's pack check (packlie) against a pack
// directory swapped for one an earlier run filled (review17c).

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGitHistoryPackDirSwapped: the end checks the packs whose files
// changed during the run (their change time), in the pack directory as git
// reaches it. A directory renamed into place keeps its files' change times.
// In a young repository (loose objects only: no pack of the start's, so
// objects/pack is not pinned) run 1 writes a lying pack (lyingPack's) into
// .git/objects/evil (not a pack directory: not checked; the same mount as
// objects/pack, so a rename, not a copy); run 2, a later one, renames it
// over objects/pack. At run 2's end the lying pack's files were older than
// the run: not read; the host's git gc then lost the root commit. Seen
// failing on main's binary (9f4d378): the root commit was gone after the
// host's gc, nothing quarantined, nothing said.
func TestGitHistoryPackDirSwapped(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	root := threeLoose(t, h, ws)
	name, pack, idx := lyingPack(t, h, ws)
	plantPack(t, ws, pack, idx)
	// Run 1: the lying pack written where no end looks.
	r := h.run(t, ws, `cd "$2" || exit 1
git reflog expire --expire=now --all || exit 1
E=.git/objects/evil; mkdir $E && cp plant/q.pack $E/pack-$3.pack && cp plant/q.idx $E/pack-$3.idx || exit 1
rm -rf plant
`, nil, ws, name)
	if r.code != 0 {
		t.Fatalf("run 1: jail exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	h.trail = filepath.Join(t.TempDir(), "trail.jsonl")
	// Past the end's allowance for the file system's clock tick: run 1's
	// files are older than run 2 (a later day's run, in use).
	time.Sleep(1500 * time.Millisecond)
	// Run 2: the directory renamed into place.
	r = h.run(t, ws, `cd "$2" || exit 1
mv .git/objects/pack .git/objects/old || exit 1
mv .git/objects/evil .git/objects/pack || exit 1
git log --format=%s
`, nil, ws)
	if r.code != 0 {
		t.Fatalf("run 2: jail exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if got := strings.Fields(r.stdout); len(got) != 2 || got[0] != "c" || got[1] != "b" {
		t.Fatalf("inside, git log shows %q, want the forged history [c b] (the attack did not take)\nstderr:\n%s", got, r.stderr)
	}
	t.Logf("run 2's stderr:\n%s", r.stderr)
	lie := filepath.Join(ws, ".git", "objects", "pack", "pack-"+name+".idx")
	h.gcKeepsRoot(t, ws, root, r)
	if !hasPath(h.quarantined(t), lie) {
		t.Errorf("the lying pack's %s is not in the quarantine manifest\nstderr:\n%s", lie, r.stderr)
	}
}

// threeLoose is threeCommits without the pack: a young repository's
// objects are loose (git's automatic gc packs past 6,700), four weeks old.
func threeLoose(t *testing.T, h *gitHost, ws string) (root string) {
	t.Helper()
	h.repo(t, ws)
	for _, m := range []string{"b", "c"} {
		os.WriteFile(filepath.Join(ws, m), []byte(m+"\n"), 0o644)
		h.mustGit(t, ws, "add", m)
		h.mustGit(t, ws, "-c", "commit.gpgsign=false", "commit", "-q", "-m", m)
	}
	old := time.Now().Add(-28 * 24 * time.Hour)
	os.MkdirAll(filepath.Join(ws, ".git", "objects", "pack"), 0o755)
	ps, _ := filepath.Glob(filepath.Join(ws, ".git", "objects", "??", "*"))
	if len(ps) == 0 {
		t.Fatal("no loose objects")
	}
	for _, p := range ps {
		os.Chtimes(p, old, old)
	}
	return strings.TrimSpace(h.mustGit(t, ws, "rev-parse", "HEAD~2"))
}

// TestGitUncheckedRecordNoStore: a pack the end cannot read through is
// recorded in its repository's store (gitkeep.MarkUnchecked); a repository
// past the kept bound (64: run 1 planted 70 shallower ones) has none, and
// the record went to "packs-unchecked" relative to the supervisor's
// working directory -- the workspace -- written through a ".tmp" link the
// agent left there: a host file outside the trees truncated and filled
// with the agent's pack names (a shell startup file runs them). Seen
// failing on main's binary (9f4d378): the victim file held the pack's
// name after the run.
func TestGitUncheckedRecordNoStore(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	threeCommits(t, h, ws)
	name, pack, idx := bigLyingPack(t, h, ws)
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("safe\n"), 0o644)
	r := h.run(t, ws, `cd "$2" || exit 1
for i in $(seq 10 79); do git init -q a$i || exit 1; done
mkdir -p z/deep && git init -q z/deep || exit 1
`, nil, ws)
	if r.code != 0 {
		t.Fatalf("run 1: jail exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	plantPack(t, ws, pack, idx)
	h.trail = filepath.Join(t.TempDir(), "trail.jsonl")
	r = h.run(t, ws, `cd "$2" || exit 1
P=z/deep/.git/objects/pack/pack-$3
cp plant/q.pack $P.pack && cp plant/q.idx $P.idx || exit 1
rm -rf plant
ln -s "$4" packs-unchecked.tmp
`, nil, ws, name, victim)
	if r.code != 0 {
		t.Fatalf("run 2: jail exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "pack-"+name) || !strings.Contains(r.stderr, "not checked") {
		t.Fatalf("the end did not say the pack was not checked (read through?):\n%s", r.stderr)
	}
	if b, _ := os.ReadFile(victim); string(b) != "safe\n" {
		t.Errorf("the end wrote through the agent's link: the victim now holds %q\nstderr:\n%s", b, r.stderr)
	}
	if _, err := os.Lstat(filepath.Join(ws, "packs-unchecked")); err == nil {
		t.Errorf("the end left packs-unchecked in the workspace")
	}
}
