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
//
// An attach connection (jail attach) relays the terminal a sandbox started
// with jail run -d -t keeps: bytes both ways in the JSON lines ("input" and
// "resize" requests, "output" replies), never an fd, so the client's
// terminal never reaches the sandbox and the supervisor keeps the pty when
// the client detaches. One client at a time: a second attach takes over
// (the first gets "detached"). The main command's end comes as "exit".
// jail's urgent notices (a mask that fell) come as "notice", those said
// before the attach first.
package session
