package proctree

import (
	"syscall"

	"github.com/jail-sandbox/jail/procstat"
)

// maxPasses bounds the stop passes: a process tree that keeps growing
// faster than it is stopped (it cannot: a stopped process forks nothing)
// still ends in a kill.
const maxPasses = 64

// Kill ends root (a pid in proc's pid namespace) and every process found to
// come from it (package doc), with send delivering a signal to one pid
// (init sends from the thread Landlock lets signal the sandbox's
// processes). never names pids that are not to be touched whatever /proc
// says (the caller itself, init, the agent). It returns how many processes
// it killed. Pids are signalled one by one, never as a group (-pgid): a
// group the command's processes joined may hold others'. rootStart, when
// not 0, is root's start time (procstat.StartTime): a live root with
// another start time is a later process that reuses the pid, and nothing
// is done.
func Kill(proc string, root int, rootStart uint64, never map[int]bool, send func(pid int, sig syscall.Signal) error) int {
	if root <= 0 || never[root] {
		return 0
	}
	if proc == "" {
		proc = "/proc"
	}
	if st, err := procstat.Read(proc, root); err == nil && rootStart != 0 && st.StartTime != rootStart {
		return 0
	}
	stopped := map[int]bool{}
	for pass := 0; pass < maxPasses; pass++ {
		found := members(proc, root, never)
		grew := false
		for _, pid := range found {
			if !stopped[pid] {
				// Stopped before killed: a stopped process forks no more,
				// and its children keep it as their parent while it lives,
				// so the next pass finds them.
				_ = send(pid, syscall.SIGSTOP)
				stopped[pid] = true
				grew = true
			}
		}
		if !grew {
			break
		}
	}
	n := 0
	for pid := range stopped {
		if send(pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n
}

// members lists the live processes under proc that are root's (package
// doc): a fixpoint over one reading of /proc.
func members(proc string, root int, never map[int]bool) []int {
	all, err := procstat.All(proc)
	if err != nil {
		return nil
	}
	return closure(all, root, never)
}
