//go:build linux

package tests

// End-to-end tests of the store of loose objects and refs (session 15, lane
// githistory2, package gitkeep): what the read-only packs leave the agent
// able to delete -- loose objects (commits since the last gc) and refs --
// is kept at start in jail's state directory, and the documented command
// fetches it back after the agent deleted it all.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// keptRepo makes a repository with no pack: two commits on main and one
// on a side branch, all loose objects (the unpushed work). It returns the
// main and side commits.
func keptRepo(t *testing.T, h *gitHost, ws string) (main, side string) {
	t.Helper()
	h.mustGit(t, ws, "init", "-q", "-b", "main", ".")
	commit := func(f string) {
		os.WriteFile(filepath.Join(ws, f), []byte(f+"\n"), 0o644)
		h.mustGit(t, ws, "add", f)
		h.mustGit(t, ws, "-c", "commit.gpgsign=false", "commit", "-q", "-m", f)
	}
	commit("a")
	commit("b")
	h.mustGit(t, ws, "checkout", "-q", "-b", "side")
	commit("s")
	h.mustGit(t, ws, "checkout", "-q", "main")
	return strings.TrimSpace(h.mustGit(t, ws, "rev-parse", "main")), strings.TrimSpace(h.mustGit(t, ws, "rev-parse", "side"))
}

// keptAttack deletes every loose object, both branches and the git dir.
const keptAttack = `cd "$2"
rm -rf .git/objects/??
git update-ref -d refs/heads/side
git update-ref -d refs/heads/main
git reflog expire --expire=now --all
git gc -q --prune=now
rm -rf .git 2>/dev/null
exit 0
`

// recoverKept runs the README's recovery: git init (the agent deleted the
// git dir), then a fetch from the one store in the state directory whose
// alternates names the workspace's objects.
func recoverKept(t *testing.T, h *gitHost, ws string) (string, error) {
	t.Helper()
	h.mustGit(t, ws, "init", "-q")
	alts, _ := filepath.Glob(filepath.Join(h.state, "jail", "git-kept", "*", "objects", "info", "alternates"))
	for _, a := range alts {
		if b, _ := os.ReadFile(a); strings.TrimSpace(string(b)) == filepath.Join(ws, ".git", "objects") {
			return h.git(ws, "fetch", "-q", filepath.Dir(filepath.Dir(filepath.Dir(a))), "+refs/*:refs/jail-kept/*")
		}
	}
	return "", os.ErrNotExist
}

// TestGitKeptLooseAndRefs: a deleted branch is said at the run's end; after
// a run planted a ref name git refuses and the next deleted the loose
// objects, both branches and the git dir, the end says so with the fetch
// command, and that fetch brings back both branches at their start
// commits. The planted name seen failing the fetch before gitkeep's
// validRef ("packed refname is dangerous"). Seen failing on main's binary (30093d6): no
// store, nothing to fetch, the commits are gone.
func TestGitKeptLooseAndRefs(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	main, side := keptRepo(t, h, ws)
	// A run that deletes one branch only: the end names it.
	r := h.run(t, ws, "git update-ref -d refs/heads/side\n", nil, ws)
	if !strings.Contains(r.stderr, "this run deleted the ref refs/heads/side of ") {
		t.Errorf("no end notice of the deleted branch:\n%s", r.stderr)
	}
	h.mustGit(t, ws, "branch", "side", side)
	// A run that plants a ref name git refuses: recorded at the next
	// start, it would make every fetch from the store fail.
	os.Remove(h.trail) // one trail a run
	r = h.run(t, ws, `printf '%s refs/heads/../../x\n' "$(git rev-parse HEAD)" >> .git/packed-refs`+"\n", nil, ws)
	if r.code != 0 {
		t.Fatalf("plant: jail exit %d\n%s", r.code, r.stderr)
	}
	os.Remove(h.trail)
	r = h.run(t, ws, keptAttack, nil, ws)
	if r.code != 0 {
		t.Fatalf("jail exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := h.git(ws, "cat-file", "-e", side); err == nil {
		t.Fatalf("the attack left the side commit in the workspace: it proves nothing\n%s%s", r.stdout, r.stderr)
	}
	// The end said it, with the command.
	if want := "this run deleted the git dir of " + filepath.Join(ws, ".git"); !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "fetch "+filepath.Join(h.state, "jail", "git-kept")) {
		t.Errorf("no end notice %q with the fetch command:\n%s", want, r.stderr)
	}
	if out, err := recoverKept(t, h, ws); err != nil {
		t.Fatalf("recovery fetch: %v\n%s\nagent:\n%s%s", err, out, r.stdout, r.stderr)
	}
	for ref, want := range map[string]string{"refs/jail-kept/heads/main": main, "refs/jail-kept/heads/side": side, "refs/jail-kept/jail/HEAD": main} {
		if got := strings.TrimSpace(h.mustGit(t, ws, "rev-parse", ref)); got != want {
			t.Errorf("%s is %q, want %s", ref, got, want)
		}
	}
	if out, err := h.git(ws, "fsck", "--strict"); err != nil {
		t.Errorf("fsck after the recovery: %v\n%s", err, out)
	}

	// The control: with git's protection lifted (no store kept), the same
	// attack loses the commits for good.
	t.Run("control --allow-git-config", func(t *testing.T) {
		h := newGitHost(t)
		ws := workspace(t)
		_, side := keptRepo(t, h, ws)
		r := h.run(t, ws, keptAttack, []string{"--allow-git-config"}, ws)
		if r.code != 0 {
			t.Fatalf("jail exit %d\nstderr:\n%s", r.code, r.stderr)
		}
		recoverKept(t, h, ws)
		if _, err := h.git(ws, "cat-file", "-e", side); err == nil {
			t.Errorf("control: side commit %s still there: the attack proves nothing\nagent:\n%s%s", side, r.stdout, r.stderr)
		}
	})
}

// TestGitKeptPlantedFifo: the agent replaces .git/packed-refs with a FIFO
// (or links it to /dev/zero). The store's reads at the run's end and at the
// next start must neither block nor grow without end: both runs end, the
// second one runs its command. Seen failing on main's binary (0c3548a): the
// first run's end hung (SIGTERM did not end it), every later start hung;
// the /dev/zero link: runtime: out of memory.
func TestGitKeptPlantedFifo(t *testing.T) {
	for name, plant := range map[string]string{
		"fifo":      "rm -f .git/packed-refs; mkfifo .git/packed-refs",
		"/dev/zero": "rm -f .git/packed-refs; ln -s /dev/zero .git/packed-refs",
	} {
		t.Run(name, func(t *testing.T) {
			h := newGitHost(t)
			ws := workspace(t)
			keptRepo(t, h, ws)
			o := runOpts{dir: ws, env: h.env(), timeout: 30 * time.Second}
			r := run(t, o, "--", "/bin/sh", "-c", plant+" && echo planted")
			if r.code != 0 || !strings.Contains(r.stdout, "planted") {
				t.Fatalf("plant run: exit %d (137: killed at the timeout, the end hung)\n%s%s", r.code, r.stdout, r.stderr)
			}
			r = run(t, o, "--", "/bin/echo", "second run")
			if r.code != 0 || !strings.Contains(r.stdout, "second run") {
				t.Fatalf("next start: exit %d (137: killed at the timeout, the start hung)\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// keptCopies counts the object copies of the stores under the state
// directory and those whose object the workspace (the git dir the store's
// alternates names) no longer has.
func keptCopies(t *testing.T, h *gitHost) (all, own int) {
	t.Helper()
	ps, _ := filepath.Glob(filepath.Join(h.state, "jail", "git-kept", "*", "objects", "??", "*"))
	for _, p := range ps {
		st := filepath.Dir(filepath.Dir(filepath.Dir(p)))
		alt, _ := os.ReadFile(filepath.Join(st, "objects", "info", "alternates"))
		all++
		if _, err := os.Lstat(filepath.Join(strings.TrimSpace(string(alt)), filepath.Base(filepath.Dir(p)), filepath.Base(p))); err != nil {
			own++
		}
	}
	return all, own
}

// TestGitKeptPruned (lane gitkeepgc): after the host's git gc packed the
// loose objects, the next run's end frees the store's copies (each found
// in the repository's own pack), and the store still gives the history
// back; objects the agent deleted (no pack holds them) stay. Seen failing
// on main's binary (77c4d85): the copies stayed after the run.
func TestGitKeptPruned(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	main, side := keptRepo(t, h, ws)
	if r := h.run(t, ws, "true\n", nil, ws); r.code != 0 {
		t.Fatalf("jail exit %d\n%s", r.code, r.stderr)
	}
	n, own := keptCopies(t, h)
	if n < 9 || own != 0 {
		t.Fatalf("store: %d copies, %d its own", n, own)
	}
	h.mustGit(t, ws, "gc", "-q")
	if _, own := keptCopies(t, h); own != n {
		t.Fatalf("after the host's gc %d of %d copies are the store's own", own, n)
	}
	os.Remove(h.trail)
	if r := h.run(t, ws, "true\n", nil, ws); r.code != 0 {
		t.Fatalf("jail exit %d\n%s", r.code, r.stderr)
	}
	if all, _ := keptCopies(t, h); all != 0 {
		t.Errorf("%d of %d copies left after a run following the host's gc", all, n)
	}

	// New loose work, then an agent that deletes it: kept.
	os.WriteFile(filepath.Join(ws, "c"), []byte("c\n"), 0o644)
	h.mustGit(t, ws, "add", "c")
	h.mustGit(t, ws, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "c")
	newMain := strings.TrimSpace(h.mustGit(t, ws, "rev-parse", "main"))
	os.Remove(h.trail)
	if r := h.run(t, ws, keptAttack, nil, ws); r.code != 0 {
		t.Fatalf("jail exit %d\n%s", r.code, r.stderr)
	}
	if all, own := keptCopies(t, h); all == 0 || own != all {
		t.Errorf("the deleted commit's copies: %d, %d the store's own", all, own)
	}
	if out, err := recoverKept(t, h, ws); err != nil {
		t.Fatalf("recovery fetch: %v\n%s", err, out)
	}
	for ref, want := range map[string]string{"refs/jail-kept/heads/main": newMain, "refs/jail-kept/heads/side": side} {
		if got := strings.TrimSpace(h.mustGit(t, ws, "rev-parse", ref)); got != want {
			t.Errorf("%s is %q, want %s", ref, got, want)
		}
	}
	if got := strings.TrimSpace(h.mustGit(t, ws, "rev-parse", "refs/jail-kept/heads/main~1")); got != main {
		t.Errorf("main~1 is %q, want %s", got, main)
	}
}

// TestGitKeptLineAfterTrailFlood: the end's line naming a ref the agent
// deleted (with the command that fetches it back) is jail's own, said
// once the sandbox is gone; an agent that first spent the trail's budget
// (failed execs in a loop) had it counted, not written: the trail, and `jail
// audit`, did not say what to fetch back (trail16). The end has a room of
// its own in the budget. Seen failing on main's binary (e4c1d18), as root
// and as jailtest: no notice of the deleted ref in the trail.
func TestGitKeptLineAfterTrailFlood(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	keptRepo(t, h, ws)
	r := h.run(t, ws, "/usr/bin/python3 - 100 2 8000 <<'PY'\n"+failedExecs+"PY\n"+
		// Then small ones: the ordinary part spent to its last bytes.
		"/usr/bin/python3 - 6000 0 1 <<'PY'\n"+failedExecs+"PY\ngit update-ref -d refs/heads/side\n",
		[]string{"--audit-max-size", "1M"}, ws)
	mustCode(t, r, 0)
	const want = "this run deleted the ref refs/heads/side of "
	if !strings.Contains(r.stderr, want) {
		t.Fatalf("no end notice of the deleted branch on stderr: the test proves nothing\n%s", r.stderr)
	}
	size, evs := trailSize(t, h.trail)
	if len(auditOf(evs, "dropped")) == 0 {
		t.Fatalf("the flood spent no budget (trail %d bytes): the test proves nothing", size)
	}
	found := false
	for _, e := range auditOf(evs, "notice") {
		found = found || strings.Contains(e.str("text"), want)
	}
	if !found {
		t.Errorf("ATTACK WORKED: the end's line of the deleted ref was counted, not written (trail %d bytes)", size)
	}
	if s := auditCLI(t, h.trail); !strings.Contains(s.stdout, want) {
		t.Errorf("jail audit does not show the end's line of the deleted ref:\n%.2000s", s.stdout)
	}
}

// TestGitKeptOverwrittenInPlace (lane gitkeep3): the agent makes every
// loose object writable and writes other bytes into the same inode (the
// directory is unchanged: no unlink, no new name). The store kept at the
// start still gives back both branches, fsck-clean, into a new
// repository. Seen failing on main's binary (e21fcff): the store's hard
// links were the overwritten inodes ("fatal: loose object ... is
// corrupt", the fetch failed).
func TestGitKeptOverwrittenInPlace(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	main, side := keptRepo(t, h, ws)
	r := h.run(t, ws, `cd "$2"
for f in .git/objects/??/*; do chmod u+w "$f" && printf 'not the object' > "$f"; done
git cat-file -p HEAD >/dev/null 2>&1 && echo intact || echo overwritten
`, nil, ws)
	if r.code != 0 || !strings.Contains(r.stdout, "overwritten") {
		t.Fatalf("the attack did not overwrite the objects (exit %d): it proves nothing\n%s%s", r.code, r.stdout, r.stderr)
	}
	var store string
	alts, _ := filepath.Glob(filepath.Join(h.state, "jail", "git-kept", "*", "objects", "info", "alternates"))
	for _, a := range alts {
		if b, _ := os.ReadFile(a); strings.TrimSpace(string(b)) == filepath.Join(ws, ".git", "objects") {
			store = filepath.Dir(filepath.Dir(filepath.Dir(a)))
		}
	}
	if store == "" {
		t.Fatal("no store")
	}
	rec := filepath.Join(t.TempDir(), "rec")
	h.mustGit(t, filepath.Dir(rec), "init", "-q", rec)
	if out, err := h.git(rec, "fetch", "-q", store, "+refs/*:refs/jail-kept/*"); err != nil {
		t.Fatalf("recovery fetch: %v\n%s", err, out)
	}
	for ref, want := range map[string]string{"refs/jail-kept/heads/main": main, "refs/jail-kept/heads/side": side} {
		if got := strings.TrimSpace(h.mustGit(t, rec, "rev-parse", ref)); got != want {
			t.Errorf("%s is %q, want %s", ref, got, want)
		}
	}
	if out, err := h.git(rec, "fsck", "--strict"); err != nil {
		t.Errorf("fsck after the recovery: %v\n%s", err, out)
	}
}

// TestGitKeptMovedRef (lane gitkeep3): a run that commits says nothing of
// git; a run that resets main to an older commit and amends side says
// both refs moved, with the fetch command, and that fetch (after a later
// start recorded the new values) brings their start commits back under
// refs/jail-kept/jail/moved/. Seen failing on main's binary (e21fcff): no
// line, and the later start's record named the new commits only.
func TestGitKeptMovedRef(t *testing.T) {
	h := newGitHost(t)
	ws := workspace(t)
	main, side := keptRepo(t, h, ws)
	r := h.run(t, ws, `cd "$2"
echo c > c && git add c && git -c commit.gpgsign=false -c user.name=a -c user.email=a@a commit -q -m c
`, nil, ws)
	if r.code != 0 || strings.Contains(r.stderr, "this run") {
		t.Fatalf("a commit inside: exit %d, said:\n%s", r.code, r.stderr)
	}
	main2 := strings.TrimSpace(h.mustGit(t, ws, "rev-parse", "main"))
	if main2 == main {
		t.Fatal("the commit inside did not land")
	}
	os.Remove(h.trail)
	r = h.run(t, ws, `cd "$2"
git reset -q --hard HEAD~2
git checkout -q side && git -c commit.gpgsign=false -c user.name=a -c user.email=a@a commit -q --amend -m amended && git checkout -q main
`, nil, ws)
	if want := "this run moved 2 refs off their start commits (not fast-forwards: refs/heads/main, refs/heads/side) of " + filepath.Join(ws, ".git"); r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d, no %q:\n%s", r.code, want, r.stderr)
	}
	os.Remove(h.trail)
	if r := h.run(t, ws, "true\n", nil, ws); r.code != 0 {
		t.Fatalf("later run: exit %d\n%s", r.code, r.stderr)
	}
	if out, err := recoverKept(t, h, ws); err != nil {
		t.Fatalf("recovery fetch: %v\n%s", err, out)
	}
	for ref, want := range map[string]string{"refs/jail-kept/jail/moved/heads/main": main2, "refs/jail-kept/jail/moved/heads/side": side} {
		if got, _ := h.git(ws, "rev-parse", "-q", "--verify", ref); strings.TrimSpace(got) != want {
			t.Errorf("%s is %q, want %s", ref, got, want)
		}
	}
}
