// Package notice is jail's one channel for messages to the user.
//
// A Notice is typed (kind, severity, text, and what makes two notices the
// same thing). Every notice goes to one Sink, which hands it to a recorder
// (the audit trail) and then either writes it at once, one line with the
// line ending the terminal needs, or, while jail relays a terminal to the
// agent (Hold), keeps it: the agent owns the screen, and a line of jail's in
// the middle of a full-screen program breaks it. Release prints what was
// kept as a short summary once the terminal is restored. Notices that are
// the same thing (same Kind and Group) are shown once and counted. An
// urgent notice (a security event the user must see now) is shown even
// with --quiet, and while held it is written at once as well, through a
// writer the supervisor sets (SetUrgent) that knows how to put one line on
// the agent's screen; AlsoUrgent gets each urgent line besides (the client
// attached to a background sandbox's terminal, jail exec clients).
//
// The package knows nothing of jail's other packages; the supervisor owns
// the Sink and decides when a terminal is relayed.
package notice
