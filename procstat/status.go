package procstat

import (
	"bytes"
	"strconv"
)

// StatusField is the value of the line "key:" of a /proc/PID/status text
// (a pidfd's fdinfo has the same form): what follows the colon, with
// spaces and tabs trimmed, from the first line that starts with the key.
// ok is false when no line does. A field is found at a line's start only:
// the kernel escapes a control character in the one line a program
// chooses (Name), so no name can add a line of its own.
func StatusField(b []byte, key string) (value []byte, ok bool) {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if len(line) > len(key) && line[len(key)] == ':' && string(line[:len(key)]) == key {
			return bytes.TrimSpace(line[len(key)+1:]), true
		}
	}
	return nil, false
}

// SignalDefault reads a /proc/PID/status: whether signal sig (1-64) is
// neither ignored (SigIgn) nor caught (SigCgt), the process taking its
// default action, and whether both masks were found.
func SignalDefault(status []byte, sig int) (dfl, ok bool) {
	if sig < 1 || sig > 64 {
		return false, false
	}
	bit := uint64(1) << (sig - 1)
	var masks [2]uint64
	for i, key := range []string{"SigIgn", "SigCgt"} {
		v, found := StatusField(status, key)
		if !found {
			return false, false
		}
		m, err := strconv.ParseUint(string(v), 16, 64)
		if err != nil {
			return false, false
		}
		masks[i] = m
	}
	return (masks[0]|masks[1])&bit == 0, true
}
