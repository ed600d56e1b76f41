package dircache

import "golang.org/x/sys/unix"

// sysFstatat is fstatat(2)'s number (lstatKey); 0: use unix.Lstat.
const sysFstatat = unix.SYS_FSTATAT
