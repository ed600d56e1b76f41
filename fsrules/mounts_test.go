package fsrules

import (
	"os"
	"strings"
	"testing"
)

func TestParseMountinfo(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []string // "point|type"
	}{
		{"plain", "21 26 0:20 / /proc rw,relatime - proc proc rw\n", []string{"/proc|proc"}},
		{"optional fields", "36 26 0:31 / /home/u/disk rw shared:5 master:1 propagate_from:2 - ext4 /dev/sdb1 rw\n", []string{"/home/u/disk|ext4"}},
		{"no optional fields, no trailing newline", "40 26 0:33 /sub /w rw - fuse.sshfs host: rw", []string{"/w|fuse.sshfs"}},
		{"space", `36 26 0:31 / /home/u/my\040disk rw - ext4 /dev/sdb1 rw`, []string{"/home/u/my disk|ext4"}},
		{"tab, newline, backslash", `1 2 0:1 / /a\011b\012c\134d rw - tmpfs t rw`, []string{"/a\tb\nc\\d|tmpfs"}},
		{"not an escape", `43 26 0:36 / /w/odd\777\04 rw - tmpfs t rw`, []string{`/w/odd\777\04|tmpfs`}},
		{"relative point", "41 26 0:34 / relative rw - tmpfs t rw\n", nil},
		{"no separator", "42 26 0:35 / /no/separator rw tmpfs t rw\n", nil},
		{"separator last", "42 26 0:35 / /x rw -\n", nil},
		{"separator too early", "1 2 3 4 5 - tmpfs\n", nil},
		{"short", "garbage\n\n1 2 3\n", nil},
		{"several", "1 0 0:1 / / rw - ext4 /dev/vda rw\n2 1 0:2 / /dev/pts rw - devpts devpts rw\nbad\n3 1 0:3 / /mnt/a\\040b rw - autofs systemd-1 rw\n",
			[]string{"/|ext4", "/dev/pts|devpts", "/mnt/a b|autofs"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, m := range ParseMountinfo([]byte(c.in)) {
				got = append(got, m.Point+"|"+m.FSType)
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("got %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestParseMountinfoSelf: this process's own table parses, "/" included.
func TestParseMountinfoSelf(t *testing.T) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Skipf("no /proc/self/mountinfo: %v", err)
	}
	ms := ParseMountinfo(b)
	if n := strings.Count(strings.TrimSpace(string(b)), "\n") + 1; len(ms) != n {
		t.Errorf("parsed %d of %d lines", len(ms), n)
	}
	root := false
	for _, m := range ms {
		root = root || m.Point == "/"
	}
	if !root {
		t.Errorf("no / in %v", ms)
	}
}

// FuzzParseMountinfo: never panics; every mount point is absolute and every
// type non-empty; a well-formed line with any point round-trips through the
// kernel's escaping.
func FuzzParseMountinfo(f *testing.F) {
	f.Add([]byte("21 26 0:20 / /proc rw,relatime - proc proc rw\n"), "/a b")
	f.Add([]byte("1 2 3 4 /a\\040b 6 7 - x y z\n1 2 3 4 /\\ 6 - x"), "/x\\y")
	f.Add([]byte("36 26 0:31 / /h rw shared:5 master:1 - ext4 /dev/sdb1 rw"), "/\n")
	f.Fuzz(func(t *testing.T, b []byte, point string) {
		for _, m := range ParseMountinfo(b) {
			if !strings.HasPrefix(m.Point, "/") || m.FSType == "" {
				t.Fatalf("bad entry %+v from %q", m, b)
			}
		}
		if !strings.HasPrefix(point, "/") {
			return
		}
		// The kernel escapes space, tab, newline and backslash (seq_file
		// mangle_path " \t\n\\").
		var esc strings.Builder
		for i := 0; i < len(point); i++ {
			switch c := point[i]; c {
			case ' ', '\t', '\n', '\\':
				esc.WriteString("\\" + string([]byte{'0' + c>>6, '0' + c>>3&7, '0' + c&7}))
			default:
				esc.WriteByte(c)
			}
		}
		if f := strings.Fields(esc.String()); len(f) != 1 || f[0] != esc.String() {
			return // other white space (\r, \v, U+0085) splits the line's fields
		}
		ms := ParseMountinfo([]byte("1 2 0:3 / " + esc.String() + " rw - tmpfs t rw\n"))
		if len(ms) != 1 || ms[0].Point != point || ms[0].FSType != "tmpfs" {
			t.Fatalf("%q (escaped %q): got %+v", point, esc.String(), ms)
		}
	})
}
