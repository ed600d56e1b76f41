package sandbox

import (
	"net"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/session"
)

// The attach client's first reply must be EventAttached (Sandbox.Attach
// gives up otherwise). The kept terminal's reader relays output to the
// client from the moment it takes over, a little before that event is
// sent: output read in between went out first, and jail attach failed
// with "attach: " while the command wrote. Seen failing before output
// waited for the attached event (the first reply was "output").
func TestAttachOutputWaitsForAttached(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int) *session.Conn {
		f := os.NewFile(uintptr(fd), "attach")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		return session.NewConn(c.(*net.UnixConn))
	}
	server, client := conn(fds[0]), conn(fds[1])
	defer server.Close()
	defer client.Close()
	me := &attachClient{c: server}
	me.sendOutput([]byte("written while the client took over\n"))
	if err := me.sendAttached(); err != nil {
		t.Fatal(err)
	}
	me.sendOutput([]byte("after\n"))
	var rep session.Reply
	if _, err := client.Recv(&rep); err != nil {
		t.Fatal(err)
	}
	if rep.Event != session.EventAttached {
		t.Fatalf("the client's first reply is %q (%q), not %q: jail attach gives up", rep.Event, rep.Data, session.EventAttached)
	}
	rep = session.Reply{}
	if _, err := client.Recv(&rep); err != nil || rep.Event != session.EventOutput || string(rep.Data) != "after\n" {
		t.Fatalf("the output after the attached event did not follow: %+v %v", rep, err)
	}
}
