// Package subid reads /etc/subuid: which user owns each range of
// subordinate uids (shadow-utils' newuidmap maps them into a user's
// rootless containers; useradd gives 65,536 from 100000 by default). A
// file a container's process binds is owned by one of its owner's
// subordinate uids on the host, so jail's host-socket caps count those
// sockets as the owner's (sandbox/hostsockets.go).
//
// The file is root's to write, yet parsed as untrusted text (a line too
// long, a count that overflows, a name no one has are skipped, not
// errors): Parse is pure, table-tested and fuzzed. Only uids matter here:
// a socket's owner is the file's uid (/etc/subgid ranges give groups).
package subid

import (
	"bytes"
	"os"
	"os/user"
	"sort"
	"strconv"
)

// Range is Count subordinate uids from Start, owned by Owner.
type Range struct {
	Owner, Start, Count uint32
}

// Ranges is a file's ranges sorted by Start (Parse).
type Ranges []Range

// maxLines bounds how many lines Parse reads: a site's file has one per
// user; past that the rest are ignored (their sockets count as their
// own uids', as without the file).
const maxLines = 1 << 16

// Parse reads subuid text: "owner:start:count" per line, owner a login
// name (lookup gives its uid; a name it does not know is skipped) or a
// decimal uid. Blank lines, lines starting with '#', malformed lines and
// ranges of count 0 or past the last uid are skipped.
func Parse(data []byte, lookup func(name string) (uint32, bool)) Ranges {
	var out Ranges
	for i, line := range bytes.Split(data, []byte("\n")) {
		if i >= maxLines {
			break
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		f := bytes.Split(line, []byte(":"))
		if len(f) != 3 || len(f[0]) == 0 {
			continue
		}
		start, err1 := strconv.ParseUint(string(f[1]), 10, 32)
		count, err2 := strconv.ParseUint(string(f[2]), 10, 32)
		// Why: a range past 2^32-1 would wrap and claim low uids
		// (root's, daemons') for the owner.
		if err1 != nil || err2 != nil || count == 0 || start+count-1 > 1<<32-1 {
			continue
		}
		owner, ok := ownerID(string(f[0]), lookup)
		if !ok {
			continue
		}
		out = append(out, Range{Owner: owner, Start: uint32(start), Count: uint32(count)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// ownerID is a line's owner as a uid: a decimal uid as it is (newuidmap
// takes both), else the name's.
func ownerID(name string, lookup func(string) (uint32, bool)) (uint32, bool) {
	if n, err := strconv.ParseUint(name, 10, 32); err == nil {
		return uint32(n), true
	}
	if lookup == nil {
		return 0, false
	}
	return lookup(name)
}

// Owner returns the owner of uid's range, if a range holds it. Ranges
// that overlap (a misconfiguration) answer with the one starting nearest
// below uid.
func (rs Ranges) Owner(uid uint32) (uint32, bool) {
	i := sort.Search(len(rs), func(i int) bool { return rs[i].Start > uid }) - 1
	if i < 0 || uid-rs[i].Start >= rs[i].Count {
		return 0, false
	}
	return rs[i].Owner, true
}

// Load parses path (/etc/subuid), names looked up in the user database
// (os/user). A missing or unreadable file is no ranges.
func Load(path string) Ranges {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return Parse(data, lookupUser)
}

// lookupUser is a login name's uid from the user database.
func lookupUser(name string) (uint32, bool) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(u.Uid, 10, 32)
	return uint32(n), err == nil
}
