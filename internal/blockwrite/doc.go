// Package blockwrite writes to a descriptor jail shares with other
// processes (the user's terminal, a CI step's log pipe) as a blocking write
// would, whatever they do to it meanwhile.
//
// O_NONBLOCK belongs to the open file description, not to the descriptor:
// every process of the user's session writes through the same one, and
// any of them may set the flag while jail runs (Node does for its stdio;
// a crashed Node program leaves it set). Go's *os.File for a descriptor
// that was blocking when it was made does not wait then: its Write fails
// with EAGAIN as soon as the terminal or the pipe is full, and what was
// being written (the agent's output, jail's notices) would be lost. A
// Writer waits for room instead, as the write would have.
package blockwrite
