package ns

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const closeInheritedEnv = "JAIL_TEST_CLOSE_INHERITED"

// closeInheritedChild is init's first step in a process whose Go poller is
// up (as when stdio was non-blocking at exec; here by a pipe of its own):
// closeInherited, then the poller used, then the descriptors left listed.
func closeInheritedChild() int {
	r, w, err := os.Pipe() // starts the poller (epoll instance, eventfd)
	if err != nil {
		fmt.Println("pipe:", err)
		return 1
	}
	r.Close()
	w.Close()
	closeInherited(3)
	// The poller still works: a read with a deadline waits in it (with
	// its epoll instance closed, the runtime dies: "netpoll failed").
	r, w, err = os.Pipe()
	if err != nil {
		fmt.Println("pipe after:", err)
		return 1
	}
	r.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := r.Read(make([]byte, 1)); !os.IsTimeout(err) {
		fmt.Println("poller read:", err)
		return 1
	}
	rfd, wfd := int(r.Fd()), int(w.Fd())
	fds, err := listFDs()
	if err != nil {
		fmt.Println("list:", err)
		return 1
	}
	for _, fd := range fds {
		if fd < 3 || fd == rfd || fd == wfd {
			continue
		}
		var buf [256]byte
		n, _ := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf[:])
		fmt.Printf("fd %d %s\n", fd, buf[:n])
	}
	fmt.Println("poller ok")
	return 0
}

// init closes what it inherited above its socket, an eventfd among them,
// and keeps only the Go runtime's own poller, which goes on working.
func TestCloseInherited(t *testing.T) {
	leak, err := os.CreateTemp(t.TempDir(), "leak")
	if err != nil {
		t.Fatal(err)
	}
	defer leak.Close()
	efd, err := unix.Eventfd(0, 0) // inherited: no close-on-exec
	if err != nil {
		t.Fatal(err)
	}
	ev := os.NewFile(uintptr(efd), "eventfd")
	defer ev.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), closeInheritedEnv+"=1")
	cmd.ExtraFiles = []*os.File{leak, ev, leak}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "poller ok") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	kept := 0
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(l, "fd ") {
			continue
		}
		f := strings.Fields(l)
		n, _ := strconv.Atoi(f[1])
		if n <= 5 || strings.Contains(l, "leak") || !strings.Contains(l, "anon_inode:[event") {
			t.Errorf("inherited descriptor left open: %s", l)
		}
		kept++
	}
	if kept > 2 {
		t.Errorf("more kept than the poller's epoll instance and eventfd:\n%s", out)
	}
}
