package hostsock

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"

	"github.com/jail-sandbox/jail/internal/sockdiag"
)

// The two parsers below read names that any local user chooses (bind(2) in
// a directory they own): they are pure, so tests and fuzz targets feed them
// what a hostile binder could make the kernel print.

// maxName is the longest name a path-bound socket can have: sun_path's 108
// bytes, the last one not necessarily a NUL.
const maxName = 108

const (
	unixDiagMsgLen = 16 // struct unix_diag_msg
	unixDiagName   = 0  // UNIX_DIAG_NAME attribute
	unixDiagVFS    = 1  // UNIX_DIAG_VFS attribute: struct unix_diag_vfs
	unixDiagVFSLen = 8  // struct unix_diag_vfs {__u32 udiag_vfs_ino; __u32 udiag_vfs_dev;}
	nlaHdrLen      = 4  // struct nlattr
)

// names gathers the absolute paths a parser found, each once, and apart
// the relative ones (rel), each once; from sock_diag also the files the
// sockets were bound to (files).
type names struct {
	seen  map[string]bool
	out   []string
	rel   []string
	files *Files
}

// Files says which files are the files of bound sockets (sock_diag's
// UNIX_DIAG_VFS: the inode the socket was bound to, whatever its name is
// now). A nil *Files knows none (the list came from /proc/net/unix, which
// has the socket's inode, not its file's).
//
// By inode number alone, its low 32 bits (udiag_vfs_ino is a __u32), not
// the device: the kernel gives the superblock's s_dev, which is not the
// st_dev stat(2) shows on btrfs (a subvolume's own device) or for an
// overlayfs lower file, and a match missed there would leave a live
// socket unmasked. A file of another file system with the same number is
// taken for a live socket: a mask too many (one per live socket and file
// system at most: numbers are unique within one), never one too few.
type Files struct {
	byName map[string][]uint32 // a name as bound -> the inodes bound by it
	live   map[uint32]bool
}

// Live reports whether ino is, by its low 32 bits, the inode number of a
// bound socket's file.
func (f *Files) Live(ino uint64) bool {
	return f != nil && f.live[uint32(ino)]
}

// Holds reports whether the file of inode ino at name is, by its number,
// one a socket was bound to by that very name: false for a file put there
// after the bound one was renamed away (then the socket lives on under
// another name). A name the kernel did not give (a relative name placed
// in a working directory, Bound's) holds any bound socket's file.
func (f *Files) Holds(name string, ino uint64) bool {
	if f == nil {
		return false
	}
	inos, ok := f.byName[name]
	if !ok {
		return f.live[uint32(ino)]
	}
	return slices.Contains(inos, uint32(ino))
}

// Inodes is the inode numbers (low 32 bits) the kernel lists sockets
// bound by name to, sorted (nil if none or f is nil).
func (f *Files) Inodes(name string) []uint32 {
	if f == nil || len(f.byName[name]) == 0 {
		return nil
	}
	inos := slices.Clone(f.byName[name])
	slices.Sort(inos)
	return inos
}

// addFile records that a socket was bound to the file of inode ino by
// name p (as add takes it).
func (n *names) addFile(p string, ino uint32) {
	if n.files == nil {
		n.files = &Files{byName: map[string][]uint32{}, live: map[uint32]bool{}}
	}
	n.files.live[ino] = true
	if i := strings.IndexByte(p, 0); i >= 0 {
		p = p[:i]
	}
	if p == "" {
		return
	}
	if !slices.Contains(n.files.byName[p], ino) {
		n.files.byName[p] = append(n.files.byName[p], ino)
	}
}

// add keeps a name once. A path's name ends at its first NUL. An abstract
// name (a leading NUL; in /proc/net/unix a leading '@', at true) is left
// out: it belongs to the network namespace, and Landlock scopes it. A
// relative name goes to rel: the kernel keeps the name as given, relative
// to the binder's working directory at bind(2), which it does not say.
func (n *names) add(p string, at bool) {
	if i := strings.IndexByte(p, 0); i >= 0 {
		p = p[:i]
	}
	if p == "" || at && p[0] == '@' || n.seen[p] {
		return
	}
	if n.seen == nil {
		n.seen = map[string]bool{}
	}
	n.seen[p] = true
	if p[0] != '/' {
		n.rel = append(n.rel, p)
		return
	}
	n.out = append(n.out, p)
}

// parseDiag reads one datagram of a sock_diag dump of AF_UNIX sockets
// (netlink messages, each a struct unix_diag_msg and its attributes) and adds
// each UNIX_DIAG_NAME to n. done is true when the dump's NLMSG_DONE came;
// an NLMSG_ERROR or a malformed datagram is an error (the caller falls back
// to /proc/net/unix rather than trust half a list).
func parseDiag(b []byte, n *names) (done bool, err error) {
	return sockdiag.Walk(b, func(data []byte) {
		if len(data) < unixDiagMsgLen {
			return
		}
		a := data[unixDiagMsgLen:]
		name, vfs := "", false
		var ino uint32
		for len(a) >= nlaHdrLen {
			l := int(binary.NativeEndian.Uint16(a))
			if l < nlaHdrLen || l > len(a) {
				break
			}
			// The attribute type's top bits are flags (NLA_F_NESTED,
			// NLA_F_NET_BYTEORDER); the kernel sets neither on a name.
			switch binary.NativeEndian.Uint16(a[2:]) &^ 0xc000 {
			case unixDiagName:
				name = string(a[nlaHdrLen:l])
				n.add(name, false)
			case unixDiagVFS:
				if l >= nlaHdrLen+unixDiagVFSLen {
					ino, vfs = binary.NativeEndian.Uint32(a[nlaHdrLen:]), true
				}
			}
			a = a[min((l+3)&^3, len(a)):]
		}
		// Why: the kernel's name is the bind(2) name only; the file's
		// inode is the socket wherever that file is now (renamed, its
		// directory renamed, another hard link).
		if vfs {
			n.addFile(name, ino)
		}
	})
}

// parseProc reads /proc/net/unix: a header, then one record per socket,
// "Num: RefCount Protocol Flags Type St Inode[ Path]". The kernel prints the
// path's bytes as they are (net/unix/af_unix.c, unix_seq_show: no escaping,
// an abstract name's NULs as '@'), so a name with a newline runs over into
// the next lines, and the text after the newline may itself look like a
// record. Whose line a line is cannot be told from the text, so parseProc
// keeps every reading: paths has each record's path as its line gives it;
// overrun has each record's path joined with each following line while the
// whole fits a name's 108 bytes (ordinary names give some too: the next
// record read as their tail), for the caller to keep those that are sockets;
// rel has the relative names. A missed name would leave a host service reachable.
func parseProc(data []byte) (paths, overrun, rel []string) {
	var n, o names
	lines := bytes.Split(data, []byte{'\n'})
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1] // the newline ending the last record
	}
	for i, line := range lines {
		if i == 0 && bytes.HasPrefix(line, []byte("Num ")) {
			continue // the header
		}
		path, ok := procRecord(line)
		if !ok || len(path) == 0 {
			continue // a name's continuation, an unnamed socket
		}
		p := string(path)
		n.add(p, true)
		if p[0] != '/' {
			continue // abstract, or relative: no joined readings
		}
		// Why: a newline in the name ended the record early; the rest
		// of the name is on the next lines.
		for _, next := range lines[i+1:] {
			if len(p)+1+len(next) > maxName {
				break
			}
			p += "\n" + string(next)
			o.add(p, true)
		}
	}
	return n.out, o.out, n.rel
}

// procRecord parses the seven fields before a /proc/net/unix record's path
// ("%pK: %08X %08X %08X %04X %02X %5lu") and returns what follows the one
// space after them: the path, or nothing for an unnamed socket. ok is false
// for a line that is no record (a name's continuation).
func procRecord(line []byte) (path []byte, ok bool) {
	rest := line
	for f := range 7 {
		rest = bytes.TrimLeft(rest, " ")
		end := bytes.IndexByte(rest, ' ')
		if end < 0 {
			end = len(rest)
		}
		tok := rest[:end]
		rest = rest[end:]
		switch f {
		case 0:
			if len(tok) < 2 || tok[len(tok)-1] != ':' || !isDigits(tok[:len(tok)-1], 16) {
				return nil, false
			}
		case 6:
			if !isDigits(tok, 10) {
				return nil, false
			}
		default:
			if !isDigits(tok, 16) {
				return nil, false
			}
		}
	}
	if len(rest) == 0 {
		return nil, true
	}
	return rest[1:], true // after the one space the kernel puts before it
}

// isDigits reports whether b is one or more digits of base 10 or 16.
func isDigits(b []byte, base int) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
		case base == 16 && ('a' <= c && c <= 'f' || 'A' <= c && c <= 'F'):
		default:
			return false
		}
	}
	return true
}
