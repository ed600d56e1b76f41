package proctree

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startTree starts sh in a process group of its own which leaves a
// setsid'd sleep (a session of its own) and a child of that sleep's
// session leader, and says the setsid'd one's pid.
func startTree(t *testing.T) (*exec.Cmd, int) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", `setsid /bin/sh -c 'sleep 300 & echo $$; wait' & sleep 300`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		t.Fatalf("the tree said no pid: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	return cmd, pid
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && len(b) > i+2 && b[i+2] != 'Z'
}

// TestKillSetsid: Kill reaches what the command moved out of its process
// group. The kill jail exec's deadline sent before (kill -pgid) is tried
// first and must leave the setsid'd process alive, or this test shows
// nothing.
func TestKillSetsid(t *testing.T) {
	cmd, escaped := startTree(t)
	defer syscall.Kill(-escaped, syscall.SIGKILL)
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	time.Sleep(100 * time.Millisecond)
	if !alive(escaped) {
		t.Fatalf("the setsid'd process %d died of the process group's kill: the test proves nothing", escaped)
	}
	syscall.Kill(-escaped, syscall.SIGKILL)

	cmd, escaped = startTree(t)
	defer syscall.Kill(-escaped, syscall.SIGKILL)
	// The echo comes from the setsid'd sh after it forked its sleep; the
	// outer sh may not have forked its own sleep by then (CI saw 3): the
	// outer sh has two children (the setsid'd sh, its sleep), that sh one.
	waitChildren(t, cmd.Process.Pid, 2)
	waitChildren(t, escaped, 1)
	never := map[int]bool{os.Getpid(): true}
	n := Kill("/proc", cmd.Process.Pid, 0, never, func(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) })
	cmd.Wait()
	if n < 4 {
		t.Errorf("Kill killed %d processes, want at least 4 (sh, sleep, the setsid'd sh and its sleep)", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(escaped) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(escaped) {
		t.Fatalf("the setsid'd process %d survived Kill", escaped)
	}
	if !alive(os.Getpid()) {
		t.Fatal("unreachable")
	}
}

// TestKillReusedPid: a live root with another start time is not the
// command: nothing is done.
func TestKillReusedPid(t *testing.T) {
	cmd, escaped := startTree(t)
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		syscall.Kill(-escaped, syscall.SIGKILL)
		cmd.Wait()
	}()
	sent := 0
	n := Kill("/proc", cmd.Process.Pid, 1, nil, func(int, syscall.Signal) error { sent++; return nil })
	if n != 0 || sent != 0 {
		t.Fatalf("Kill with a wrong start time signalled %d processes", sent)
	}
}

// waitChildren waits until process p has n children: the tree is whole.
func waitChildren(t *testing.T, p, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for children(p) < n {
		if time.Now().After(deadline) {
			t.Fatalf("process %d has fewer than %d children after 5 s", p, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// children counts the processes whose parent (field 4 of stat) is p.
func children(p int) int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(p) {
			n++
		}
	}
	return n
}
