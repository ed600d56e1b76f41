package jail_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/jail-sandbox/jail"
	"github.com/jail-sandbox/jail/internal/ptytest"
	"github.com/jail-sandbox/jail/policy"
)

// TestCmdOutputToTerminalFiltered: a Cmd whose Stdout (or, without Tty,
// Stderr) is a terminal gets the command's output through jail's terminal
// filter, as the main command's relayed output does: no clipboard write
// (OSC 52), no title report request (CSI 21 t). Seen failing on main
// (ad705ff) for Stdout and Stderr (the bytes reached the terminal whole),
// and, with the first fix, for Tty (relayPty copied raw).
func TestCmdOutputToTerminalFiltered(t *testing.T) {
	p := policy.Default()
	sb, err := jail.Start(context.Background(), &p, jail.Options{})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer sb.Close()
	for _, tc := range []struct {
		what   string
		tty    bool
		stream string
	}{{"stdout", false, "1"}, {"stderr", false, "2"}, {"tty", true, "1"}} {
		master, slave := ptytest.Open(t)
		got := make(chan []byte, 1)
		go func() {
			var all []byte
			buf := make([]byte, 4096)
			for {
				n, err := master.Read(buf)
				all = append(all, buf[:n]...)
				if err != nil || bytes.Contains(all, []byte("C")) {
					got <- all
					return
				}
			}
		}()
		cmd := sb.Command("/bin/sh", "-c", `printf 'A\033]52;c;aGVsbG8=\007B\033[21tC\n' >&`+tc.stream)
		cmd.Tty = tc.tty
		cmd.Stdout, cmd.Stderr = slave, slave
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		var out []byte
		select {
		case out = <-got:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: nothing reached the terminal", tc.what)
		}
		slave.Close()
		master.Close()
		if !bytes.Contains(out, []byte("A")) || !bytes.Contains(out, []byte("C")) {
			t.Fatalf("%s: the command's text did not reach the terminal: %q", tc.what, out)
		}
		if bytes.Contains(out, []byte("\x1b]52")) || bytes.Contains(out, []byte("\x1b[21t")) {
			t.Errorf("%s: the terminal got the command's sequences unfiltered: %q", tc.what, out)
		}
	}
}
