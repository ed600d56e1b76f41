package session

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Dial talks only to a socket this user serves: one another user listens
// on (planted in a registry, or reached through a symlink) gets nothing.
func TestDialRefusesAnotherUsersSocket(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	os.Chmod(filepath.Dir(dir), 0o755) // nobody must reach it
	mine := filepath.Join(dir, "mine.sock")
	ln, err := net.Listen("unix", mine)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	c, err := Dial(mine)
	if err != nil {
		t.Fatalf("Dial of my own socket: %v", err)
	}
	c.Close()
	if os.Getuid() != 0 {
		t.Skip("another user's listener needs root to start it (the root pass proves it)")
	}
	// A listener running as nobody.
	theirs := filepath.Join(dir, "theirs.sock")
	cmd := exec.Command("/usr/bin/python3", "-c", `
import socket,sys,time
s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4)
print("up", flush=True)
while True:
    c,_=s.accept(); time.sleep(5)`, theirs)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// Its "up" comes after listen(): the socket file alone exists from
	// bind() on, and a Dial between the two was refused by the kernel
	// (ECONNREFUSED), not by Dial's owner check (CI saw it once).
	up := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		up <- line
	}()
	select {
	case line := <-up:
		if strings.TrimSpace(line) != "up" {
			t.Fatalf("the listener as nobody did not start: %q", line)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the listener as nobody did not start within 10s")
	}
	if _, err := Dial(theirs); err == nil || !strings.Contains(err.Error(), "not by you") {
		t.Fatalf("Dial of a socket served by uid 65534: %v", err)
	}
}
