package config

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A trusted project reached through a bind mount of its directory is the
// same project (review14d's reproduction): the agent deletes the trusted
// .jail.toml, and the next run from the bind mount's path is refused
// (ErrGone), and one from a subfolder narrowed by a planted .git gets its
// file (ErrAbove before trustsub); a record from before identities were kept is found too (the
// record's directory stat'ed now). The mounts are made in a user and mount
// namespace of the test's own, so root and an unprivileged user run the
// same test (mapped to 0 in it: capabilities survive the exec only for
// uid 0). Seen failing on main (1450a8d): "gone via bind: <nil>".
func TestTrustBindMount(t *testing.T) {
	if !inOwnMountNS(t) {
		return
	}
	for _, old := range []bool{false, true} {
		w := newWorld(t)
		proj := w.write(filepath.Join(w.ws, ProjectFileName), "deny = [\"secret.txt\"]\n")
		if _, err := w.trust.Trust(proj, time.Now()); err != nil {
			t.Fatal(err)
		}
		if old {
			// A store written before records kept the identity.
			var tf trustFile
			data, _ := os.ReadFile(w.trust.Path)
			if err := json.Unmarshal(data, &tf); err != nil {
				t.Fatal(err)
			}
			for k, r := range tf.Files {
				r.Dev, r.Ino = 0, 0
				tf.Files[k] = r
			}
			if err := w.trust.save(&tf); err != nil {
				t.Fatal(err)
			}
		}
		bproj := filepath.Join(filepath.Dir(w.home), "bproj")
		if err := os.Mkdir(bproj, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mount(w.ws, bproj, "", syscall.MS_BIND, ""); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Unmount(bproj, syscall.MNT_DETACH) })
		bfile := filepath.Join(bproj, ProjectFileName)
		data, _ := os.ReadFile(proj)
		if err := w.trust.Check(bfile, data); err != nil {
			t.Errorf("old=%v the same file via bind: %v", old, err)
		}
		if err := w.trust.Check(bfile, append(data, ' ')); !errors.Is(err, ErrChanged) {
			t.Errorf("old=%v changed via bind: %v, want ErrChanged", old, err)
		}
		sub := filepath.Join(bproj, "sub")
		w.write(filepath.Join(sub, ".git", "HEAD"), "ref: refs/heads/main\n")
		w.env.Cwd = sub
		// Its file applies, named by the path that reaches it (trustsub).
		if r, err := w.resolve(Request{}); err != nil || !slices.Equal(r.Policy.Deny, []string{bproj + "/secret.txt"}) {
			t.Errorf("old=%v narrowed via bind: %v %+v, want the file applied", old, err, r)
		}
		os.Remove(proj)
		w.env.Cwd = bproj
		if _, err := w.resolve(Request{}); !errors.Is(err, ErrGone) {
			t.Errorf("old=%v gone via bind: %v, want ErrGone", old, err)
		}
		if ok, err := w.trust.Revoke(filepath.Join(bproj, ProjectFileName)); !ok || err != nil {
			t.Errorf("old=%v revoke via bind: %v %v", old, ok, err)
		}
	}
}

// TestTrustInsideBindMount is TestResolveTrustedInside reached through a
// bind mount of the outer project (review14g): nested trusted projects
// /p and /p/sub, a command run in sub's sandbox empties sub/.git, and the
// next run from bp/sub (bp a bind mount of /p) widened the workspace to
// bp, whose file is trusted by identity, and applied it alone: sub's
// deny was dropped, as CheckInside looked records up by path only. Seen
// failing on main (faabf71): "widened via bind: <nil>". Since trustsub
// the run keeps bp/sub as its workspace, with sub's file.
func TestTrustInsideBindMount(t *testing.T) {
	if !inOwnMountNS(t) {
		return
	}
	w := newWorld(t)
	sub := w.nestedTrusted(t)
	bproj := filepath.Join(filepath.Dir(w.home), "bproj")
	if err := os.Mkdir(bproj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount(w.ws, bproj, "", syscall.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Unmount(bproj, syscall.MNT_DETACH) })
	w.write(filepath.Join(sub, "deeper", "x"), "")
	w.env.Cwd = filepath.Join(bproj, "sub", "deeper")
	if r, err := w.resolve(Request{}); err != nil || len(r.Policy.Deny) != 1 {
		t.Fatalf("before, via bind: %v %+v", err, r)
	}
	if err := os.Remove(filepath.Join(sub, ".git", "HEAD")); err != nil {
		t.Fatal(err)
	}
	// The inner project stays the workspace, named by the path that
	// reaches it (trustsub).
	if r, err := w.resolve(Request{}); err != nil || r.Workspace != filepath.Join(bproj, "sub") || !slices.Equal(r.Policy.Deny, []string{"secret"}) {
		t.Fatalf("widened via bind: %v %+v", err, r)
	}
	// From the outer project's own tree, outside sub: nothing to refuse.
	w.env.Cwd = bproj
	if _, err := w.resolve(Request{}); err != nil {
		t.Fatalf("the outer project via bind: %v", err)
	}
}

// inOwnMountNS runs the calling test again in a user and mount namespace
// of its own (uid and gid mapped to 0: capabilities survive the exec only
// for uid 0) and reports false in the parent, whose test is then done; in
// the child it makes the mount tree private and reports true. Root and an
// unprivileged user run the same test.
func inOwnMountNS(t *testing.T) bool {
	t.Helper()
	if os.Getenv("JAIL_TEST_TRUST_BIND") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
		cmd.Env = append(os.Environ(), "JAIL_TEST_TRUST_BIND=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("in a user and mount namespace: %v\n%s", err, out)
		}
		return false
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		t.Fatal(err)
	}
	return true
}

// Whoever can open the config directory (a ~/.config/jail made 0755 by
// hand: any local user) could hold an exclusive flock on it, and jail
// trust, --revoke and --prune, which locked the directory itself, waited
// for as long as they held it. The lock is a 0600 file of the user's now:
// a lock held on the directory keeps nothing waiting. (The lock on the
// directory is taken here by a second open of it, as another user's
// process takes it: flock conflicts between open files, not processes.)
// Seen failing on main (e413f85): "jail trust still waits".
func TestTrustLockNotOthers(t *testing.T) {
	w := newWorld(t)
	f := w.write(filepath.Join(w.ws, ProjectFileName), "memory = \"1G\"\n")
	d, err := os.Open(w.cfgDir) // 0755: any local user may
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := (&TrustStore{Path: w.trust.Path}).Trust(f, time.Now())
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		syscall.Flock(int(d.Fd()), syscall.LOCK_UN) // let it finish
		<-done
		t.Fatal("jail trust still waits for a lock another user's process holds on the config directory")
	}
	fi, err := os.Lstat(filepath.Join(w.cfgDir, trustLockName))
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file %v: want a regular file of mode 0600 (no one else may open it)", fi.Mode())
	}
	// A lock file others could open (another user made it, or its mode
	// was widened) is refused, not waited on.
	if err := os.Chmod(filepath.Join(w.cfgDir, trustLockName), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (&TrustStore{Path: w.trust.Path}).Revoke(f); err == nil || !strings.Contains(err.Error(), "not a private regular file") {
		t.Errorf("revoke with a lock file others may open: %v", err)
	}
}

// Identity trust's rename race (trustrace; degraded18's analysis): the
// record's path was checked for links, its identity read, and the path
// checked again, three lookups. A concurrent run's agent (the project
// writable there) swaps a link to a directory of its own, with the
// trusted bytes copied in, in at the record's path only while the
// identity is read: both checks passed around a stat that followed it, and
// the copy was trusted in the agent's directory (its relative write paths
// anchored there, as in TestTrustNotGivenThroughALinkAtTheRecordsPath).
// idStep is where the agent's swaps land. The run's own directory is
// swapped the same way (a link to the trusted project only while its
// identity is read). Seen failing on main with idStep's calls placed in
// its Check (linkFree, "stat", idOf, "recheck", linkFree): "ATTACK WORKED"
// for both.
func TestTrustIdentityNotThroughASwappedLink(t *testing.T) {
	for _, side := range []string{"record", "run"} {
		t.Run(side, func(t *testing.T) {
			w := newWorld(t)
			mono, proj, doc := w.trustedSubproject()
			pf := filepath.Join(proj, ProjectFileName)
			z := filepath.Join(mono, "z")
			zf := w.write(filepath.Join(z, ProjectFileName), doc)
			// swap makes at the link's place a directory (real) or
			// a link to to (the other one moved aside).
			swap := func(at, to string, link bool) {
				t.Helper()
				fi, err := os.Lstat(at)
				if err != nil {
					t.Fatal(err)
				}
				isLink := fi.Mode()&os.ModeSymlink != 0
				switch {
				case link && !isLink:
					if err := os.Rename(at, at+".old"); err != nil {
						t.Fatal(err)
					}
					if err := os.Symlink(to, at); err != nil {
						t.Fatal(err)
					}
				case !link && isLink:
					if err := os.Remove(at); err != nil {
						t.Fatal(err)
					}
					if err := os.Rename(at+".old", at); err != nil {
						t.Fatal(err)
					}
				}
			}
			// at: the directory whose lookups the agent splits;
			// to: where its link leads.
			at, to := proj, z
			if side == "run" {
				at, to = z, proj
			}
			// In place for the lookup by identity (find), out for
			// the path's checks, in for the stat alone. The run's
			// directory is real when Check resolves the run's path
			// (canonical), a link from find on.
			if side == "record" {
				swap(at, to, true)
			}
			stats := 0
			idStep = func(step, dir string) {
				if dir != at {
					return
				}
				switch step {
				case "find":
					swap(at, to, true)
				case "path", "recheck":
					swap(at, to, false)
				case "stat":
					stats++
					swap(at, to, true)
				}
			}
			t.Cleanup(func() { idStep = nil })
			err := w.trust.Check(zf, []byte(doc))
			if stats == 0 {
				t.Fatalf("the identity of %s was never read (Check: %v): the test does not reach the race", at, err)
			}
			if !errors.Is(err, ErrUntrusted) {
				t.Errorf("ATTACK WORKED: the copy in %s trusted through a link swapped in at %s for the stat alone: %v, want ErrUntrusted", z, at, err)
			}
			// Unchanged: no link, the project by its path and by
			// another name of it (the identity) is trusted.
			idStep = nil
			swap(at, to, false)
			if err := w.trust.Check(pf, []byte(doc)); err != nil {
				t.Errorf("the trusted project at its path: %v", err)
			}
		})
	}
}
