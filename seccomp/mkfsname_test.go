package seccomp

import (
	"regexp"
	"testing"
)

// mkfsRE is the mkfs rule's expression, which mkfsName writes out.
var mkfsRE = regexp.MustCompile(`^(mkfs(\..+)?|mke2fs|mkswap|mkdosfs|mkntfs|wipefs)$`)

var mkfsSeeds = []string{"", "mkfs", "mkfs.", "mkfs.ext4", "mkfs.x", "mkfs.\n", "mkfs.a\n", "mkfs.\na",
	"mkfsx", "xmkfs", "mkfs.ext4 ", " mkfs", "mke2fs", "mke2fsx", "mkswap", "mkdosfs", "mkntfs",
	"wipefs", "wipefs\n", "mkfs\n", "mkfs.\xff", "mkfs.\x00", "MKFS", "mkfs.fat", "mkfs.btrfs"}

func TestMkfsNameIsTheExpression(t *testing.T) {
	for _, s := range mkfsSeeds {
		if got, want := mkfsName(s), mkfsRE.MatchString(s); got != want {
			t.Errorf("mkfsName(%q) = %v, the expression says %v", s, got, want)
		}
	}
}

func FuzzMkfsName(f *testing.F) {
	for _, s := range mkfsSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := mkfsName(s), mkfsRE.MatchString(s); got != want {
			t.Errorf("mkfsName(%q) = %v, the expression says %v", s, got, want)
		}
	})
}
