package sandbox

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/notice"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
)

// The go (and so the agent's first instruction) waits for the walls
// (raiseWalls: wallsUp) and for the kill switch (the control socket and
// the registry entry: controlUp), which the supervisor makes while init's
// report is read and handled: init here is the other end of the socket
// pair, reporting at once. Each gate is held shut in turn: no go may come
// through while it is, and the go comes once both are open.
func TestGoWaitsForWallsAndControl(t *testing.T) {
	for _, shut := range []string{"walls", "control", "both"} {
		t.Run(shut, func(t *testing.T) {
			r, ini := pairedRunner(t)
			if shut == "control" {
				close(r.wallsUp)
			}
			if shut == "walls" {
				close(r.controlUp)
			}
			done := make(chan struct{})
			go r.readMessages(done)
			defer func() {
				r.sb.Conn.Close()
				select {
				case <-done:
				case <-time.After(5 * time.Second):
					t.Error("readMessages did not end with its socket closed")
				}
			}()
			if err := ini.Send(ns.Message{Type: ns.MsgFiles}); err != nil {
				t.Fatal(err)
			}
			got := make(chan ns.Message, 1)
			go func() {
				m, _, err := ini.Recv()
				if err == nil {
					got <- m
				}
			}()
			select {
			case m := <-got:
				t.Fatalf("init had message %q (the go) while the %s gate was shut", m.Type, shut)
			case <-time.After(200 * time.Millisecond):
			}
			select {
			case <-r.wallsUp:
			default:
				close(r.wallsUp)
			}
			select {
			case <-r.controlUp:
			default:
				close(r.controlUp)
			}
			select {
			case m := <-got:
				if m.Type != ns.MsgGo {
					t.Fatalf("init had message %q, want the go", m.Type)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("no go once both gates were open")
			}
		})
	}
}

type testWriter struct{ t *testing.T }

func (w *testWriter) Write(b []byte) (int, error) { w.t.Logf("%s", b); return len(b), nil }

// pairedRunner is a runner whose sandbox is the other end of a socket pair
// (ini, closed with the test) instead of an init: a test sends init's
// messages itself. Its context ends with the test.
func pairedRunner(t *testing.T) (*runner, *ns.Conn) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	sup := ns.NewConn(os.NewFile(uintptr(fds[0]), "supervisor"))
	ini := ns.NewConn(os.NewFile(uintptr(fds[1]), "init"))
	t.Cleanup(func() { ini.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	r := &runner{pol: &policy.Policy{}, sb: &ns.Sandbox{Conn: sup}, ctx: ctx,
		wallsUp: make(chan struct{}), controlUp: make(chan struct{}), startedCh: make(chan struct{}),
		exitCh: make(chan struct{}), stopCh: make(chan syscall.Signal, 1)}
	r.notes = notice.New(&testWriter{t}, notice.Options{})
	return r, ini
}
