package sandbox

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/notice"
)

// This file: the sandbox's mount namespace, let go of off init's exit.
//
// When init, the last process of the sandbox's mount namespace, exits,
// the kernel tears the namespace down in init's exit, before its parent
// (the supervisor) can reap it: every mount is detached (an expedited RCU
// grace period), and the sandbox's own proc, sysfs and tmpfs instances are
// shut down (their dentries and inodes freed): 0.7-1 ms of init's 1.5 ms
// exit here, which the run's end waited for (finish needs init reaped for
// its figures and the cgroups' removal). Holding a reference to the
// namespace (an nsfs descriptor) leaves that work to whoever drops the
// last one: the supervisor, in a goroutine, once init is reaped, while it
// writes the exit event and removes its registry entry and cgroups; and
// RunSession waits for it before it returns (nothing of the sandbox
// outlives jail). The descriptor is taken once the agent has started
// (init's mounts are all made): taken on init's exit message instead, it
// came too late in 9 runs of 15 (init's main thread, whose /proc entry
// names the namespace, had gone through its exit while other threads had
// not). The descriptor only pins the namespace: the supervisor never
// joins it, it is close-on-exec (jail starts nothing after init), and it
// reaches nothing on the host the sandbox's processes did not; once the
// last of them has gone, nothing is in it.

// holdMounts takes the reference to init's mount namespace (pid: init's
// host pid, which cannot be reused before the supervisor reaps it).
// init's main thread may have ended already (its entry's thread: the
// leader is then a zombie whose /proc entry names no namespace); any
// live thread of init names the same one (/proc/PID/task/TID resolves
// only a thread of PID's group).
func (r *runner) holdMounts(pid int) {
	if r.degraded || pid <= 0 {
		return // no namespace of its own: nothing to tear down
	}
	dir := "/proc/" + strconv.Itoa(pid)
	fd, err := unix.Open(dir+"/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		tasks, _ := os.ReadDir(dir + "/task")
		for _, t := range tasks {
			if fd, err = unix.Open(dir+"/task/"+t.Name()+"/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
				break
			}
		}
	}
	if err != nil {
		// init has ended already (or was never ours to inspect): its
		// exit tears its namespaces down, as it would anyway.
		if r.trace {
			r.notes.Notef("trace", notice.Trace, "supervisor init's mount namespace not held: %v", err)
		}
		return
	}
	r.mu.Lock()
	r.mntFD, r.mntHeld = fd, true
	r.mu.Unlock()
}

// dropMounts lets go of the namespace in the background, once init is
// reaped: the close runs the namespace's teardown (awaitMounts).
func (r *runner) dropMounts() {
	r.mu.Lock()
	fd, held := r.mntFD, r.mntHeld
	r.mntHeld = false
	r.mu.Unlock()
	if !held {
		return
	}
	done := make(chan struct{})
	r.mntDropped = done
	go func() {
		defer close(done)
		unix.Close(fd)
	}()
}

// awaitMounts waits for dropMounts, or drops the namespace now if it was
// not (init never reaped by finish), and for dropHome likewise:
// RunSession returns only after.
func (r *runner) awaitMounts() {
	r.mu.Lock()
	d := r.homeLeft // held, and no end check took it
	r.homeLeft = nil
	r.mu.Unlock()
	if d != nil {
		r.dropHome(d)
	}
	r.dropMounts()
	if r.homeDropped != nil {
		<-r.homeDropped
		r.homeDropped = nil
	}
	if r.mntDropped != nil {
		<-r.mntDropped
		r.mntDropped = nil
	}
}
