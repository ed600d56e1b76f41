//go:build linux

package tests

// End-to-end tests of what the host's git gc believes is reachable
// (review15f): the packs are read-only inside (githistory), but `git gc` on
// the host drops what it thinks no ref reaches, and two files the agent
// could write steer that walk -- .git/shallow (the listed commits' parents
// are not walked) and objects/info/commit-graph (the parents git reads
// instead of the commits'). With the reflogs expired inside (data the agent
// may rewrite), the user's next ordinary gc deleted the history behind the
// cut, no ref moved, nothing said.

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// reachAttacks: each script ($2 the workspace, $3 the commit to cut below)
// tries every door to its file and goes on when one fails.
var reachAttacks = map[string]string{
	"shallow": `cd "$2" || exit 1
git reflog expire --expire=now --all
echo "$3" > .git/shallow
`,
	// poison.graph is a commit-graph whose entry for HEAD~1 has no parent
	// (made by the test, as the agent would craft it).
	"commit-graph": `cd "$2" || exit 1
git reflog expire --expire=now --all
I=.git/objects/info
chmod u+w $I/commit-graph
cat poison.graph > $I/commit-graph 2>&1
cmp -s poison.graph $I/commit-graph && exit 0
cp poison.graph $I/new && mv -f $I/new $I/commit-graph 2>&1
cmp -s poison.graph $I/commit-graph && exit 0
rm -f $I/new
mv $I $I.old 2>&1; mkdir -p $I && cp poison.graph $I/commit-graph
mkdir -p $I/commit-graphs
cmp -s poison.graph $I/commit-graph && exit 0
exit 0
`,
}

func TestGitHistoryReachability(t *testing.T) {
	for name, script := range reachAttacks {
		t.Run(name, func(t *testing.T) {
			h := newGitHost(t)
			ws := workspace(t)
			root := reachRepo(t, h, ws)
			r := h.run(t, ws, script, nil, ws, strings.TrimSpace(h.mustGit(t, ws, "rev-parse", "HEAD~1")))
			if r.code != 0 {
				t.Fatalf("jail exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if _, err := os.Lstat(filepath.Join(ws, ".git", "shallow")); err == nil {
				t.Errorf("the .git/shallow the agent wrote is on the host\nstderr:\n%s", r.stderr)
			}
			if lost := hostGCLoses(t, h, ws, root); lost != "" {
				t.Errorf("after the user's next git gc the root commit is lost: %s\nagent:\n%s%s", lost, r.stdout, r.stderr)
			}
			// The control: with git's protection lifted the same script
			// loses the root commit (the attack works).
			t.Run("control --allow-git-config", func(t *testing.T) {
				h := newGitHost(t)
				ws := workspace(t)
				root := reachRepo(t, h, ws)
				r := h.run(t, ws, script, []string{"--allow-git-config"}, ws, strings.TrimSpace(h.mustGit(t, ws, "rev-parse", "HEAD~1")))
				if r.code != 0 {
					t.Fatalf("jail exit %d\nstderr:\n%s", r.code, r.stderr)
				}
				if hostGCLoses(t, h, ws, root) == "" {
					t.Errorf("control: root commit %s kept: the attack proves nothing\nagent:\n%s%s", root, r.stdout, r.stderr)
				}
			})
		})
	}
}

// reachRepo makes a repository of three commits, all packed by a host gc
// with a commit-graph, and poison.graph beside it: that graph with HEAD~1's
// parent taken out. It returns the root commit.
func reachRepo(t *testing.T, h *gitHost, ws string) string {
	t.Helper()
	h.mustGit(t, ws, "init", "-q", "-b", "main", ".")
	for _, f := range []string{"a", "b", "c"} {
		os.WriteFile(filepath.Join(ws, f), []byte(f+"\n"), 0o644)
		h.mustGit(t, ws, "add", f)
		h.mustGit(t, ws, "-c", "commit.gpgsign=false", "commit", "-q", "-m", f)
	}
	h.mustGit(t, ws, "-c", "gc.writeCommitGraph=true", "gc", "-q")
	h.mustGit(t, ws, "commit-graph", "write", "--reachable")
	graph, err := os.ReadFile(filepath.Join(ws, ".git", "objects", "info", "commit-graph"))
	if err != nil {
		t.Fatal(err)
	}
	mid, _ := hex.DecodeString(strings.TrimSpace(h.mustGit(t, ws, "rev-parse", "HEAD~1")))
	if err := os.WriteFile(filepath.Join(ws, "poison.graph"), cutParent(t, graph, mid), 0o644); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(h.mustGit(t, ws, "rev-list", "--max-parents=0", "HEAD"))
}

// cutParent returns commit-graph g with commit id's first parent set to
// none (GRAPH_PARENT_NONE) and the trailing checksum made again.
func cutParent(t *testing.T, g, id []byte) []byte {
	t.Helper()
	g = bytes.Clone(g)
	if len(g) < 8 || string(g[:4]) != "CGPH" {
		t.Fatalf("not a commit-graph")
	}
	chunks := map[string]int{}
	for i := 0; i <= int(g[6]); i++ {
		e := g[8+12*i:]
		chunks[string(e[:4])] = int(binary.BigEndian.Uint64(e[4:12]))
	}
	n := int(binary.BigEndian.Uint32(g[chunks["OIDF"]+255*4:]))
	for i := 0; i < n; i++ {
		if bytes.Equal(g[chunks["OIDL"]+20*i:chunks["OIDL"]+20*i+20], id) {
			binary.BigEndian.PutUint32(g[chunks["CDAT"]+36*i+20:], 0x70000000)
			sum := sha1.Sum(g[:len(g)-20])
			copy(g[len(g)-20:], sum[:])
			return g
		}
	}
	t.Fatalf("commit %x not in the commit-graph", id)
	return nil
}

// hostGCLoses ages the repository's objects a month (the user's repository
// is older than gc's two weeks of grace), runs an ordinary `git gc` on the
// host and says how root is lost ("" if it reads).
func hostGCLoses(t *testing.T, h *gitHost, ws, root string) string {
	t.Helper()
	old := time.Now().Add(-30 * 24 * time.Hour)
	filepath.Walk(filepath.Join(ws, ".git", "objects"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	h.git(ws, "gc", "-q")
	if out, err := h.git(ws, "cat-file", "-e", root); err != nil {
		return err.Error() + ": " + out
	}
	return ""
}

// TestGitHistoryPlantedPacksBeforeGC: ctime ranks the packs past 256, but
// the agent can plant its 256 pairs before the real pack exists: in run 1
// (a repository whose history is still loose, or packed later) it writes
// them, the user's next gc on the host packs the history into a pack
// newer than every one of them, and run 2 kept the 256 planted ones
// read-only and left the real one deletable: rm -rf .git took it. Seen
// failing on main's binary (77c4d85): the packed commit was lost.
func TestGitHistoryPlantedPacksBeforeGC(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	h.mustGit(t, ws, "init", "-q", "-b", "main", ".")
	for _, f := range []string{"a", "b"} {
		os.WriteFile(filepath.Join(ws, f), []byte(f+"\n"), 0o644)
		h.mustGit(t, ws, "add", f)
		h.mustGit(t, ws, "-c", "commit.gpgsign=false", "commit", "-q", "-m", f)
	}
	// Valid packs (of a scratch repository's objects) with a .keep each:
	// the host's gc neither fails on them nor deletes them.
	plant := `S="$2/.scratch" && git init -q "$S" && cd "$S" || exit 1
echo x > x && git add x && git -c user.name=a -c user.email=a@b commit -q -m x && git repack -q -a -d || exit 1
P=$(ls .git/objects/pack/pack-*.pack) && P=${P%.pack}
mkdir -p "$2/.git/objects/pack" || exit 1
i=0
while [ $i -lt 256 ]; do
  n="$2/.git/objects/pack/$(printf 'pack-%040x' $i)"
  cp $P.pack $n.pack && cp $P.idx $n.idx && : > $n.keep || exit 1
  i=$((i+1))
done
cd "$2" && rm -rf "$S"
`
	if r := h.run(t, ws, plant, nil, ws); r.code != 0 {
		t.Fatalf("run 1: jail exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	// The user's commit after run 1, packed by the user's gc: never loose
	// at a start, so not in the git-kept store either.
	os.WriteFile(filepath.Join(ws, "c"), []byte("c\n"), 0o644)
	h.mustGit(t, ws, "add", "c")
	h.mustGit(t, ws, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "c")
	h.mustGit(t, ws, "gc", "-q")
	packed := strings.TrimSpace(h.mustGit(t, ws, "rev-parse", "HEAD"))
	h.trail = filepath.Join(t.TempDir(), "trail.jsonl") // a new trail per run
	r := h.run(t, ws, `cd "$2" && rm -rf .git; exit 0`, nil, ws)
	if r.code != 0 {
		t.Fatalf("run 2: jail exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	h.mustGit(t, ws, "init", "-q")
	// The recovery the end of the run names, if it names one.
	if m := regexp.MustCompile(`fetch (\S+) '([^']+)'`).FindStringSubmatch(r.stderr); m != nil {
		h.git(ws, "fetch", "-q", m[1], m[2])
	}
	if out, err := h.git(ws, "cat-file", "-e", packed); err != nil {
		t.Errorf("packed commit %s lost: %v\n%s\nrun 2:\n%s", packed, err, out, notRm(r.stderr))
	}
}

// notRm is stderr without rm's refusals.
func notRm(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "rm: ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
