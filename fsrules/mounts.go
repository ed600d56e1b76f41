package fsrules

import (
	"bytes"
	"strings"

	"github.com/jail-sandbox/jail/internal/rawread"
)

// ReadMountinfo reads /proc/self/mountinfo (the plan reads it once and
// hands it to Expand through Input.Mountinfo).
func ReadMountinfo() ([]byte, error) { return rawread.File("/proc/self/mountinfo", 8192) }

// Mount is one line of /proc/self/mountinfo, as far as the walk needs it.
type Mount struct {
	Point  string // the mount point, unescaped
	FSType string
	// Dev is the file system's MAJ:MIN and Root the directory of that
	// file system the mount shows at Point (unescaped): two mounts with
	// the same Dev show the same files where their Roots overlap.
	Dev, Root string
}

// ParseMountinfo reads the mount points and filesystem types of a
// /proc/PID/mountinfo file (proc(5)): "ID PARENT MAJ:MIN ROOT POINT OPTS
// [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS". Lines it cannot read are
// skipped; octal escapes (\040 for a space) are decoded.
func ParseMountinfo(data []byte) []Mount {
	var out []Mount
	for _, line := range bytes.Split(data, []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) < 7 {
			continue
		}
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+1 >= len(f) || !strings.HasPrefix(f[4], "/") {
			continue
		}
		out = append(out, Mount{Point: unescapeOctal(f[4]), FSType: f[sep+1], Dev: f[2], Root: unescapeOctal(f[3])})
	}
	return out
}

// unescapeOctal decodes the \NNN escapes the kernel writes for space, tab,
// newline and backslash in mount points.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] >= '0' && s[i+1] <= '3' && isOctal(s[i+2]) && isOctal(s[i+3]) {
			v := (s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0')
			b.WriteByte(v)
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// pseudoFS tells filesystem types that hold no user files: kernel interfaces
// (the sandbox has its own /proc, /sys and /dev) and automount triggers
// (walking one would mount it). The walk does not descend into them.
func pseudoFS(fstype string) bool {
	// A switch, not a package-level map: a map literal is built in the
	// package init of every jail process (issue 16).
	switch fstype {
	case "proc", "sysfs", "devtmpfs", "devpts", "cgroup", "cgroup2",
		"debugfs", "tracefs", "securityfs", "bpf", "pstore", "configfs",
		"fusectl", "mqueue", "hugetlbfs", "autofs", "binfmt_misc",
		"efivarfs", "nsfs", "rpc_pipefs", "selinuxfs":
		return true
	}
	return false
}
