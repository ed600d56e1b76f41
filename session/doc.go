// Package session is the wire of a running sandbox's control socket: the
// requests a client sends (kill, stop, exec, inspect, and signals to an
// exec'd command), the replies, and a line-framed connection that carries
// file descriptors (SCM_RIGHTS) beside the JSON lines. The supervisor
// (package sandbox) serves it; jail's CLI and the public Go API (the
// module's root package) are its clients.
//
// One request per connection. An exec connection stays open for the
// command's life: the supervisor answers "started" (with the pty's master
// fd for a terminal), then "exit"; meanwhile the client may send "signal"
// requests. The client's stdio fds travel with the exec request; they are
// never a terminal (the supervisor refuses one: CVE-2017-5226).
package session
