package hostsock

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/sockdiag"
)

const (
	udiagShowName = 0x1 // UDIAG_SHOW_NAME
	udiagShowVFS  = 0x2 // UDIAG_SHOW_VFS: the bound file's inode
)

// procNetUnix is the fallback's list (a test seam).
var procNetUnix = "/proc/net/unix"

// Bound returns the absolute paths of the reachable path-bound Unix sockets
// of the calling process's network namespace, each once, as their binders
// gave them (not resolved).
//
// A socket bound by a relative name is looked for in each working
// directory /proc shows (placeRelative).
func Bound() ([]string, error) {
	paths, _, err := BoundFiles()
	return paths, err
}

// BoundFiles is Bound, with which files the sockets were bound to (nil
// where the list came from /proc/net/unix: sock_diag refused, or no
// unix_diag in this kernel).
func BoundFiles() ([]string, *Files, error) {
	paths, rel, files, err := diag()
	if err != nil {
		var ferr error
		if paths, rel, ferr = fromProc(procNetUnix); ferr != nil {
			return nil, nil, errors.Join(err, ferr)
		}
		files = nil
	}
	return addPlaced(paths, placeRelative(rel, procDir)), files, nil
}

// addPlaced appends to paths each of placed not in it already. Why a
// set: another local user chooses how many names there are (tens of
// thousands of sockets bound in a directory of theirs); a search of the
// list for each made every root start quadratic in them (review14c).
func addPlaced(paths, placed []string) []string {
	if len(placed) == 0 {
		return paths
	}
	have := make(map[string]bool, len(paths)+len(placed))
	for _, p := range paths {
		have[p] = true
	}
	for _, p := range placed {
		if !have[p] {
			have[p] = true
			paths = append(paths, p)
		}
	}
	return paths
}

// procDir is where placeRelative reads the working directories (a test
// seam).
var procDir = "/proc"

// placeRelative returns where sockets bound by the relative names rel are
// found: each joined with each process's working directory that procDir
// shows (the user's own processes; every one for root), kept where a
// socket is. Why: the kernel keeps a relative name as given, not the
// binder's directory (a tool that binds "./agent.sock" in the project it
// serves); the binder, or a process of the same session, usually still
// works there. Not found: one whose binder moved away and left no process
// there, or another user's (their working directories are not shown). A
// socket of that name in another process's directory is a host socket too:
// masking it costs a mask. Nothing is read when rel is empty, as it is on
// most hosts.
func placeRelative(rel []string, proc string) []string {
	if len(rel) == 0 {
		return nil
	}
	ents, err := os.ReadDir(proc)
	if err != nil {
		return nil
	}
	cwds := map[string]bool{}
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		if c, err := os.Readlink(filepath.Join(proc, e.Name(), "cwd")); err == nil && strings.HasPrefix(c, "/") {
			cwds[c] = true
		}
	}
	var out []string
	found := map[string]bool{} // a set: the names are another user's to multiply (addPlaced)
	for c := range cwds {
		for _, r := range rel {
			p := filepath.Join(c, r)
			if found[p] {
				continue
			}
			if fi, err := os.Lstat(p); err == nil && fi.Mode().Type() == os.ModeSocket {
				found[p] = true
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return out
}

// diag asks unix_diag for every socket with its name and its file's inode. Not filtered by
// state: when a client connect(2)s a datagram socket, the kernel marks both
// ends established, and the server's end still takes anyone's datagrams
// (the journal's and syslog's sockets).
func diag() (paths, rel []string, files *Files, err error) {
	// struct unix_diag_req (24 bytes).
	req := make([]byte, 24)
	req[0] = unix.AF_UNIX
	binary.NativeEndian.PutUint32(req[4:], ^uint32(0))                  // udiag_states: all
	binary.NativeEndian.PutUint32(req[12:], udiagShowName|udiagShowVFS) // udiag_show
	var n names
	if err := sockdiag.Dump(req, func(b []byte) (bool, error) { return parseDiag(b, &n) }); err != nil {
		return nil, nil, nil, err
	}
	if n.files == nil {
		// Why: the kernel answered, with no bound file: an empty set,
		// not "unknown".
		n.files = &Files{}
	}
	return n.out, n.rel, n.files, nil
}

// fromProc reads the same list from /proc/net/unix (parseProc). A reading
// of a name over several lines is kept where it is a socket: a name with a
// newline is listed, the many readings that are no name are not.
func fromProc(path string) (paths, rel []string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	paths, overrun, rel := parseProc(data)
	var joined []string
	for _, p := range overrun {
		// Why: the kernel prints a name's newline as it is; the socket
		// of such a name is found only by its joined reading.
		if fi, err := os.Lstat(p); err == nil && fi.Mode().Type() == os.ModeSocket {
			joined = append(joined, p)
		}
	}
	return addPlaced(paths, joined), rel, nil
}
