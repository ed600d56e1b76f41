package hostsock

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/jail-sandbox/jail/internal/sockdiag"
)

// procText prints records as the kernel's unix_seq_show does: a header,
// then "%pK: %08X %08X %08X %04X %02X %5lu", and for a named socket a space
// and its name's bytes as they are (an abstract name's leading NUL and
// every NUL in it as '@'). A name "" is an unnamed socket.
func procText(names []string) []byte {
	var b bytes.Buffer
	b.WriteString("Num       RefCount Protocol Flags    Type St Inode Path\n")
	for i, n := range names {
		fmt.Fprintf(&b, "%016x: %08X %08X %08X %04X %02X %5d", uint64(i)*0x9e3779b97f4a7c15, 2, 0, 0x10000, 1, 1, 1000+i*7919)
		if n != "" {
			b.WriteByte(' ')
			b.WriteString(strings.ReplaceAll(n, "\x00", "@"))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// diagReply builds a sock_diag dump of names as the kernel sends it: one
// message per socket (struct unix_diag_msg, then attributes: the kernel
// puts the name, with its NUL for a path, first and a one-byte
// UNIX_DIAG_SHUTDOWN later; here a one-byte one comes first too, so the
// name's place depends on the padding; a path's UNIX_DIAG_VFS, its file
// inode 1000+i, after it), perDatagram messages to a datagram, NLMSG_DONE
// after the last.
func diagReply(names []string, perDatagram int) [][]byte {
	attr := func(b []byte, typ uint16, data []byte) []byte {
		h := make([]byte, nlaHdrLen)
		binary.NativeEndian.PutUint16(h, uint16(nlaHdrLen+len(data)))
		binary.NativeEndian.PutUint16(h[2:], typ)
		b = append(append(b, h...), data...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		return b
	}
	msg := func(typ uint16, data []byte) []byte {
		h := make([]byte, sockdiag.HdrLen)
		binary.NativeEndian.PutUint32(h, uint32(sockdiag.HdrLen+len(data)))
		binary.NativeEndian.PutUint16(h[4:], typ)
		b := append(h, data...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		return b
	}
	var out [][]byte
	var cur []byte
	for i, n := range names {
		body := make([]byte, unixDiagMsgLen)
		body[0] = syscall.AF_UNIX
		body = attr(body, 6, []byte{0}) // UNIX_DIAG_SHUTDOWN
		if n != "" {
			if n[0] != 0 {
				n += "\x00" // a path's name carries its NUL
			}
			body = attr(body, unixDiagName, []byte(n))
		}
		body = attr(body, 2, make([]byte, 4)) // UNIX_DIAG_PEER
		if n != "" && n[0] != 0 {
			// UNIX_DIAG_VFS: a path's file, inode 1000+i.
			body = attr(body, unixDiagVFS, binary.NativeEndian.AppendUint32(binary.NativeEndian.AppendUint32(nil, uint32(1000+i)), 0x800001))
		}
		body = attr(body, 6, []byte{0})
		cur = append(cur, msg(20, body)...) // SOCK_DIAG_BY_FAMILY
		if (i+1)%max(perDatagram, 1) == 0 {
			out = append(out, cur)
			cur = nil
		}
	}
	out = append(out, append(cur, msg(sockdiag.MsgDone, make([]byte, 4))...))
	return out
}

// pathName reports whether the kernel would list name as a path-bound
// socket's absolute path (what Bound must return).
func pathName(n string) bool {
	return strings.HasPrefix(n, "/") && !strings.Contains(n, "\x00") && len(n) <= maxName
}

// TestParseProc: what the kernel prints, read back; a name's newline runs
// over lines and each reading is kept (the joined ones as overrun).
func TestParseProc(t *testing.T) {
	fake := "0000000000000000: 00000002 00000000 00010000 0001 01 99 /fake.sock"
	for _, c := range []struct {
		name          string
		socks         []string
		paths, overun []string // overrun: only the names the case is about
		rel           []string
	}{
		{"plain", []string{"/run/a.sock", "", "/var/lib/my sql/s", "rel.sock", "\x00abstract", "../up.sock"}, []string{"/run/a.sock", "/var/lib/my sql/s"}, nil, []string{"rel.sock", "../up.sock"}},
		{"spaces around", []string{" /lead", "/trail "}, []string{"/trail "}, nil, []string{" /lead"}},
		{"carriage return", []string{"/x/cr\r"}, []string{"/x/cr\r"}, nil, nil},
		{"newline", []string{"/x/new\nline", "/y"}, []string{"/x/new", "/y"}, []string{"/x/new\nline"}, nil},
		{"newline at end", []string{"/x/end\n"}, []string{"/x/end"}, []string{"/x/end\n"}, nil},
		{"newlines", []string{"/x/a\n\nb\nc"}, []string{"/x/a"}, []string{"/x/a\n", "/x/a\n\nb", "/x/a\n\nb\nc"}, nil},
		{"tail like a record", []string{"/x/a\n" + fake}, []string{"/x/a", "/fake.sock"}, []string{"/x/a\n" + fake}, nil},
		{"abstract tail like a record", []string{"\x00a\n" + fake}, []string{"/fake.sock"}, nil, nil},
		{"108 bytes", []string{"/" + strings.Repeat("L", 107)}, []string{"/" + strings.Repeat("L", 107)}, nil, nil},
		{"unnamed tail", []string{"/x/a\n00000000bf1a54fd: 00000003 00000000 00000000 0001 03  1058"}, []string{"/x/a"}, []string{"/x/a\n00000000bf1a54fd: 00000003 00000000 00000000 0001 03  1058"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			paths, overrun, rel := parseProc(procText(c.socks))
			if !slices.Equal(paths, c.paths) {
				t.Errorf("paths:\n got %q\nwant %q", paths, c.paths)
			}
			if !slices.Equal(rel, c.rel) {
				t.Errorf("relative names:\n got %q\nwant %q", rel, c.rel)
			}
			for _, o := range c.overun {
				if !slices.Contains(overrun, o) {
					t.Errorf("overrun %q lacks %q", overrun, o)
				}
			}
			for _, o := range overrun {
				if len(o) > maxName || !strings.Contains(o, "\n") {
					t.Errorf("overrun reading %q: longer than a name, or on one line", o)
				}
			}
		})
	}
	// Not records: a continuation that is short of fields or not numbers.
	for _, l := range []string{"", "x", "0: 1 2 3 4 5", "0: 1 2 3 4 5 x /p", "0 1 2 3 4 5 6 /p", "g: 1 2 3 4 5 6 /p", ": 1 2 3 4 5 6 /p"} {
		if p, ok := procRecord([]byte(l)); ok {
			t.Errorf("procRecord(%q) = %q, a record", l, p)
		}
	}
	if p, ok := procRecord([]byte("ff: 1 2 3 4 5 6")); !ok || p != nil {
		t.Errorf("an unnamed record: %q %v", p, ok)
	}
	// The file as read on a host with the kernel's real header.
	if p, _, _ := parseProc(nil); p != nil {
		t.Errorf("empty file: %q", p)
	}
}

// TestParseDiag: names from a dump over several datagrams, the abstract
// and unnamed ones left out; an error reply and malformed datagrams are
// errors, never a short list taken as whole.
func TestParseDiag(t *testing.T) {
	socks := []string{"/run/a.sock", "", "\x00abstract", "/x/new\nline", "rel", "/" + strings.Repeat("L", 107), "/run/a.sock"}
	var n names
	done := false
	for _, d := range diagReply(socks, 2) {
		if done {
			t.Fatal("a datagram after NLMSG_DONE")
		}
		var err error
		if done, err = parseDiag(d, &n); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"/run/a.sock", "/x/new\nline", "/" + strings.Repeat("L", 107)}
	if !done || !slices.Equal(n.out, want) || !slices.Equal(n.rel, []string{"rel"}) {
		t.Errorf("done %v, names %q, want %q; relative %q, want [rel]", done, n.out, want, n.rel)
	}
	// Each path's file by its inode, under the name it was bound by:
	// both of /run/a.sock's (a name bound again after an unlink), the
	// relative name's; none for the unnamed and abstract sockets; by the
	// low 32 bits (udiag_vfs_ino is a __u32). A name the kernel did not
	// give (the relative one placed) holds any bound socket's file.
	f := n.files
	if !f.Holds("/run/a.sock", 1000) || !f.Holds("/run/a.sock", 1006) || f.Holds("/run/a.sock", 1003) ||
		!f.Holds("/x/new\nline", 1003) || !f.Live(1004) || !f.Live(1<<32|1005) || f.Live(1001) || f.Live(1002) ||
		!f.Holds("/placed/rel", 1004) || f.Holds("/placed/rel", 1001) {
		t.Errorf("files %+v", f)
	}
	var none *Files
	if none.Live(1000) || none.Holds("/run/a.sock", 1000) {
		t.Error("a nil Files knows a file")
	}

	errMsg := make([]byte, sockdiag.HdrLen+4)
	binary.NativeEndian.PutUint32(errMsg, uint32(len(errMsg)))
	binary.NativeEndian.PutUint16(errMsg[4:], sockdiag.MsgError)
	e := int32(-int32(syscall.EPERM))
	binary.NativeEndian.PutUint32(errMsg[sockdiag.HdrLen:], uint32(e))
	if _, err := parseDiag(errMsg, &names{}); err == nil || !strings.Contains(err.Error(), syscall.EPERM.Error()) {
		t.Errorf("error reply: %v", err)
	}
	good := diagReply([]string{"/a"}, 5)[0]
	for name, b := range map[string][]byte{
		"short header":   good[:10],
		"length 0":       append([]byte{0, 0, 0, 0}, good[4:]...),
		"length too big": append(binary.NativeEndian.AppendUint32(nil, uint32(len(good)+1)), good[4:]...),
		"cut":            good[:len(good)-5],
	} {
		if _, err := parseDiag(b, &names{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// FuzzParseProc: whatever the file holds, parseProc does not panic and
// lists only absolute names without NULs, each once, the joined readings
// no longer than a name; and every path-bound name the kernel would print
// (whatever bytes it has: newlines, text like a record) is among its
// readings (and a relative name's first line among the relative names).
// Names are the input split at 0xff bytes; a leading NUL makes an
// abstract name.
func FuzzParseProc(f *testing.F) {
	f.Add([]byte("/run/a.sock\xff\xff\x00abs\xffrel\xff/x/new\nline"))
	f.Add([]byte("/x/a\n0000000000000000: 00000002 00000000 00010000 0001 01 99 /fake\xff/y"))
	f.Add([]byte("/x/end\n\xff\x00a\n0: 1 2 3 4 5 6 /p"))
	f.Add([]byte("/x/cr\r\xff /lead\xff/trail "))
	f.Fuzz(func(t *testing.T, in []byte) {
		var socks []string
		for _, s := range bytes.Split(in, []byte{0xff}) {
			n := string(s)
			if n != "" && n[0] != 0 {
				n, _, _ = strings.Cut(n, "\x00") // a path stops at its NUL
			}
			if len(n) > maxName {
				n = n[:maxName]
			}
			socks = append(socks, n)
		}
		for i, data := range [][]byte{in, procText(socks)} {
			paths, overrun, rel := parseProc(data)
			for _, l := range [][]string{paths, overrun} {
				seen := map[string]bool{}
				for _, p := range l {
					if !strings.HasPrefix(p, "/") || strings.Contains(p, "\x00") || seen[p] {
						t.Fatalf("reading %q: not absolute, a NUL, or twice", p)
					}
					seen[p] = true
				}
			}
			for _, r := range rel {
				if r == "" || r[0] == '/' || r[0] == '@' || strings.Contains(r, "\x00") {
					t.Fatalf("relative name %q: empty, absolute, abstract or a NUL", r)
				}
			}
			for _, o := range overrun {
				if len(o) > maxName {
					t.Fatalf("joined reading of %d bytes, longer than a name: %q", len(o), o)
				}
			}
			if i == 0 {
				continue // the input as the file: no names known
			}
			for _, s := range socks {
				if pathName(s) && !slices.Contains(paths, s) && !slices.Contains(overrun, s) {
					t.Fatalf("missed %q\nfile:\n%s\npaths %q\noverrun %q", s, data, paths, overrun)
				}
				// A relative name's first line (/proc/net/unix cannot
				// tell a relative "@x" from an abstract name).
				first, _, _ := strings.Cut(s, "\n")
				if first != "" && first[0] != '/' && first[0] != '@' && first[0] != 0 && !slices.Contains(rel, first) {
					t.Fatalf("missed the relative name %q\nfile:\n%s\nrel %q", first, data, rel)
				}
			}
		}
	})
}

// FuzzParseDiag: whatever the datagram holds, parseDiag does not panic and
// lists only absolute names without NULs, each once; a dump of the input's
// names (split at 0xff; a leading NUL makes an abstract name) read back
// gives exactly its absolute path names, and its relative ones apart.
func FuzzParseDiag(f *testing.F) {
	f.Add([]byte("/run/a.sock\xff\xff\x00abs\xffrel\xff/x/new\nline"), uint8(2))
	f.Add(diagReply([]string{"/a", "\x00b"}, 1)[0], uint8(0))
	f.Add(diagReply([]string{"/a", "/b\nc", ""}, 3)[0], uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, per uint8) {
		var n names
		parseDiag(in, &n)
		seen := map[string]bool{}
		for _, p := range n.out {
			if !strings.HasPrefix(p, "/") || strings.Contains(p, "\x00") || seen[p] {
				t.Fatalf("name %q: not absolute, a NUL, or twice", p)
			}
			seen[p] = true
		}
		var socks, want, wantRel []string
		for _, s := range bytes.Split(in, []byte{0xff}) {
			name := string(s)
			if name != "" && name[0] != 0 {
				name, _, _ = strings.Cut(name, "\x00")
			}
			if len(name) > maxName {
				name = name[:maxName]
			}
			socks = append(socks, name)
			if pathName(name) && !slices.Contains(want, name) {
				want = append(want, name)
			}
			if name != "" && name[0] != '/' && name[0] != 0 && !slices.Contains(wantRel, name) {
				wantRel = append(wantRel, name)
			}
		}
		var got names
		done := false
		for _, d := range diagReply(socks, int(per)) {
			var err error
			if done, err = parseDiag(d, &got); err != nil {
				t.Fatal(err)
			}
		}
		if !done || !slices.Equal(got.out, want) || !slices.Equal(got.rel, wantRel) {
			t.Fatalf("done %v, names %q, want %q; relative %q, want %q", done, got.out, want, got.rel, wantRel)
		}
		// Every path's file (diagReply: inode 1000+i) under its name.
		for i, name := range socks {
			if name != "" && name[0] != 0 && !got.files.Holds(name, uint64(1000+i)) {
				t.Fatalf("socket %d %q: its file (inode %d) is not held by its name: %+v", i, name, 1000+i, got.files)
			}
		}
	})
}
