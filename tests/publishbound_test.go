//go:build linux

package tests

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Adversarial: a published port listens on the host, where any local user
// can connect to it; each connection jail forwards holds sockets and
// splice pipes in the supervisor. Another user opening connections without
// end must not be able to exhaust the supervisor's fds (its egress, trail
// and other ports with it): past 2,048 open at once new ones are reset,
// and the user is told once. Seen failing with main's binary: the
// supervisor's fd count grew with every connection (2,304 held, none
// reset, no notice).
func TestPublishBoundsConnections(t *testing.T) {
	const max, extra = 2048, 256
	hostPort, inPort := netFreePort(t), 20000+os.Getpid()%1000
	ws := workspace(t)
	server := fmt.Sprintf(`import socket, os
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", %d))
s.listen(4096)
s.settimeout(0.1)
open("ready", "w").close()
held = []
while not os.path.exists("done"):
    try:
        held.append(s.accept()[0])
    except socket.timeout:
        pass
`, inPort)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, jail(t), "--nofile", "8192", "-p", fmt.Sprintf("%d:%d", hostPort, inPort), "--", "/usr/bin/python3", "-c", server)
	cmd.Dir = ws
	var so, se strings.Builder
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var conns []net.Conn
	finished := false
	finish := func() {
		if finished {
			return
		}
		finished = true
		for _, c := range conns {
			c.Close()
		}
		conns = nil
		os.WriteFile(filepath.Join(ws, "done"), nil, 0o644)
		select {
		case <-waited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Errorf("jail did not exit within 30 s of its agent's end\nstderr:\n%s", se.String())
		}
	}
	defer finish()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(ws, "ready")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server inside did not start\nstderr:\n%s", se.String())
		}
	}
	fdDir := fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid)
	fds := func() int {
		ents, err := os.ReadDir(fdDir)
		if err != nil {
			t.Fatalf("count the supervisor's fds: %v", err)
		}
		return len(ents)
	}
	// settled waits until the supervisor's fd count stops changing.
	settled := func() int {
		last, since := fds(), time.Now()
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if n := fds(); n != last {
				last, since = n, time.Now()
			} else if time.Since(since) > time.Second {
				break
			}
		}
		return last
	}
	open := func(n int) {
		for range n {
			c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", hostPort))
			if err != nil {
				continue // reset before connect returned: not held
			}
			conns = append(conns, c)
		}
	}
	base := settled()
	const probe = 256
	open(probe)
	per := float64(settled()-base) / probe
	if per < 1 {
		t.Fatalf("%d connections cost the supervisor %.2f fds each: not forwarded?\nstderr:\n%s", probe, per, se.String())
	}
	open(max + extra - probe)
	got := settled()
	if limit := base + int(per*(max+extra/2)); got > limit {
		t.Errorf("ATTACK WORKED: %d connections to the published port: the supervisor holds %d fds (%d at the start, %.1f per connection), more than %d bounded connections allow", max+extra, got, base, per, max)
	}
	finish()
	if !strings.Contains(se.String(), fmt.Sprintf("%d connections open at once", max)) {
		t.Errorf("no notice of the published port's bound:\n%s", se.String())
	}
}
