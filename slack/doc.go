// Package slack is the timer slack of jail's supervisor.
//
// Go's monitor thread (sysmon) sleeps 20 us at a time while anything in the
// process runs: in a short `jail -- /bin/true` it wakes about 120 times,
// more than half of the supervisor's context switches, each one a core
// taken for a moment from init's start on a small machine. The kernel lets
// such a sleep end up to the thread's timer slack late (50 us by default)
// and folds wake-ups together within it. sysmon is the first thread the
// runtime creates, before any Go code of the program runs, so its slack
// can only come from the thread that starts the program: jail's ELF entry
// (jail_supervisor_entry, linked with -ldflags=-E=jail_supervisor_entry by
// make build on amd64) sets Supervisor on that thread before the runtime
// starts, and every thread of the supervisor inherits it.
//
// The caller's own slack is kept (Caller): init gives it to every process
// of the sandbox (ns.Spec.AgentTimerSlack), so the agent runs with the
// slack jail was started with, as without this package.
//
// Sleep is a short sleep at the kernel's default slack on the calling
// thread, for a poll on the run's critical path: a Go timer wakes no sooner
// than the netpoller's next millisecond plus the slack.
//
// What a coarser slack delays: a Go timer of the supervisor's (a sleep, a
// deadline) may fire up to Supervisor later; sysmon's hand-off of a
// processor held by a blocking system call while other goroutines wait,
// and its preemption of a goroutine running for 10 ms, come up to that much
// later. The supervisor's timers on a run's way (the run's timeout, a
// kill's grace, heartbeats, quiet periods) are tens of milliseconds and
// longer, and its short polls use Sleep; signals, the control socket,
// init's messages and the agent's exit wake it through descriptors and
// signals, which the slack does not touch.
package slack
