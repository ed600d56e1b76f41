//go:build linux

package tests

// End-to-end tests of git history's protection (session 15, lane
// githistory): the packs of every repository in a writable tree are
// read-only inside (gitguard.Plan.History), so the ways an agent deletes
// history -- rm -rf .git, rm -rf .git/objects, git gc --prune=now after a
// reset and an expired reflog, a pack rewritten in place, the objects
// directory renamed away -- lose no commit that was packed at start, and git
// keeps working inside. Each attack is paired with a control run under
// --allow-git-config (git's protection lifted), in which the same script
// must lose the commit: an attack that cannot work proves nothing.

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// historyRepo makes a repository with two commits packed by a host gc and a
// third, loose, on top; it returns the packed commit (HEAD~1), the root
// commit, and the sha256 of each pack file.
func historyRepo(t *testing.T, h *gitHost, ws string) (packed, root string, sums map[string]string) {
	t.Helper()
	h.mustGit(t, ws, "init", "-q", "-b", "main", ".")
	for _, f := range []string{"a", "b", "c"} {
		os.WriteFile(filepath.Join(ws, f), []byte(f+"\n"), 0o644)
		h.mustGit(t, ws, "add", f)
		h.mustGit(t, ws, "-c", "commit.gpgsign=false", "commit", "-q", "-m", f)
		if f == "b" {
			h.mustGit(t, ws, "gc", "-q")
		}
	}
	packed = strings.TrimSpace(h.mustGit(t, ws, "rev-parse", "HEAD~1"))
	root = strings.TrimSpace(h.mustGit(t, ws, "rev-list", "--max-parents=0", "HEAD"))
	return packed, root, packSums(t, ws)
}

// packOf is the name of the .pack among historyRepo's pack files.
func packOf(sums map[string]string) string {
	for n := range sums {
		if strings.HasSuffix(n, ".pack") {
			return n
		}
	}
	return ""
}

func packSums(t *testing.T, ws string) map[string]string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(ws, ".git", "objects", "pack", "pack-*"))
	sums := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sums[filepath.Base(f)] = fmt.Sprintf("%x", sha256.Sum256(b))
	}
	return sums
}

// historyAttack is every way the agent tries to lose the packed commits,
// each going on when the one before fails (the hard link and the /proc
// reopen were tried by hand on the new binary first: EXDEV, EROFS).
const historyAttack = `cd "$2"
P=$(ls .git/objects/pack/pack-*.pack | head -1)
I=${P%.pack}.idx
# In place: make the pack writable and overwrite its objects, truncate its index.
chmod u+w "$P" "$I"
dd if=/dev/zero of="$P" bs=1 seek=12 count=64 conv=notrunc 2>&1
cat /dev/null > "$I"
# Other names for the same file: a hard link, the descriptor's /proc link.
ln "$P" hl && dd if=/dev/zero of=hl bs=1 seek=12 count=64 conv=notrunc 2>&1
exec 3<"$P"
dd if=/dev/zero of=/proc/self/fd/3 bs=1 seek=12 count=64 conv=notrunc 2>&1
exec 3<&-
# What a "clean up the repository" agent does.
git reset -q --hard "$3"
git reflog expire --expire=now --all
git gc -q --prune=now
git repack -a -d -q
# The objects moved away, then deleted; the whole git dir deleted.
mv .git/objects .git/objects.old
rm -rf .git/objects.old .git/objects
rm -rf .git
exit 0
`

// TestGitHistoryPacksSurvive: after every attack above, each pack file of
// the start is there, byte for byte, and the packed commit reads on the
// host. Seen failing on main's binary (a34609b, before this lane): the gc
// pruned the packed commit and rm -rf took the packs.
func TestGitHistoryPacksSurvive(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	packed, root, before := historyRepo(t, h, ws)
	if len(before) < 2 {
		t.Fatalf("host gc made no pack: %v", before)
	}
	r := h.run(t, ws, historyAttack, nil, ws, root)
	if r.code != 0 {
		t.Fatalf("jail exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	after := packSums(t, ws)
	for name, sum := range before {
		if after[name] != sum {
			t.Errorf("pack file %s changed or went (%q, was %q)\nagent:\n%s%s", name, after[name], sum, r.stdout, r.stderr)
		}
	}
	// rm -rf .git took HEAD and refs: a host `git init` puts them back
	// (the config survived, read-only), and the packed commit reads.
	h.mustGit(t, ws, "init", "-q")
	if out, err := h.git(ws, "cat-file", "-p", packed); err != nil {
		t.Errorf("packed commit %s lost: %v\n%s\nagent:\n%s%s", packed, err, out, r.stdout, r.stderr)
	}
	for name := range before {
		if strings.HasSuffix(name, ".idx") {
			if out, err := h.git(ws, "verify-pack", filepath.Join(ws, ".git", "objects", "pack", name)); err != nil {
				t.Errorf("verify-pack %s: %v\n%s", name, err, out)
			}
		}
	}

	// The control: with git's protection lifted, the same script loses
	// the packed commit (the attack works).
	t.Run("control --allow-git-config", func(t *testing.T) {
		h := newGitHost(t)
		ws := workspace(t)
		packed, root, _ := historyRepo(t, h, ws)
		r := h.run(t, ws, historyAttack, []string{"--allow-git-config"}, ws, root)
		if r.code != 0 {
			t.Fatalf("jail exit %d\nstderr:\n%s", r.code, r.stderr)
		}
		h.mustGit(t, ws, "init", "-q")
		if out, err := h.git(ws, "cat-file", "-e", packed); err == nil {
			t.Errorf("control: packed commit %s still there: the attack proves nothing\n%s\nagent:\n%s%s", packed, out, r.stdout, r.stderr)
		}
	})
}

// TestGitHistoryGitWorksInside: with the packs read-only, a commit, a gc, a
// repack and a prune inside succeed and leave a repository the host's
// fsck finds whole, with the commit made inside; the old pack stays beside
// the new one (the cost: garbage until a gc on the host).
func TestGitHistoryGitWorksInside(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	_, _, before := historyRepo(t, h, ws)
	script := `cd "$2"
set -e
g() { git -c user.name=agent -c user.email=agent@example.invalid -c commit.gpgsign=false "$@"; }
echo d > d; g add d; g commit -q -m inside
g gc -q
g repack -a -d -q
g prune --expire=now
g gc -q --prune=now
g log --oneline | grep -q inside
echo ok
`
	r := h.run(t, ws, script, nil, ws)
	if r.code != 0 || !strings.Contains(r.stdout, "ok") {
		t.Fatalf("git inside failed: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if out, err := h.git(ws, "fsck", "--strict"); err != nil {
		t.Errorf("host fsck after git inside: %v\n%s", err, out)
	}
	if out := h.mustGit(t, ws, "log", "--format=%s", "-1"); strings.TrimSpace(out) != "inside" {
		t.Errorf("host HEAD is %q, want the commit made inside", out)
	}
	after := packSums(t, ws)
	for name := range before {
		if _, ok := after[name]; !ok {
			t.Errorf("old pack %s went: the gc inside deleted it", name)
		}
	}
	if len(after) <= len(before) {
		t.Errorf("no new pack beside the old ones: before %v after %v", before, after)
	}
	if strings.Contains(r.stderr, "was deleted on the host") {
		t.Errorf("a pack mount said as fallen:\n%s", r.stderr)
	}
}

// TestGitHistoryPlantedPacksDoNotCrowdOut: in run 1 the agent writes 256
// pairs of files named as packs, sorting before the real one's hex name;
// in run 2 it deletes the git dir. The real pack, older than the planted
// ones, must still be among the read-only packs (gitguard keeps the oldest
// past its bound, not the first by name) and survive. Seen failing on
// main's binary (30093d6): run 2 said "only the first 256 packs are
// read-only" and rm -rf took the real pack and the packed commit.
func TestGitHistoryPlantedPacksDoNotCrowdOut(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	packed, _, before := historyRepo(t, h, ws)
	plant := `cd "$2/.git/objects/pack" || exit 1
i=0
while [ $i -lt 256 ]; do
  n=$(printf 'pack-!%03d' $i)
  echo x > $n.pack; echo x > $n.idx
  i=$((i+1))
done
`
	if r := h.run(t, ws, plant, nil, ws); r.code != 0 {
		t.Fatalf("run 1: jail exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	h.trail = filepath.Join(t.TempDir(), "trail.jsonl") // a new trail per run
	r := h.run(t, ws, `cd "$2" && rm -rf .git; exit 0`, nil, ws)
	if r.code != 0 {
		t.Fatalf("run 2: jail exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	after := packSums(t, ws)
	for name, sum := range before {
		if after[name] != sum {
			t.Errorf("pack file %s changed or went (%q, was %q)\nrun 2:\n%s%s", name, after[name], sum, r.stdout, r.stderr)
		}
	}
	h.mustGit(t, ws, "init", "-q")
	if out, err := h.git(ws, "cat-file", "-e", packed); err != nil {
		t.Errorf("packed commit %s lost: %v\n%s\nrun 2:\n%s%s", packed, err, out, r.stdout, r.stderr)
	}
}

// TestGitHistoryObjectsLinkPlanted: in run 1 (a young repository: loose
// objects only, nothing to pin) the agent moves .git/objects aside and
// leaves a symlink in its place; git works through it, and the host's gc
// later packs the history into the symlink's target. In run 2 those packs
// must still be read-only (gitguard follows a link to a pack directory
// inside the writable trees) and survive rm -rf. Seen failing on main's
// binary (30093d6): run 2 protected nothing, said nothing, and rm -rf took
// the packed commit.
func TestGitHistoryObjectsLinkPlanted(t *testing.T) {
	for _, which := range []string{"objects", "objects/pack"} {
		t.Run(strings.ReplaceAll(which, "/", "-"), func(t *testing.T) {
			h := newGitHost(t)
			ws := workspace(t)
			h.mustGit(t, ws, "init", "-q", "-b", "main", ".")
			for _, f := range []string{"a", "b"} {
				os.WriteFile(filepath.Join(ws, f), []byte(f+"\n"), 0o644)
				h.mustGit(t, ws, "add", f)
				h.mustGit(t, ws, "-c", "commit.gpgsign=false", "commit", "-q", "-m", f)
			}
			swap := `cd "$2/.git" || exit 1
mv ` + which + ` moved && ln -s "$PWD/moved" ` + which + ` || exit 1
`
			r1 := h.run(t, ws, swap, nil, ws)
			if r1.code != 0 {
				t.Fatalf("run 1: jail exit %d\nstdout:\n%s\nstderr:\n%s", r1.code, r1.stdout, r1.stderr)
			}
			if _, err := os.Lstat(filepath.Join(ws, ".git", which)); err != nil {
				// The link was taken out at the end of run 1 (a linked
				// objects/ is on the way to objects/info/alternates,
				// watched while absent): the attack stops there, said,
				// and the objects are where the agent moved them.
				if !strings.Contains(r1.stderr, "out of the tree") {
					t.Errorf("run 1: %s gone, not said:\n%s", which, r1.stderr)
				}
				if err := os.Rename(filepath.Join(ws, ".git", "moved"), filepath.Join(ws, ".git", which)); err != nil {
					t.Fatal(err)
				}
				h.mustGit(t, ws, "fsck")
				return
			}
			h.mustGit(t, ws, "gc", "-q")
			head := strings.TrimSpace(h.mustGit(t, ws, "rev-parse", "HEAD"))
			before := map[string]string{}
			files, _ := filepath.Glob(filepath.Join(ws, ".git", "moved", "*pack-*"))
			files2, _ := filepath.Glob(filepath.Join(ws, ".git", "moved", "pack", "pack-*"))
			for _, f := range append(files, files2...) {
				b, _ := os.ReadFile(f)
				before[f] = fmt.Sprintf("%x", sha256.Sum256(b))
			}
			if len(before) < 2 {
				t.Fatalf("host gc wrote no pack through the link")
			}
			h.trail = filepath.Join(t.TempDir(), "trail.jsonl")
			r := h.run(t, ws, `cd "$2" && rm -rf .git/moved .git; exit 0`, nil, ws)
			if r.code != 0 {
				t.Fatalf("run 2: jail exit %d\nstderr:\n%s", r.code, r.stderr)
			}
			for f, sum := range before {
				b, err := os.ReadFile(f)
				if err != nil || fmt.Sprintf("%x", sha256.Sum256(b)) != sum {
					t.Errorf("pack file %s changed or went (%v)\nrun 2:\n%s%s", f, err, r.stdout, r.stderr)
				}
			}
			_ = head
		})
	}
}

// TestGitHistoryAlternatesPlanted: in a repository with no alternates at
// start, the agent copies the objects into the workspace and adds
// objects/info/alternates naming the copy. On the host, an ordinary `git
// gc` would then delete every local pack (repack -l keeps only objects the
// alternate lacks), and a later run deletes the copy: all history gone.
// The added alternates must not be on the host after the run. Seen failing
// on main's binary (30093d6): the file stayed, and the host gc emptied
// objects/pack.
func TestGitHistoryAlternatesPlanted(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	packed, _, before := historyRepo(t, h, ws)
	plant := `cd "$2" || exit 1
mkdir -p .cache .git/objects/info && cp -r .git/objects .cache/objs || exit 1
echo "$PWD/.cache/objs" > .git/objects/info/alternates || exit 1
`
	if r := h.run(t, ws, plant, nil, ws); r.code != 0 {
		t.Fatalf("jail exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	alt := filepath.Join(ws, ".git", "objects", "info", "alternates")
	if _, err := os.Lstat(alt); err == nil {
		t.Errorf("the alternates file the agent added is on the host")
	}
	h.mustGit(t, ws, "gc", "-q")
	os.RemoveAll(filepath.Join(ws, ".cache"))
	if out, err := h.git(ws, "cat-file", "-e", packed); err != nil {
		t.Errorf("after a host gc and the copy deleted, packed commit %s is lost: %v\n%s", packed, err, out)
	}
	if len(packSums(t, ws)) == 0 && len(before) > 0 {
		t.Errorf("the host gc left no local pack")
	}
}

// TestGitHistoryPackLinkedBefore (review16a): a pack with a second name
// in the workspace, made in a run where the pack was not yet read-only
// (the host's gc ran during the run, its pack the only one left; or the
// agent's own gc wrote it). The read-only bind covers the pack's name,
// not the file: in any later run, through
// the other name the agent rewrote the protected pack, every packed
// commit lost. Seen failing on main's binary (the pack's sum changed,
// git fsck failed). The other name is read-only too.
func TestGitHistoryPackLinkedBefore(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	packed, _, before := historyRepo(t, h, ws)
	pk, pd := packOf(before), filepath.Join(ws, ".git", "objects", "pack")
	if err := os.MkdirAll(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{pk, "hl"}, {strings.TrimSuffix(pk, ".pack") + ".idx", "sub/hl.idx"}} {
		if err := os.Link(filepath.Join(pd, l[0]), filepath.Join(ws, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	r := h.run(t, ws, `cd "$2"
chmod u+w hl sub/hl.idx
dd if=/dev/zero of=hl bs=1 seek=12 count=64 conv=notrunc 2>&1
dd if=/dev/zero of=sub/hl.idx bs=1 seek=1000 count=64 conv=notrunc 2>&1
exit 0
`, nil, ws)
	if r.code != 0 {
		t.Fatalf("jail exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	packsKept(t, h, ws, before, packed, r)
}

// TestGitHistoryPackLinkedBetweenRuns: a start that reads only the
// directories changed since the last start's walk for a pack's other names
// (a local clone's pack: it has a name outside the workspace) still finds a
// name made between two runs in a directory the last walk read, its mtime
// put back, and keeps it read-only. The first run records (its directories
// older than the directory cache's margin); the second must not be able to
// rewrite the pack through the new name.
func TestGitHistoryPackLinkedBetweenRuns(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	packed, _, before := historyRepo(t, h, ws)
	pk, pd := packOf(before), filepath.Join(ws, ".git", "objects", "pack")
	// The clone's source: the pack's other name, outside every writable tree.
	if err := os.Link(filepath.Join(pd, pk), filepath.Join(t.TempDir(), "source.pack")); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(ws, "sub", "deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1200 * time.Millisecond) // older than the cache's margin (1 s) at the first run
	if r := h.run(t, ws, "exit 0", nil, ws); r.code != 0 {
		t.Fatalf("first run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	os.Remove(h.trail) // each run writes a trail of its own there
	fi, err := os.Stat(sub)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(pd, pk), filepath.Join(sub, "hl")); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(sub, fi.ModTime(), fi.ModTime()) // the mtime put back: only the ctime tells
	r := h.run(t, ws, `cd "$2"
chmod u+w sub/deep/hl
dd if=/dev/zero of=sub/deep/hl bs=1 seek=12 count=64 conv=notrunc 2>&1
exit 0
`, nil, ws)
	if r.code != 0 {
		t.Fatalf("jail exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	packsKept(t, h, ws, before, packed, r)
}

// packsKept checks that the packs are as before the agent's run r and
// that the packed commit still reads.
func packsKept(t *testing.T, h *gitHost, ws string, before map[string]string, packed string, r result) {
	t.Helper()
	after := packSums(t, ws)
	for name, sum := range before {
		if after[name] != sum {
			t.Errorf("ATTACK WORKED: pack file %s changed through another name\nagent:\n%s%s", name, r.stdout, r.stderr)
		}
	}
	if out, err := h.git(ws, "cat-file", "-p", packed); err != nil {
		t.Errorf("packed commit %s lost: %v\n%s", packed, err, out)
	}
}
