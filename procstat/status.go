package procstat

import "bytes"

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
