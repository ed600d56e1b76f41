//go:build unix

package audit

import "syscall"

const oNoFollow = syscall.O_NOFOLLOW
