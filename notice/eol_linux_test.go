package notice

import (
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/blockio"
)

// On a terminal in raw mode (no output processing) a notice ends in
// "\r\n"; in the normal mode the terminal adds the "\r" itself. The
// terminal is given as itself, or as the supervisor gives it (a
// blockio.Writer, which says its file).
func TestLineEndingOnRawTerminal(t *testing.T) {
	t.Run("file", func(t *testing.T) { lineEndingOn(t, func(f *os.File) io.Writer { return f }) })
	t.Run("blockio", func(t *testing.T) { lineEndingOn(t, func(f *os.File) io.Writer { return blockio.NewWriter(f) }) })
}

func lineEndingOn(t *testing.T, wrap func(*os.File) io.Writer) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer m.Close()
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	sl, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sl.Close()
	// Up to the line's end: the line can reach the master in more than
	// one read ("jail: cooked", then "\r\n": seen once in CI).
	read := func() string {
		var got []byte
		b := make([]byte, 256)
		m.SetReadDeadline(time.Now().Add(2 * time.Second))
		for !strings.HasSuffix(string(got), "\n") {
			k, err := m.Read(b)
			got = append(got, b[:k]...)
			if err != nil {
				break
			}
		}
		return string(got)
	}
	s := New(wrap(sl), Options{})
	s.Add(Notice{Kind: "jail", Severity: Warning, Text: "cooked"})
	if got := read(); got != "jail: cooked\r\n" {
		t.Fatalf("cooked terminal got %q", got)
	}
	tio, err := unix.IoctlGetTermios(int(sl.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	tio.Oflag &^= unix.OPOST
	if err := unix.IoctlSetTermios(int(sl.Fd()), unix.TCSETS, tio); err != nil {
		t.Fatal(err)
	}
	s.Add(Notice{Kind: "jail", Severity: Warning, Text: "raw"})
	if got := read(); got != "jail: raw\r\n" {
		t.Fatalf("raw terminal got %q (a bare \\n steps sideways)", got)
	}
}
