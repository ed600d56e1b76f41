//go:build linux

package tests

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestStdioDirectoryRefused: a directory handed to `jail --` as stdin, stdout
// or stderr (`jail -- agent < ~`, or a caller's O_PATH descriptor) is the
// host's tree below it, reached with openat or /proc/self/fd/N/NAME around
// every mask and the hidden $HOME: the run is refused (exit 125, one line
// naming the fd), as `jail exec` refuses it (CVE-2024-21626's class). Seen
// failing on main a34609b: the agent printed the hidden file's content
// through /proc/self/fd/0/key and /proc/$$/fd/1/key, exit 0.
func TestStdioDirectoryRefused(t *testing.T) {
	const marker = "stdiodir-secret-7f3a"
	dir, err := os.MkdirTemp(testHome, ".stdiodir-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// Readable by the sandbox's uid (nobody on the host when root runs
	// jail): only the mount tree hides it, as it hides a user's own files.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "key"), []byte(marker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, marker), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	openDir := func(flags int) *os.File {
		fd, err := unix.Open(dir, flags|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		f := os.NewFile(uintptr(fd), dir)
		t.Cleanup(func() { f.Close() })
		return f
	}
	// The agent's listing of the hidden directory and read of the file
	// in it (named as it reads: Landlock refuses the read, not the
	// listing, of a file under a host directory the sandbox mounts over,
	// such as /tmp or /home) through each stdio fd in turn (copied first:
	// the shell's own redirections move fds 1 and 2), said on stdout and
	// on stderr, whichever is not the directory.
	script := `exec 3<&0 4>&1 5>&2
for n in 3 4 5; do
	for o in 4 5; do
		ls /proc/self/fd/$n/ >&$o 2>/dev/null
		cat /proc/self/fd/$n/key >&$o 2>/dev/null
	done
done
true`
	cases := []struct {
		name string
		fd   int
		file *os.File
	}{
		{"stdin directory", 0, openDir(unix.O_RDONLY)},
		{"stdin O_PATH", 0, openDir(unix.O_PATH)},
		{"stdout O_PATH", 1, openDir(unix.O_PATH)},
		{"stderr O_PATH", 2, openDir(unix.O_PATH)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, jail(t), "--quiet", "--", "/bin/sh", "-c", script)
			cmd.Dir = workspace(t)
			var out, errb bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(""), &out, &errb
			var outFile, errFile *os.File // what the test reads when the fd is the directory's
			switch c.fd {
			case 0:
				cmd.Stdin = c.file
			case 1:
				// The agent's stderr is a pipe the test reads; its stdout
				// is the directory.
				pr, pw, _ := os.Pipe()
				cmd.Stdout, cmd.Stderr = c.file, pw
				errFile = pr
				defer pr.Close()
				defer pw.Close()
			case 2:
				pr, pw, _ := os.Pipe()
				cmd.Stdout, cmd.Stderr = pw, c.file
				outFile = pr
				defer pr.Close()
				defer pw.Close()
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// The parent's copies of the pipes' write ends go, so that the
			// reads below end with the run.
			if w, ok := cmd.Stdout.(*os.File); ok && c.fd == 2 {
				w.Close()
			}
			if w, ok := cmd.Stderr.(*os.File); ok && c.fd == 1 {
				w.Close()
			}
			var got bytes.Buffer
			for _, f := range []*os.File{outFile, errFile} {
				if f != nil {
					_, _ = got.ReadFrom(f)
				}
			}
			err := cmd.Wait()
			code := exitCode(t, err)
			all := out.String() + errb.String() + got.String()
			if strings.Contains(all, marker) {
				t.Fatalf("the agent listed or read a hidden directory through its fd %d, a directory of the host's:\n%s", c.fd, all)
			}
			if code != 125 {
				t.Fatalf("exit %d, want 125 (refused)\n%s", code, all)
			}
			if c.fd != 2 && !strings.Contains(all, "directory") {
				t.Errorf("the refusal does not say why:\n%s", all)
			}
		})
	}
}
