//go:build linux

package tests

// Issue 10, class 6: nothing the agent writes may carry a setuid or setgid
// bit (or file capabilities) onto the host, where any user could later run
// it with the owner's rights (root's, when root started jail: the
// workspace is idmapped and files land owned by root). Every route a tool
// takes is tried; the host then stats what is left.

import (
	"archive/tar"
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// setidScript tries every way to leave a set-id file in the workspace. It
// never stops at a failure: each refused step is just one less file.
const setidScript = `
cp /bin/sh chmod-suid; chmod 4755 chmod-suid
cp /bin/sh chmod-sgid; chmod g+s chmod-sgid
cp /bin/sh chmod-both; chmod 6755 chmod-both
cp /bin/sh chmod-symbolic; chmod u+s,g+s chmod-symbolic
install -m 4755 /bin/sh install-suid
install -m 2755 /bin/sh install-sgid
[ -n "$SETID_SRC" ] && cp -p "$SETID_SRC" cp-p
[ -n "$SETID_SRC" ] && cp -a "$SETID_SRC" cp-a
tar -xpf setid.tar
mkdir dir-sgid; chmod 2775 dir-sgid
python3 - <<'EOF'
import os
def tryit(name, f):
    try:
        f()
        print(name, "done")
    except OSError as e:
        print(name, "refused:", e)
tryit("py-open", lambda: os.close(os.open("py-open", os.O_CREAT | os.O_WRONLY, 0o6755)))
tryit("py-mknod", lambda: os.mknod("py-mknod", 0o100000 | 0o4755))
def tmpfile():
    fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o4755)
    os.link("/proc/self/fd/%d" % fd, "py-tmpfile")
tryit("py-tmpfile", tmpfile)
def opath():
    open("py-opath", "w").close()
    fd = os.open("py-opath", os.O_PATH)
    os.chmod("/proc/self/fd/%d" % fd, 0o4755)
tryit("py-opath", opath)
def fchmod():
    fd = os.open("py-fchmod", os.O_CREAT | os.O_WRONLY, 0o755)
    os.fchmod(fd, 0o4755)
tryit("py-fchmod", fchmod)
def caps():
    open("py-fcaps", "w").close()
    # VFS_CAP_REVISION_2, permitted+inheritable CAP_SETUID (7), effective.
    v = (0x02000000 | 1).to_bytes(4, "little") + (1 << 7).to_bytes(4, "little") + bytes(12)
    os.setxattr("py-fcaps", "security.capability", v)
tryit("py-fcaps", caps)
EOF
command -v setcap >/dev/null && { cp /bin/sh setcap-file; setcap cap_setuid+ep setcap-file; }
perl -e 'use Fcntl; sysopen(my $f, "perl-open", O_CREAT|O_WRONLY, 04755) or print "perl-open refused: $!\n"'
cp /bin/sh chown-suid; chmod 4755 chown-suid; chown "$(id -u):$(id -g)" chown-suid
cat /proc/self/mountinfo > mountinfo.txt
echo setid-script-done
`

// setidTar builds an archive whose members carry set-id modes, as a
// downloaded tarball might: `tar -p` restores modes.
func setidTar(t *testing.T, dir string) {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for name, mode := range map[string]int64{"tar-suid": 0o4755, "tar-sgid": 0o2755, "tar-both": 0o6755} {
		body := []byte("#!/bin/sh\necho hi\n")
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(body)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "setid.tar"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// setidSource finds a set-id program on the host for cp -p / cp -a to copy.
func setidSource() string {
	for _, p := range []string{"/usr/bin/passwd", "/usr/bin/su", "/bin/su", "/usr/bin/chsh", "/usr/bin/newgrp", "/usr/bin/mount"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
			return p
		}
	}
	return ""
}

func TestSetIDBitsNeverReachTheHost(t *testing.T) {
	for _, tool := range []string{"python3", "perl", "tar", "install"} {
		if _, err := exec.LookPath(tool); err != nil {
			if inCI() {
				t.Fatalf("%s is needed for this test: %v", tool, err)
			}
			t.Skipf("no %s", tool)
		}
	}
	ws := workspace(t)
	setidTar(t, ws)
	// A protected path (pinned directories, read-only binds) and an extra
	// writable path: every kind of writable mount is in the view.
	if err := os.MkdirAll(filepath.Join(ws, "proj", ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, "proj", ".git", "config"), []byte("[core]\n"), 0o644)
	extra := workspace(t)
	src := setidSource()
	r := sh(t, runOpts{dir: ws, env: []string{"SETID_SRC=" + src}}, setidScript+`cp /bin/sh "$EXTRA/x"; chmod 4755 "$EXTRA/x"`,
		"--setenv", "SETID_SRC="+src, "--setenv", "EXTRA="+extra, "-w", extra)
	if !strings.Contains(r.stdout, "setid-script-done") {
		t.Fatalf("script did not finish (exit %d)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("inside:\n%s%s", r.stdout, r.stderr)

	// The host's view: no file or directory the agent made has a set-id
	// bit or a security.capability attribute.
	var bad []string
	seen := 0
	err := filepath.Walk(ws, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(ws, p)
		if rel == "." {
			return nil
		}
		seen++
		if fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
			var st unix.Stat_t
			unix.Lstat(p, &st)
			bad = append(bad, rel+" "+fi.Mode().String()+" uid "+strconv.Itoa(int(st.Uid)))
		}
		buf := make([]byte, 64)
		if _, err := unix.Lgetxattr(p, "security.capability", buf); !errors.Is(err, unix.ENODATA) && !errors.Is(err, unix.ENOTSUP) {
			bad = append(bad, rel+" has security.capability ("+errString(err)+")")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The attempts ran: the files exist (without the bits).
	for _, must := range []string{"chmod-suid", "chmod-sgid", "install-suid", "py-fchmod", "py-opath", "setcap-file"} {
		if _, err := os.Lstat(filepath.Join(ws, must)); err != nil {
			t.Errorf("%s was not even created (%v): the attack did not run", must, err)
		}
	}
	if len(bad) > 0 {
		t.Fatalf("set-id bits or file capabilities reached the host (as uid %d; %d entries seen):\n  %s",
			os.Getuid(), seen, strings.Join(bad, "\n  "))
	}

	// And none could be used inside either: every writable mount is nosuid.
	mi, err := os.ReadFile(filepath.Join(ws, "mountinfo.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(extra, "x")); err != nil || fi.Mode()&os.ModeSetuid != 0 {
		t.Errorf("--write path: %v %v", fi.Mode(), err)
	}
	rw := 0
	sc := bufio.NewScanner(bytes.NewReader(mi))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 {
			continue
		}
		opts := "," + f[5] + ","
		if !strings.Contains(opts, ",rw,") {
			continue
		}
		rw++
		if !strings.Contains(opts, ",nosuid,") {
			t.Errorf("writable mount without nosuid inside: %s", sc.Text())
		}
	}
	// The workspace, the --write path and the pinned proj/ at least.
	if rw < 3 || !bytes.Contains(mi, []byte(extra)) || !bytes.Contains(mi, []byte(filepath.Join(ws, "proj")+" ")) {
		t.Fatalf("expected writable mounts missing (%d found) in:\n%s", rw, mi)
	}
}

func errString(err error) string {
	if err == nil {
		return "present"
	}
	return err.Error()
}
