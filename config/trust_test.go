package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/internal/termsafe"
	"github.com/jail-sandbox/jail/policy"
)

func TestTrustStore(t *testing.T) {
	w := newWorld(t)
	proj := w.write(filepath.Join(w.ws, ProjectFileName), "memory = \"1G\"\n")
	data, _ := os.ReadFile(proj)
	if err := w.trust.Check(proj, data); !errors.Is(err, ErrUntrusted) {
		t.Fatalf("Check before trust: %v", err)
	}
	h, err := w.trust.Trust(proj, time.Unix(0, 0))
	if err != nil || len(h) != 64 {
		t.Fatalf("Trust: %q %v", h, err)
	}
	if err := w.trust.Check(proj, data); err != nil {
		t.Fatalf("Check after trust: %v", err)
	}
	// Another path with the same bytes is not trusted: records are per file.
	other := w.write(filepath.Join(w.home, "other", ProjectFileName), string(data))
	if err := w.trust.Check(other, data); !errors.Is(err, ErrUntrusted) {
		t.Errorf("same bytes elsewhere: %v", err)
	}
	if err := w.trust.Check(proj, append(data, ' ')); !errors.Is(err, ErrChanged) {
		t.Errorf("changed bytes: %v", err)
	}
	fi, err := os.Stat(w.trust.Path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("trust store mode %v, %v; want 0600", fi.Mode(), err)
	}
	// A file jail would refuse is not trusted.
	bad := w.write(filepath.Join(w.home, "bad", ProjectFileName), "workspace = \"/\"\n")
	if _, err := w.trust.Trust(bad, time.Now()); err == nil {
		t.Error("trusted a file that does not load")
	}
	w.write(proj, "memory = \"2G\"\n")
	list, err := w.trust.List()
	if err != nil || len(list) != 1 || list[0].Path != proj || list[0].State != "changed" {
		t.Errorf("List: %+v %v", list, err)
	}
	if ok, err := w.trust.Revoke(proj); !ok || err != nil {
		t.Errorf("Revoke: %v %v", ok, err)
	}
	if ok, _ := w.trust.Revoke(proj); ok {
		t.Error("revoked twice")
	}
	// A damaged store is an error, not an empty one.
	os.WriteFile(w.trust.Path, []byte("{"), 0o600)
	if _, err := w.trust.Trust(proj, time.Now()); err == nil {
		t.Error("a damaged trust store was overwritten")
	}
}

// A trusted project file that is gone refuses the run, as a changed one
// does: the agent (whose workspace holds it) must not drop the project's
// restrictions for the next run by deleting it. Seen failing on main
// (ad705ff): Resolve skipped the missing file and ran without it.
func TestTrustedProjectFileGone(t *testing.T) {
	w := newWorld(t)
	proj := w.write(filepath.Join(w.ws, ProjectFileName), "deny = [\"secret.txt\"]\n")
	if _, err := w.trust.Trust(proj, time.Now()); err != nil {
		t.Fatal(err)
	}
	if r, err := w.resolve(Request{}); err != nil || len(r.Policy.Deny) != 1 {
		t.Fatalf("trusted file: %+v %v", r, err)
	}
	os.Remove(proj)
	_, err := w.resolve(Request{})
	var te *TrustError
	if !errors.As(err, &te) || !errors.Is(err, ErrGone) || te.File != proj {
		t.Fatalf("trusted file gone: %v, want a TrustError ErrGone for %s", err, proj)
	}
	no := true
	if _, err := w.resolve(Request{NoProject: &no}); err != nil {
		t.Fatalf("--no-project-file: %v", err)
	}
	// A project that never had one is unaffected.
	other := filepath.Join(w.home, "other")
	os.MkdirAll(other, 0o755)
	w.env.Cwd = other
	if _, err := w.resolve(Request{}); err != nil {
		t.Fatalf("a project without a file: %v", err)
	}
	w.env.Cwd = w.ws
	if ok, err := w.trust.Revoke(proj); !ok || err != nil {
		t.Fatalf("Revoke: %v %v", ok, err)
	}
	if _, err := w.resolve(Request{}); err != nil {
		t.Fatalf("after revoke: %v", err)
	}
}

// Without a config directory (no absolute HOME nor XDG_CONFIG_HOME) nothing
// is trusted: the store is not ./trust.json, which lies in the workspace
// the agent writes. Seen failing on main (ad705ff): a trust.json the agent
// wrote beside its own .jail.toml made the next run read it.
func TestNoConfigDirTrustsNothing(t *testing.T) {
	w := newWorld(t)
	proj := w.write(filepath.Join(w.ws, ProjectFileName), "setenv = [\"FROM_PROJECT=agent\"]\n")
	data, _ := os.ReadFile(proj)
	w.write(filepath.Join(w.ws, "trust.json"), `{"version":1,"files":{"`+proj+`":{"sha256":"`+hashOf(data)+`","trusted":"2026-01-01T00:00:00Z"}}}`+"\n")
	wd, _ := os.Getwd()
	if err := os.Chdir(w.ws); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chdir(wd) })
	env := w.env
	env.ConfigDir, env.Home = "", ""
	r, err := Resolve(Request{Env: env, Profiles: w.profile})
	if err == nil || !errors.Is(err, policy.ErrInvalid) || !strings.Contains(err.Error(), "HOME") {
		t.Fatalf("no config directory: %+v %v, want the project file refused (set HOME)", r, err)
	}
	os.Remove(proj)
	if _, err := Resolve(Request{Env: env, Profiles: w.profile}); err != nil {
		t.Fatalf("no config directory, no project file: %v", err)
	}
}

// TrustShown says what the bytes it hashed set, one value a line with its
// line number, values inert on a terminal (trustfollow): a change an agent
// made after the user read the file is seen in jail trust's output.
func TestTrustShown(t *testing.T) {
	w := newWorld(t)
	proj := w.write(filepath.Join(w.ws, ProjectFileName), "memory = \"1G\"\n\nwrite = [\"a\", \"b\\u001b]0;x\\u0007\\u009b\\u202e\"]\nallow-local-tcp = true\npids = 7\n")
	h, sets, err := w.trust.TrustShown(proj, time.Unix(0, 0))
	if err != nil || len(h) != 64 {
		t.Fatalf("TrustShown: %q %v", h, err)
	}
	want := []string{
		`line 1: memory = "1G"`,
		`line 3: write = "a"`,
		`line 3: write = "b\u001b]0;x\u0007\u009b\u202e"`,
		`line 4: allow-local-tcp = true`,
		`line 5: pids = 7`,
	}
	if strings.Join(sets, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sets:\n%s\nwant:\n%s", strings.Join(sets, "\n"), strings.Join(want, "\n"))
	}
	for _, l := range sets {
		if strings.ContainsFunc(l, termsafe.Control) {
			t.Errorf("a control reaches the terminal: %q", l)
		}
	}
	if err := w.trust.Check(proj, []byte("memory = \"1G\"\n\nwrite = [\"a\", \"b\\u001b]0;x\\u0007\\u009b\\u202e\"]\nallow-local-tcp = true\npids = 7\n")); err != nil {
		t.Fatalf("the bytes shown are not the bytes trusted: %v", err)
	}
	empty := w.write(filepath.Join(w.home, "e", ProjectFileName), "version = 1\n")
	if _, sets, err := w.trust.TrustShown(empty, time.Unix(0, 0)); err != nil || len(sets) != 0 {
		t.Fatalf("empty: %q %v", sets, err)
	}
}

// A record is found by its directory's identity as well as its path: the
// project reached by another name (here moved; a bind mount in
// TestTrustBindMount) is the same project. Seen failing on main
// (1450a8d): with the trusted file deleted, the run from the moved
// directory resolved with no error and without the file's deny.
func TestTrustFoundByIdentity(t *testing.T) {
	w := newWorld(t)
	proj := w.write(filepath.Join(w.ws, ProjectFileName), "deny = [\"secret.txt\"]\n")
	data, _ := os.ReadFile(proj)
	if _, err := w.trust.Trust(proj, time.Now()); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(w.home, "moved")
	if err := os.Rename(w.ws, moved); err != nil {
		t.Fatal(err)
	}
	mproj := filepath.Join(moved, ProjectFileName)
	// Trust is not given by identity alone: the record's own path no
	// longer reaches the directory, and a stored identity whose
	// directory is gone may be an inode reused by a directory the agent
	// made (TestTrustBindMount: given while the record's path is alive).
	if err := w.trust.Check(mproj, data); !errors.Is(err, ErrUntrusted) {
		t.Errorf("same bytes, the record's directory gone: %v, want ErrUntrusted", err)
	}
	if err := w.trust.Check(mproj, append(data, ' ')); !errors.Is(err, ErrChanged) {
		t.Errorf("changed, by another path: %v", err)
	}
	// Narrowed below it by a planted .git, reached by the new name.
	sub := filepath.Join(moved, "sub")
	w.write(filepath.Join(sub, ".git", "HEAD"), "ref: refs/heads/main\n")
	w.env.Cwd = sub
	_, err := w.resolve(Request{})
	var te *TrustError
	// Found by identity alone, its record's path gone: refused, not
	// applied (and not skipped).
	if !errors.As(err, &te) || !errors.Is(err, ErrUntrusted) || te.File != mproj {
		t.Fatalf("narrowed below the moved project: %v, want ErrUntrusted naming %s", err, mproj)
	}
	// Gone, reached by the new name.
	os.Remove(mproj)
	w.env.Cwd = moved
	if _, err := w.resolve(Request{}); !errors.Is(err, ErrGone) {
		t.Fatalf("trusted file gone, by another path: %v, want ErrGone", err)
	}
	// Revoked by the name the refusal gave.
	if ok, err := w.trust.Revoke(mproj); !ok || err != nil {
		t.Fatalf("Revoke by another path: %v %v", ok, err)
	}
	if _, err := w.resolve(Request{}); err != nil {
		t.Fatalf("after revoke: %v", err)
	}
	// A file of another name in the same directory is another record.
	w.write(mproj, "deny = [\"secret.txt\"]\n")
	if _, err := w.trust.Trust(mproj, time.Now()); err != nil {
		t.Fatal(err)
	}
	other := w.write(filepath.Join(moved, "other.toml"), string(data))
	if err := w.trust.Check(other, data); !errors.Is(err, ErrUntrusted) {
		t.Errorf("another name in the same directory: %v", err)
	}
}

// FuzzParseStore: the store's parser never panics, keeps only absolute
// clean keys, and what it keeps survives a save and a parse unchanged.
func FuzzParseStore(f *testing.F) {
	f.Add([]byte(`{"version":1,"files":{"/p/.jail.toml":{"sha256":"ab","trusted":"2026-01-01T00:00:00Z","dev":64768,"ino":12}}}`))
	f.Add([]byte(`{"version":1,"files":{"rel/.jail.toml":{"sha256":"ab"},"/a/../b":{}}}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":1,"files":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tf, err := parseStore(data)
		if err != nil {
			return
		}
		if tf.Version != 1 || tf.Files == nil {
			t.Fatalf("parsed %+v", tf)
		}
		for k := range tf.Files {
			if !filepath.IsAbs(k) || filepath.Clean(k) != k {
				t.Fatalf("kept key %q", k)
			}
		}
		out, err := json.Marshal(tf)
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseStore(out)
		if err != nil || len(again.Files) != len(tf.Files) {
			t.Fatalf("round trip: %v %d != %d", err, len(again.Files), len(tf.Files))
		}
		for k, r := range tf.Files {
			if a := again.Files[k]; a.SHA256 != r.SHA256 || a.Dev != r.Dev || a.Ino != r.Ino || !a.Trusted.Equal(r.Trusted) {
				t.Fatalf("round trip of %q: %+v != %+v", k, a, r)
			}
		}
	})
}

// A stored identity that went stale while the record's path still leads to
// its directory (btrfs numbers a subvolume's device anew at each mount; its
// top directory is always inode 256) is not used: the live one is, and an
// unrelated directory that now has the stale identity is not refused.
func TestTrustStaleIdentity(t *testing.T) {
	w := newWorld(t)
	proj := w.write(filepath.Join(w.ws, ProjectFileName), "deny = [\"secret.txt\"]\n")
	if _, err := w.trust.Trust(proj, time.Now()); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(w.home, "other")
	w.write(filepath.Join(other, "sub", ".git", "HEAD"), "ref: refs/heads/main\n")
	id, ok := idOf(other)
	if !ok {
		t.Fatal("stat other")
	}
	tf, err := w.trust.load()
	if err != nil {
		t.Fatal(err)
	}
	rec := tf.Files[proj]
	rec.Dev, rec.Ino = id.dev, id.ino // as if stale, now another directory's
	tf.Files[proj] = rec
	if err := w.trust.save(tf); err != nil {
		t.Fatal(err)
	}
	w.env.Cwd = filepath.Join(other, "sub")
	if _, err := w.resolve(Request{}); err != nil {
		t.Errorf("a run below the directory a stale identity names: %v", err)
	}
	w.env.Cwd = other
	if _, err := w.resolve(Request{}); err != nil {
		t.Errorf("a run in the directory a stale identity names: %v", err)
	}
	// Once the record's path is gone, the stored identity is what is left.
	if err := os.Rename(w.ws, w.ws+".moved"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.resolve(Request{}); !errors.Is(err, ErrGone) {
		t.Errorf("record's path gone, stored identity: %v, want ErrGone", err)
	}
}

// Two jail trust (or trust and revoke) at once must not lose one: each
// reads the store, changes its record and renames a new store in. Without
// a lock the later rename drops the other's change; a lost revoke leaves a
// file trusted that the user revoked. Seen failing on main (62db6d0):
// "kept 3 of 16 records" and "the revoked record is back".
func TestTrustConcurrent(t *testing.T) {
	w := newWorld(t)
	const n = 16
	var files []string
	for i := range n {
		files = append(files, w.write(filepath.Join(w.home, "p", strconv.Itoa(i), ProjectFileName), "memory = \"1G\"\n"))
	}
	revoked := files[0]
	if _, err := w.trust.Trust(revoked, time.Now()); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each its own store value, as separate processes have.
			s := &TrustStore{Path: w.trust.Path}
			var err error
			if i == 0 {
				_, err = s.Revoke(f)
			} else {
				_, err = s.Trust(f, time.Now())
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	list, err := w.trust.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != n-1 {
		t.Errorf("kept %d of %d records", len(list), n-1)
	}
	for _, l := range list {
		if l.Path == revoked {
			t.Error("the revoked record is back")
		}
	}
	// Nothing left beside the store (no temporary files) but its lock.
	ents, _ := os.ReadDir(filepath.Dir(w.trust.Path))
	for _, e := range ents {
		if e.Name() != filepath.Base(w.trust.Path) && e.Name() != trustLockName {
			t.Errorf("left in the config directory: %s", e.Name())
		}
	}
}

// A project file the agent made a FIFO, a link to a device or a huge
// sparse file (the workspace is its to write) is refused at once, in one
// error naming the file: os.ReadFile blocked on the FIFO until a writer
// came (every later start in the project hung, and so did jail trust and
// jail config show), and read /dev/zero or a 64 GiB hole into memory.
// Seen failing on main (62db6d0): "Resolve still running after 5s" for
// the FIFO.
func TestProjectFileNotPlain(t *testing.T) {
	for _, kind := range []string{"fifo", "device", "huge"} {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t)
			proj := filepath.Join(w.ws, ProjectFileName)
			w.write(filepath.Join(w.ws, "x"), "")
			switch kind {
			case "fifo":
				if err := syscall.Mkfifo(proj, 0o644); err != nil {
					t.Fatal(err)
				}
			case "device":
				if err := os.Symlink("/dev/zero", proj); err != nil {
					t.Fatal(err)
				}
			case "huge":
				f, err := os.Create(proj)
				if err != nil {
					t.Fatal(err)
				}
				if err := f.Truncate(64 << 30); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
			type answer struct {
				what string
				err  error
			}
			done := make(chan answer, 3)
			go func() { _, err := w.resolve(Request{}); done <- answer{"Resolve", err} }()
			go func() { _, err := w.trust.Trust(proj, time.Now()); done <- answer{"Trust", err} }()
			go func() {
				l, err := w.trust.List() // nothing trusted: nothing read
				if err == nil && len(l) != 0 {
					err = errors.New("listed")
				}
				done <- answer{"", err}
			}()
			for range 3 {
				select {
				case a := <-done:
					if a.what == "" && a.err != nil {
						t.Errorf("List: %v", a.err)
					}
					if a.what != "" && (a.err == nil || !strings.Contains(a.err.Error(), proj)) {
						t.Errorf("%s: %v, want a refusal naming the file", a.what, a.err)
					}
					if a.what != "" {
						t.Logf("%s: %v", a.what, a.err)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("Resolve, Trust or List still running after 5s")
				}
			}
		})
	}
}

// List says what a run would make of each record's file, reading it as a
// run does (a FIFO neither blocks nor counts as the file: on main it hung,
// and a symlink to the trusted bytes listed "ok" though runs refuse it);
// Prune forgets only the records whose directory is gone, never one whose
// file alone is gone (its refusal is what holds the project's
// restrictions once a command in the sandbox deleted the file).
func TestTrustListStates(t *testing.T) {
	w := newWorld(t)
	const body = "memory = \"1G\"\n"
	mk := func(name string) string {
		p := w.write(filepath.Join(w.home, "p", name, ProjectFileName), body)
		if _, err := w.trust.Trust(p, time.Unix(0, 0)); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok, changed, gone, dirGone, link, fifo := mk("ok"), mk("changed"), mk("gone"), mk("dirgone"), mk("link"), mk("fifo")
	w.write(changed, "memory = \"2G\"\n")
	os.Remove(gone)
	os.RemoveAll(filepath.Dir(dirGone))
	os.Remove(link)
	if err := os.Symlink(ok, link); err != nil {
		t.Fatal(err)
	}
	os.Remove(fifo)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ok: StateOK, changed: StateChanged, gone: StateGone, dirGone: StateDirGone, link: StateNotFile, fifo: StateNotFile}
	done := make(chan struct{})
	go func() {
		defer close(done)
		list, err := w.trust.List()
		if err != nil || len(list) != len(want) {
			t.Errorf("List: %v %+v", err, list)
		}
		for _, l := range list {
			if l.State != want[l.Path] {
				t.Errorf("%s: %s, want %s", l.Path, l.State, want[l.Path])
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("List still running after 5s")
	}
	pruned, err := w.trust.Prune()
	if err != nil || len(pruned) != 1 || pruned[0] != dirGone {
		t.Fatalf("Prune: %v %v, want %s alone", pruned, err, dirGone)
	}
	if err := w.trust.CheckAbsent(gone); !errors.Is(err, ErrGone) {
		t.Errorf("a file gone from its directory after Prune: %v, want ErrGone", err)
	}
	if list, _ := w.trust.List(); len(list) != len(want)-1 {
		t.Errorf("after Prune: %+v", list)
	}
	if pruned, err := w.trust.Prune(); err != nil || len(pruned) != 0 {
		t.Errorf("Prune again: %v %v", pruned, err)
	}
}

// A project in a directory whose name is not UTF-8: the store is JSON,
// which keeps such a path as U+FFFD, another path (one the agent can
// make beside it). jail trust said "trusted" and every run then refused
// the file as not trusted, naming jail trust again: a loop. Both now say
// the path cannot be kept, and what to do. Seen failing on main
// (62db6d0): Trust returned no error and stored ".../caf\ufffd/.jail.toml".
func TestTrustNonUTF8Path(t *testing.T) {
	w := newWorld(t)
	proj := w.write(filepath.Join(w.home, "caf\xe9", ProjectFileName), "memory = \"1G\"\n")
	if _, err := w.trust.Trust(proj, time.Now()); err == nil || !strings.Contains(err.Error(), "not UTF-8") {
		t.Errorf("Trust: %v, want a refusal saying the path is not UTF-8", err)
	}
	data, _ := os.ReadFile(proj)
	if err := w.trust.Check(proj, data); err == nil || !strings.Contains(err.Error(), "not UTF-8") {
		t.Errorf("Check: %v, want a refusal saying the path is not UTF-8", err)
	}
	if l, _ := w.trust.List(); len(l) != 0 {
		t.Errorf("recorded: %+v", l)
	}
}

// trail17: a record is found by its directory's identity, and trust is
// given by identity while the record's own path still reaches that
// directory. The agent (whose workspace, mono, holds a trusted project two
// levels down) renamed the project's directory away and left a symlink at
// its path to a directory of its own one level up holding a copy of the
// trusted bytes: the record's path "reached" the agent's directory through
// the link, its identity matched, and the file was trusted there, its
// relative write paths anchored where the agent chose: the trusted
// "../../shared" (mono's shared) became src/shared, outside mono. The
// sandbox's cwdLinks lets the start through that link pass: it leads
// within the tree it lies in. The record's path reaches its directory only
// with no symlink on it (the record's key is canonical: its directory was
// resolved when trusted). Seen failing on main: Check returned nil for the
// copy, by both names, and the run in the link resolved.
func TestTrustNotGivenThroughALinkAtTheRecordsPath(t *testing.T) {
	w := newWorld(t)
	mono, proj, doc := w.trustedSubproject()
	// The agent, with mono writable: the project's directory moved
	// away, a directory of its own one level up, the trusted bytes
	// copied in, a link at the project's path.
	if err := os.Rename(proj, proj+".old"); err != nil {
		t.Fatal(err)
	}
	z := filepath.Join(mono, "z")
	zf := w.write(filepath.Join(z, ProjectFileName), doc)
	if err := os.Symlink(z, proj); err != nil {
		t.Fatal(err)
	}
	if err := w.trust.Check(zf, []byte(doc)); !errors.Is(err, ErrUntrusted) {
		t.Errorf("ATTACK WORKED: the copy in the link's target: %v, want ErrUntrusted", err)
	}
	if err := w.trust.Check(filepath.Join(proj, ProjectFileName), []byte(doc)); !errors.Is(err, ErrUntrusted) {
		t.Errorf("ATTACK WORKED: the copy through the link at the record's path: %v, want ErrUntrusted", err)
	}
	// The user's next start in the project, by its usual path.
	w.env.Cwd = proj
	r, err := w.resolve(Request{})
	if err == nil {
		t.Errorf("ATTACK WORKED: a run in the link resolved, write %v (from %s)", r.Policy.Write, z)
	} else if !errors.Is(err, ErrUntrusted) {
		t.Errorf("a run in the link: %v, want ErrUntrusted", err)
	}
	// Unchanged: the project itself, back at its path, is trusted.
	if err := os.Remove(proj); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(proj+".old", proj); err != nil {
		t.Fatal(err)
	}
	if _, err := w.resolve(Request{}); err != nil {
		t.Errorf("the trusted project at its path: %v", err)
	}
}

// trustedSubproject is a monorepo's subproject (mono/a/svc) whose trusted
// project file writes "../../shared": where the file is anchored decides
// what that is. It returns mono, the subproject's directory and the file's
// bytes.
func (w *world) trustedSubproject() (mono, proj, doc string) {
	w.t.Helper()
	mono = filepath.Join(w.home, "src", "mono")
	proj = filepath.Join(mono, "a", "svc")
	doc = "write = [\"../../shared\"]\n"
	pf := w.write(filepath.Join(proj, ProjectFileName), doc)
	if _, err := w.trust.Trust(pf, time.Now()); err != nil {
		w.t.Fatal(err)
	}
	return mono, proj, doc
}
