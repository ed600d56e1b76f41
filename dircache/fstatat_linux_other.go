//go:build linux && !amd64 && !arm64

package dircache

// sysFstatat is fstatat(2)'s number (lstatKey); 0: use unix.Lstat (its
// Stat_t may differ from the kernel's stat on these architectures).
const sysFstatat = 0
