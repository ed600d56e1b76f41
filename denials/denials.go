package denials

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// Path is where the record appears inside the sandbox; Dir is the read-only
// directory that holds it (a mount point, so it cannot be renamed away) and
// File its name there. Env is the variable that names Path.
const (
	Dir  = "/run/jail"
	File = "denials.jsonl"
	Path = Dir + "/" + File
	Env  = "JAIL_DENIALS"
)

// DefaultBudget bounds the record: 1 MiB holds about 5,000 denials.
const DefaultBudget = 1 << 20

// Kinds of Entry.
const (
	KindNet       = "net"       // a TCP flow or proxy request jail refused
	KindExec      = "exec"      // a command the exec guard rail refused
	KindTruncated = "truncated" // the budget is spent; nothing more is written
)

// maxField bounds each string of an Entry (argv elements included), so one
// line cannot take the whole budget.
const maxField = 1024

// Entry is one line of the record.
type Entry struct {
	Time   time.Time `json:"time"`
	Kind   string    `json:"kind"`
	Target string    `json:"target"`         // net: NAME:PORT or ADDR:PORT; exec: the program's path
	Argv   []string  `json:"argv,omitempty"` // exec: the command line (bounded)
	Reason string    `json:"reason"`
	// Allow names the flag the user could add to allow it, when there is
	// one and naming it tells the agent nothing new.
	Allow string `json:"allow,omitempty"`
}

// Writer appends entries to the record, one whole line per write, until the
// budget is spent. It is safe for concurrent use.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	budget  int64
	used    int64
	full    bool
	dropped int64
	now     func() time.Time
}

// NewWriter returns a Writer appending to w (opened O_APPEND, or a buffer in
// tests) with budget bytes in all; budget <= 0 means DefaultBudget.
func NewWriter(w io.Writer, budget int64) *Writer {
	if budget <= 0 {
		budget = DefaultBudget
	}
	return &Writer{w: w, budget: budget, now: time.Now}
}

// Add writes one entry (its Time set now when zero). Past the budget it
// writes one "truncated" line, then only counts. A write error is returned
// and ends the record (the sandbox may be gone).
func (w *Writer) Add(e Entry) error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.full {
		w.dropped++
		return nil
	}
	if e.Time.IsZero() {
		e.Time = w.now()
	}
	e.Time = e.Time.UTC()
	e.Target, e.Reason, e.Allow = clip(e.Target), clip(e.Reason), clip(e.Allow)
	e.Argv = clipArgv(e.Argv)
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	// Room is kept for the closing "truncated" line.
	const reserve = 256
	if w.used+int64(len(line)) > w.budget-reserve {
		w.full = true
		w.dropped++
		last, _ := json.Marshal(Entry{Time: e.Time, Kind: KindTruncated, Target: Path,
			Reason: fmt.Sprintf("the record is full (%d bytes); later denials are not written here", w.budget)})
		_, err := w.w.Write(append(last, '\n'))
		return err
	}
	n, err := w.w.Write(line)
	w.used += int64(n)
	if err != nil {
		w.full = true
	}
	return err
}

// Dropped returns how many entries were not written for lack of room.
func (w *Writer) Dropped() int64 {
	if w == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dropped
}

func clip(s string) string {
	if len(s) <= maxField {
		return s
	}
	return s[:maxField] + "…"
}

// clipArgv bounds the command line: maxField per argument, 32 of them in
// full, then a count.
func clipArgv(argv []string) []string {
	const keep = 32
	out := make([]string, 0, min(len(argv), keep+1))
	for i, a := range argv {
		if i == keep {
			out = append(out, fmt.Sprintf("… %d more", len(argv)-keep))
			break
		}
		out = append(out, clip(a))
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
