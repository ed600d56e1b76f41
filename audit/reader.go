package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// MaxLineBytes bounds one line; longer lines are reported, not loaded.
const MaxLineBytes = 4 << 20

// MaxProblems bounds Result.Problems.
const MaxProblems = 20

var (
	// ErrMalformed: a line is not a valid audit event.
	ErrMalformed = errors.New("malformed audit line")
	// ErrLineTooLong: a line exceeds MaxLineBytes.
	ErrLineTooLong = errors.New("audit line too long")
	// ErrTruncated: the final line has no newline (the writer was killed mid-write).
	ErrTruncated = errors.New("incomplete final line (writer killed mid-write?)")
	// ErrBroken: Verify found the trail edited, reordered, cut or corrupted.
	ErrBroken = errors.New("audit hash chain broken")
)

// Record is one parsed line of a trail.
type Record struct {
	Line   int                        // 1-based line number in the file
	Seq    uint64                     //
	TS     time.Time                  //
	Type   string                     //
	Prev   string                     //
	Raw    []byte                     // the line without its newline
	Fields map[string]json.RawMessage // every key of the line, including ts/seq/type/prev
}

// Decode unmarshals the line into a typed event struct (Exec, Net, ...).
func (r *Record) Decode(v any) error {
	if err := json.Unmarshal(r.Raw, v); err != nil {
		return &LineError{Line: r.Line, Err: fmt.Errorf("%w: decode %s: %v", ErrMalformed, r.Type, err)}
	}
	return nil
}

// LineError reports a bad line with its number; Raw is the line (possibly cut).
type LineError struct {
	Line int
	Err  error
	Raw  []byte
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ParseLine parses and checks the shape of one line (without its newline).
func ParseLine(line int, raw []byte) (*Record, error) {
	bad := func(format string, a ...any) (*Record, error) {
		return nil, &LineError{Line: line, Err: fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, a...)...), Raw: raw}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return bad("not a JSON object: %v", err)
	}
	if m == nil {
		return bad("not a JSON object")
	}
	rec := &Record{Line: line, Raw: raw, Fields: m}
	var ts string
	if err := json.Unmarshal(m["ts"], &ts); err != nil {
		return bad(`"ts" missing or not a string`)
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return bad(`"ts" is not RFC 3339: %q`, ts)
	}
	rec.TS = t
	seq, err := strconv.ParseUint(string(m["seq"]), 10, 64)
	if err != nil || seq == 0 {
		return bad(`"seq" missing or not a positive integer`)
	}
	rec.Seq = seq
	if err := json.Unmarshal(m["type"], &rec.Type); err != nil || rec.Type == "" {
		return bad(`"type" missing or not a non-empty string`)
	}
	if err := json.Unmarshal(m["prev"], &rec.Prev); err != nil || !isHash(rec.Prev) {
		return bad(`"prev" missing or not 64 lowercase hex digits`)
	}
	return rec, nil
}

func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Reader reads a trail line by line.
type Reader struct {
	br   *bufio.Reader
	line int
	err  error
}

// NewReader returns a Reader over r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next record. A bad line yields a *LineError (wrapping
// ErrMalformed, ErrLineTooLong or ErrTruncated) and reading may continue;
// the end of input yields io.EOF; other errors are I/O errors.
func (r *Reader) Next() (*Record, error) {
	if r.err != nil {
		return nil, r.err
	}
	raw, complete, tooLong, err := r.readLine()
	if err != nil && (!errors.Is(err, io.EOF) || (len(raw) == 0 && !tooLong)) {
		r.err = err
		return nil, err
	}
	r.line++
	if tooLong {
		return nil, &LineError{Line: r.line, Err: fmt.Errorf("%w: over %d bytes", ErrLineTooLong, MaxLineBytes), Raw: raw}
	}
	if !complete {
		return nil, &LineError{Line: r.line, Err: ErrTruncated, Raw: raw}
	}
	return ParseLine(r.line, raw)
}

// readLine returns one line without its newline; complete is false when the
// input ended without one. An over-long line is skipped to its end and
// returned cut to MaxLineBytes.
func (r *Reader) readLine() (raw []byte, complete, tooLong bool, err error) {
	var buf []byte
	for {
		frag, e := r.br.ReadSlice('\n')
		if len(buf)+len(frag) > MaxLineBytes {
			tooLong = true
			if room := MaxLineBytes - len(buf); room > 0 {
				buf = append(buf, frag[:room]...)
			}
		} else {
			buf = append(buf, frag...)
		}
		switch {
		case e == nil:
			return bytes.Clone(bytes.TrimSuffix(buf, []byte("\n"))), true, tooLong, nil
		case errors.Is(e, bufio.ErrBufferFull):
			continue
		case errors.Is(e, io.EOF):
			return buf, false, tooLong, io.EOF
		default:
			return buf, false, tooLong, e
		}
	}
}

// Problem is one defect found by Verify.
type Problem struct {
	Line   int
	Reason string
}

// Result is what Verify found.
type Result struct {
	Lines     int       // complete lines read
	LastSeq   uint64    // seq of the last valid line
	Head      string    // hex SHA-256 of the last complete line (GenesisPrev if none)
	OK        bool      // every complete line parses, seq is contiguous from 1 and the chain holds
	FirstBad  int       // line number of the first problem, 0 if OK
	Problems  []Problem // up to MaxProblems
	Truncated bool      // the final line was incomplete (not counted as a problem)
	Ended     bool      // an exit event is present (the run finished normally)
	Dropped   uint64    // events the writer recorded as lost
}

// Chain checks lines one at a time; Verify and `jail audit --follow` use it.
// After a problem it re-anchors on the bad line, so each edit is reported once.
type Chain struct {
	res     Result
	prev    string
	nextSeq uint64 // 0: unknown after a malformed line
}

// NewChain returns a Chain expecting line 1 with seq 1 and GenesisPrev.
func NewChain() *Chain {
	return &Chain{prev: GenesisPrev, nextSeq: 1, res: Result{OK: true, Head: GenesisPrev}}
}

// Add checks one complete line (rec nil when it did not parse; raw is the
// line either way) and returns the problem found, if any.
func (c *Chain) Add(line int, raw []byte, rec *Record, parseErr error) *Problem {
	c.res.Lines++
	sum := sha256.Sum256(raw)
	h := hex.EncodeToString(sum[:])
	var p *Problem
	switch {
	case rec == nil:
		reason := "malformed line"
		if parseErr != nil {
			var le *LineError
			if errors.As(parseErr, &le) {
				reason = le.Err.Error()
			} else {
				reason = parseErr.Error()
			}
		}
		p = &Problem{line, reason}
		c.nextSeq = 0
	default:
		if c.nextSeq != 0 && rec.Seq != c.nextSeq {
			p = &Problem{line, fmt.Sprintf("seq %d, want %d (line deleted, inserted or reordered)", rec.Seq, c.nextSeq)}
		} else if rec.Prev != c.prev {
			why := fmt.Sprintf("line %d was edited, or lines were deleted or reordered here", line-1)
			if line == 1 {
				why = "first line is not the start of a trail"
			}
			p = &Problem{line, fmt.Sprintf("prev %.12s… does not match %.12s… (%s)", rec.Prev, c.prev, why)}
		}
		c.nextSeq = rec.Seq + 1
		c.res.LastSeq = rec.Seq
		switch rec.Type {
		case TypeExit:
			c.res.Ended = true
		case TypeDropped:
			var d Dropped
			if json.Unmarshal(rec.Raw, &d) == nil {
				c.res.Dropped += d.Count
			}
		}
	}
	c.prev = h
	c.res.Head = h
	if p != nil {
		if c.res.OK {
			c.res.OK = false
			c.res.FirstBad = p.Line
		}
		if len(c.res.Problems) < MaxProblems {
			c.res.Problems = append(c.res.Problems, *p)
		}
	}
	return p
}

// Result returns what the chain has seen so far.
func (c *Chain) Result() Result { return c.res }

// VerifyError is returned by Verify for a broken trail; it wraps ErrBroken.
type VerifyError struct {
	Line   int
	Reason string
}

func (e *VerifyError) Error() string {
	return fmt.Sprintf("%v at line %d: %s", ErrBroken, e.Line, e.Reason)
}
func (e *VerifyError) Unwrap() error { return ErrBroken }

// Verify reads a whole trail and checks that every complete line is a valid
// event, that seq runs 1, 2, 3... and that each prev is the SHA-256 of the
// previous line. It returns a *VerifyError (errors.Is ErrBroken) naming the
// first bad line when not, or the I/O error. An incomplete final line (a
// SIGKILL mid-write) only sets Result.Truncated. The chain cannot detect
// the removal of trailing lines or an edit of the last line: check Ended,
// and compare Head with a copy kept elsewhere (e.g. syslog).
func Verify(r io.Reader) (Result, error) {
	c := NewChain()
	rd := NewReader(r)
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var le *LineError
		if err != nil && !errors.As(err, &le) {
			return c.Result(), fmt.Errorf("verify audit trail: %w", err)
		}
		if errors.Is(err, ErrTruncated) {
			c.res.Truncated = true
			continue
		}
		raw := []byte(nil)
		if rec != nil {
			raw = rec.Raw
		} else {
			raw = le.Raw
		}
		c.Add(rdLine(rec, le), raw, rec, err)
	}
	res := c.Result()
	if !res.OK {
		return res, &VerifyError{Line: res.FirstBad, Reason: res.Problems[0].Reason}
	}
	return res, nil
}

func rdLine(rec *Record, le *LineError) int {
	if rec != nil {
		return rec.Line
	}
	return le.Line
}

// ReadAll parses a whole trail: the good records, the bad lines (with their
// numbers) and any I/O error.
func ReadAll(r io.Reader) ([]*Record, []*LineError, error) {
	var recs []*Record
	var bad []*LineError
	rd := NewReader(r)
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return recs, bad, nil
		}
		var le *LineError
		switch {
		case errors.As(err, &le):
			bad = append(bad, le)
		case err != nil:
			return recs, bad, fmt.Errorf("read audit trail: %w", err)
		default:
			recs = append(recs, rec)
		}
	}
}
