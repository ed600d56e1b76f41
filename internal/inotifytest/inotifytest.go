// Package inotifytest lets tests see the inotify watches the kernel holds
// for one of the test process's descriptors, through its fdinfo. The
// agent-configuration guard and the sentinel both keep their descriptor,
// without watches, until a late close; their tests check both halves.
package inotifytest

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Watches reads how many watches the kernel holds for descriptor fd of this
// process, and whether fd is an inotify descriptor at all (a closed or
// reused descriptor reports false).
func Watches(fd int) (n int, open bool) {
	if l, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd)); err != nil || l != "anon_inode:inotify" {
		return 0, false
	}
	b, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		return 0, false
	}
	return strings.Count(string(b), "inotify wd:"), true
}

// Unwatched calls unwatch and fails t unless, when it returns, descriptor
// fd is still open with no watch, and the watch loop (done) ends within 5 s
// on its own; a second call must then do nothing.
func Unwatched(t testing.TB, fd int, done <-chan struct{}, unwatch func()) {
	t.Helper()
	unwatch()
	if n, open := Watches(fd); !open || n != 0 {
		t.Fatalf("when Unwatch returned: descriptor open %v with %d watches, want open with none", open, n)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the watch loop did not end after Unwatch")
	}
	unwatch() // again: nothing
}
