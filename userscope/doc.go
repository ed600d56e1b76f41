// Package userscope asks the user's systemd manager, over D-Bus, for a
// transient scope unit with Delegate=yes that holds the calling process, so
// that an unprivileged jail gets a cgroup v2 subtree of its own and with it
// real memory, cpu and pids limits (package cgroup then uses the scope's
// cgroup as its "leaf" parent). It is what `systemd-run --user --scope -p
// Delegate=yes` does, done by jail itself.
//
// One job: Start connects to the user bus (DBUS_SESSION_BUS_ADDRESS, else
// $XDG_RUNTIME_DIR/bus, else /run/user/UID/bus), subscribes to the
// manager's signals, calls org.freedesktop.systemd1.Manager.
// StartTransientUnit("jail-run-PID-RAND.scope", "fail", {PIDs=[pid],
// Delegate=yes, CollectMode=inactive-or-failed, Description}), waits for
// the JobRemoved signal of that job (result "done"), and reads the unit's
// ControlGroup property (GetUnit, then org.freedesktop.DBus.Properties.Get
// on org.freedesktop.systemd1.Scope). The caller checks /proc/self/cgroup:
// the kernel's word, not the manager's, says where the process now is.
//
// The scope lives as long as a process is in it: it ends with jail. With
// Delegate=yes, systemd's OOMPolicy defaults to "continue" (systemd.service
// (5)), so an OOM kill inside the sandbox's own group leaves the scope, and
// jail, running to report it.
//
// Where there is no user bus (WSL2, containers, CI runners, su/sudo
// sessions without XDG_RUNTIME_DIR) or no systemd manager on it, Start
// fails with an error wrapping ErrNoBus or ErrNoManager, and the caller
// falls back (package cgroup says how, and --require-limits decides).
//
// The D-Bus calls sit behind the Manager interface (dbus.go implements it
// with github.com/godbus/dbus/v5) so the logic is tested against an
// in-process fake, and the wire against a private dbus-daemon with a fake
// manager service.
package userscope
