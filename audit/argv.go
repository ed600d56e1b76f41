package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// Bounds of the argv an exec event stores. The kernel takes up to 128 KiB
// per argument and megabytes in all; a trail that stored that much per exec
// would let an agent fill the host's disk with failed execs. Past the
// bounds the event keeps a prefix, says so with a marker, and carries the
// count, size and SHA-256 of the whole argv, so the record stays honest.
const (
	MaxArgBytes  = 1024    // per argument
	MaxArgvBytes = 8 << 10 // all arguments together
	MaxArgs      = 256     // arguments kept
	argMarkerFmt = "…[+%d bytes]"
)

// ArgvDigest describes an argv that was stored cut.
type ArgvDigest struct {
	Argc   int    // arguments in the whole argv
	Bytes  int64  // bytes of the whole argv, each argument NUL-terminated (as in /proc/PID/cmdline)
	SHA256 string // hex SHA-256 of exactly those bytes
}

// BoundArgv returns argv as an exec event stores it: each argument cut to
// MaxArgBytes, at most MaxArgs arguments, at most MaxArgvBytes in all, a cut
// argument ending in "…[+N bytes]" and a final "…[+N args]" when arguments
// were left out. The digest is nil when nothing was cut.
func BoundArgv(argv []string) ([]string, *ArgvDigest) {
	var total int64
	for _, a := range argv {
		total += int64(len(a)) + 1
	}
	if len(argv) <= MaxArgs && total-int64(len(argv)) <= MaxArgvBytes && maxLen(argv) <= MaxArgBytes {
		return argv, nil
	}
	h := sha256.New()
	for _, a := range argv {
		h.Write([]byte(a))
		h.Write([]byte{0})
	}
	d := &ArgvDigest{Argc: len(argv), Bytes: total, SHA256: hex.EncodeToString(h.Sum(nil))}
	out := make([]string, 0, min(len(argv), MaxArgs)+1)
	budget := MaxArgvBytes
	for i, a := range argv {
		if i == MaxArgs || budget <= 0 {
			out = append(out, "…[+"+strconv.Itoa(len(argv)-i)+" args]")
			break
		}
		keep := min(len(a), MaxArgBytes, budget)
		if keep < len(a) {
			keep = utf8Cut(a, keep)
			out = append(out, a[:keep]+"…[+"+strconv.Itoa(len(a)-keep)+" bytes]")
		} else {
			out = append(out, a)
		}
		budget -= keep
	}
	return out, d
}

func maxLen(ss []string) int {
	m := 0
	for _, s := range ss {
		m = max(m, len(s))
	}
	return m
}

// utf8Cut moves n back to a rune boundary of s (at most 3 bytes), so a cut
// never splits a character into bytes the reader would show as garbage.
func utf8Cut(s string, n int) int {
	for i := 0; i < 3 && n > 0 && n < len(s) && s[n]&0xc0 == 0x80; i++ {
		n--
	}
	return n
}
