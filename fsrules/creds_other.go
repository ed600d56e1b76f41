//go:build !linux

package fsrules

import (
	"fmt"
	"os"
	"sort"
)

// creds names what access(2) decides by, besides the inode (see the Linux
// version). A test seam.
var creds = func() string {
	groups, _ := os.Getgroups()
	sort.Ints(groups)
	return fmt.Sprintf("uid %d gid %d groups %v", os.Geteuid(), os.Getegid(), groups)
}

// Creds names the process's credentials as access checks see them: what a
// cached answer of a directory's listing is valid for.
func Creds() string { return creds() }
