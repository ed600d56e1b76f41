// Package jobstop stops the calling process as a shell's job stops (Ctrl-Z
// on a cooked terminal), for a program that caught SIGTSTP to give the
// terminal back first: Stop stops the process group with SIGTSTP's default
// action and returns once it is continued (fg or bg). Resumable says
// whether anything could continue it: a job-control shell of the process's
// session above its process group. jail's supervisor uses it when its agent
// stops, jail exec when it gets SIGTSTP.
package jobstop
