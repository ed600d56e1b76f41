// Package blockio reads and writes a descriptor jail shares with other
// processes (the user's terminal, a CI step's log pipe) as blocking calls
// would, whatever they do to it meanwhile.
//
// O_NONBLOCK belongs to the open file description, not to the descriptor:
// every process of the user's session reads and writes through the same
// one, and any of them may set the flag while jail runs (a program in the
// same session; a crashed Node program leaves it set). Go's *os.File for
// a descriptor that was blocking when it was made does not wait then: its
// Write fails with EAGAIN as soon as the terminal or the pipe is full, its
// Read as soon as nothing was typed, and what was being relayed (the
// agent's output, the user's keys, jail's notices) would be lost. A
// Writer waits for room instead, a Reader for input, as the call would
// have.
package blockio
