// Package proctree ends a process and everything that came from it where
// no cgroup of its own holds them: jail exec's command whose start was
// given up (its client was told it did not start), which may have moved
// processes out of its process group (setsid) before the kill.
//
// It reads /proc only. A process is the command's when it is the command,
// its parent is one of the command's, or its process group or session is
// one a process of the command's made (a setsid'd child leads a session
// whose id is its pid; that id outlives the leader for the session's other
// members). Each one found is stopped (SIGSTOP: it cannot fork, and a
// stopped parent keeps its children's parent link), /proc is read again
// until a pass finds none new, then all are killed. What would escape it:
// a process already reparented (its parent gone) that left both the group
// and the session before the first pass: its link to the command is gone
// from /proc. init starts each jail exec command as its own child
// subreaper (ns/reaper_linux.go), so such a process is re-parented to the
// command, not to init, while the command lives, and is found by its
// parent; only once the command itself has exited would a cgroup alone
// still hold it.
package proctree
