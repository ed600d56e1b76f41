package notice

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// lineEnding returns what ends a line on w: "\r\n" when w is a terminal
// whose output processing is off (raw mode: a bare "\n" would only move
// the cursor down, and the next line would start where this one ended),
// "\n" otherwise. It is asked at every write: the mode can change. w is
// the terminal as an *os.File, or a writer to one that says which
// (blockio.Writer's File).
func lineEnding(w io.Writer) func() string {
	f, ok := w.(*os.File)
	if fw, isFW := w.(interface{ File() *os.File }); isFW {
		f, ok = fw.File(), true
	}
	if !ok {
		return func() string { return "\n" }
	}
	fd := int(f.Fd())
	return func() string {
		t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
		if err != nil { // not a terminal
			return "\n"
		}
		if t.Oflag&unix.OPOST == 0 || t.Oflag&unix.ONLCR == 0 {
			return "\r\n"
		}
		return "\n"
	}
}
