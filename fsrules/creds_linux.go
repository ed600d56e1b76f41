package fsrules

import (
	"fmt"
	"sort"

	"golang.org/x/sys/unix"
)

// creds names what faccessat(2) with AT_EACCESS decides by, besides the
// inode: the effective uid and gid, the supplementary groups and the
// effective capabilities (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH). A test
// seam.
var creds = func() string {
	groups, _ := unix.Getgroups()
	sort.Ints(groups)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	caps := "unknown"
	if unix.Capget(&hdr, &data[0]) == nil {
		caps = fmt.Sprintf("%x:%x", data[1].Effective, data[0].Effective)
	}
	return fmt.Sprintf("uid %d gid %d groups %v caps %s", unix.Geteuid(), unix.Getegid(), groups, caps)
}

// Creds names the process's credentials as access checks see them: what a
// cached answer of a directory's listing is valid for.
func Creds() string { return creds() }
