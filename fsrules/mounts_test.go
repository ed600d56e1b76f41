package fsrules

import (
	"strings"
	"testing"
)

func TestParseMountinfo(t *testing.T) {
	in := `21 26 0:20 / /proc rw,relatime - proc proc rw
36 26 0:31 / /home/u/my\040disk rw shared:5 master:1 - ext4 /dev/sdb1 rw
40 26 0:33 /sub /w/a\134b rw - fuse.sshfs host: rw
41 26 0:34 / relative rw - tmpfs t rw
42 26 0:35 / /no/separator rw tmpfs t rw
garbage

43 26 0:36 / /w/odd\777 rw - tmpfs t rw
`
	got := ParseMountinfo([]byte(in))
	var s []string
	for _, m := range got {
		s = append(s, m.Point+"|"+m.FSType)
	}
	want := []string{"/proc|proc", "/home/u/my disk|ext4", `/w/a\b|fuse.sshfs`, `/w/odd\777|tmpfs`}
	if strings.Join(s, ",") != strings.Join(want, ",") {
		t.Errorf("got %q\nwant %q", s, want)
	}
}

// FuzzParseMountinfo: never panics; every mount point is absolute and every
// type non-empty.
func FuzzParseMountinfo(f *testing.F) {
	f.Add([]byte("21 26 0:20 / /proc rw,relatime - proc proc rw\n"))
	f.Add([]byte("1 2 3 4 /a\\040b 6 7 - x y z\n1 2 3 4 /\\ 6 - x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, m := range ParseMountinfo(b) {
			if !strings.HasPrefix(m.Point, "/") || m.FSType == "" {
				t.Fatalf("bad entry %+v from %q", m, b)
			}
		}
	})
}
