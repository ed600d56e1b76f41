package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// GenesisPrev is the "prev" of the first line: the hex SHA-256 of "".
const GenesisPrev = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// TimeFormat is the layout of "ts": RFC 3339 with a fixed nine-digit fraction, UTC.
const TimeFormat = "2006-01-02T15:04:05.000000000Z07:00"

// QueueSize is the capacity of the Writer's event queue. At 300-500 bytes an
// event it bounds the writer's memory to a few MiB.
const QueueSize = 16384

const (
	maxBatchItems = 512
	maxBatchBytes = 256 << 10
)

// ErrClosed is returned by Sync after Close.
var ErrClosed = errors.New("audit: writer is closed")

// reserved are the keys the writer owns; colliding field keys are renamed
// with a "field_" prefix so that no event can forge them.
var reserved = []string{"ts", "seq", "type", "prev"}

// Sink receives a copy of every line after it reached the file (e.g. syslog).
// WriteEvent is called from one goroutine per sink and should give up within
// a fraction of a second; failures are counted and recorded in a dropped event.
type Sink interface {
	Name() string
	WriteEvent(typ string, line []byte) error
	Close() error
}

// Options tune a Writer; the zero value is Create's behaviour.
type Options struct {
	// MaxBytes is the trail's size budget (0 = none). Past it minus a
	// reserve, events are counted by type, not written: one dropped event
	// with reason "budget" marks the moment, a final one (before exit, kill
	// and timeout events and at Close) carries the rest, and the exit event
	// says how many were not written. start, limit, signal, kill and
	// timeout events may use the reserve, signal events not its last
	// part (the agent can cause them at will), unmasked events a part of
	// their own that neither signals nor denials reach, the run's end
	// (after Ending: deny, quarantine, unmasked and notice events) one
	// that nothing before it reaches; deny, quarantine and
	// unmasked events (and net, dns, exec events whose decision is deny)
	// have a share (an eighth of the budget) that the
	// ordinary ones cannot spend (in it a repeated deny or quarantine is
	// written 4 times, one kind spends a quarter: see shareKeys); exit and the final
	// dropped events are always written. The file never grows past MaxBytes
	// (MinBudget or more; smaller values are raised to it).
	MaxBytes int64
}

// MinBudget is the smallest size budget a Writer accepts.
const MinBudget = 128 << 10

// Reserves inside the budget: essentialReserve for start, limit, signal,
// kill and timeout events once ordinary ones are refused, of which
// endReserve for start, limit, kill and timeout alone; unmaskedReserve,
// above it, for unmasked events (and those above); finalReserve for
// the closing dropped summaries and the exit event alone. Below them,
// denialShare keeps a part of the rest for denials.
const (
	essentialReserve = 60 << 10
	// The agent can make the supervisor record signals at will (it stops
	// itself, and where jail cannot stop as a job it is continued and a
	// SIGCONT recorded, thousands a second): they must not spend the room
	// of the events that end or explain a run, which it cannot cause
	// (a user's kill with its reason, the timeout, a limit). 16 KiB holds
	// about 50 of them.
	endReserve   = 16 << 10
	finalReserve = 4 << 10
	// unmaskedReserve: an unmasked event says that a secret became
	// readable (the host took a mask away). The agent spends the
	// denials' share with its own denials (a blocked command in a loop)
	// and the signal part of the reserve with signals (review14e): an
	// unmasked event after both was counted, not written. The host causes
	// it, once per path, so it gets room of its own above the signals';
	// below endReserve, so that a flood of them (another user's masked
	// sockets going away) cannot take the room of the events that end the
	// run. 16 KiB holds about 60 of them.
	unmaskedReserve = 16 << 10
	// endRoom: the run's end is said by jail itself once the sandbox's
	// processes are gone (Ending): what the exit checks quarantined, an
	// agent configuration put back, a secret unmasked, a git ref or
	// .git the agent deleted (with the command that fetches it back).
	// The agent could spend every part below with what it caused while
	// it ran (a flood of every kind of denial, signals, cheap execs):
	// then these lines were counted, not written, and the user read
	// neither the quarantine nor the fetch-back line (trail16). Nothing
	// before Ending reaches this room; after it, those events may use it,
	// each family (quarantine, deny, unmasked, notice) a 1/kindShareDiv
	// part of endShared, jail's git lines (gitEndPrefix) gitRoom, and
	// each key perKeyShare events (endKeys), so that the many leftovers the agent made (of
	// every quarantine rule) cannot take it all. Below
	// endReserve: the events that end the run keep theirs. 16 KiB holds
	// about 50 of them; jail's git lines have gitRoom besides (Writer.endRoom
	// is the sum).
	// endShared is the four families' part of endRoom (a quarter each).
	endShared = 16 << 10
	// maxGitRoom is the git lines' own part of endRoom (Writer.gitRoom: a
	// 16th of the budget at most, 64 KiB from --audit-max-size's smallest,
	// 1M): a line for each repository a start keeps (at most 64), about 1
	// KiB each. A quarter
	// of endShared held about 8 at realistic path lengths, and the agent
	// can plant repositories that sort before the user's (shallowest
	// first, then by name): the user's line was counted, not written
	// (review16c). Lines longer than 1 KiB (paths near PATH_MAX) can still
	// crowd it; stderr has every line.
	maxGitRoom = 64 << 10
	// denialShare: 1/denialShare of the budget, below the reserves, is
	// kept for deny, quarantine and unmasked events, and refused flows,
	// names and execs (decision deny): what was refused or
	// fell. The agent can spend the ordinary part with events it causes
	// at will and that cost it nothing (execs of /bin/true, DNS lookups,
	// a slow stream over hours); without a share of their own, every
	// denial after that was counted, not written: the trail said how many
	// but not what. They may use the ordinary part as well (8 MiB of
	// their own in the default 64 MiB: some 25,000 denials).
	denialShare = 8
	// envelopeBytes bounds what the writer adds to an event's fields:
	// {"ts":"<35>","seq":<20>,"type":"","prev":"<64>",} and a newline.
	envelopeBytes = 160
)

// DropBudget is the reason of a dropped event written because the trail
// reached its size budget.
const DropBudget = "budget"

// Stats is a snapshot of a Writer's counters.
type Stats struct {
	Written   uint64 // lines in the file (equals the last seq)
	Synced    uint64 // lines known to be on disk: the last seq an fsync covered
	Dropped   uint64 // events not written: the queue was full, a write failed, or the size budget was reached
	Budget    uint64 // of Dropped, those refused by the size budget
	Head      string // hex SHA-256 of the last line written (GenesisPrev if none)
	LateEmits uint64 // Emit calls after Close (a caller bug; nothing can record them)
	MaxQueued int    // deepest the queue has been (QueueSize means events were dropped)
	Fsyncs    uint64 // fsync calls made on the file
}

type item struct {
	ts   time.Time
	typ  string
	body []byte     // marshalled fields without the outer braces
	sync chan error // non-nil: a flush+fsync request, not an event
	// flushOnly: sync asks for the flush without the fsync (Flush).
	flushOnly bool
	// written: an event's own "it is in the file" (RecordWritten),
	// answered after the write, before the fsync the batch may make.
	written chan error
	// kind, key: a deny or quarantine event's, for the denials' share
	// (see shareKeys).
	kind, key string
	// end: an event jail records at the run's end (after Ending), which
	// may use endRoom, a part of it for its family (endFamily).
	end    bool
	family string
}

type lineMeta struct {
	start, end int
	typ        string
	drops      uint64 // for a dropped line: the count it carried
	dropTypes  map[string]uint64
	dropKeys   refusedKeys // what the dropped event counted by key and kind
	dropReason string
	sink       *sinkRunner
}

// Writer appends hash-chained events to an audit trail. Create it in the
// supervisor; it must never be shared with the sandbox.
type Writer struct {
	path string
	f    *os.File
	now  func() time.Time

	mu     sync.RWMutex // guards closed against sends on ch
	closed bool
	// ch holds pointers: a channel's buffer is made whole when the channel
	// is (QueueSize items of ~150 bytes would be 2.3 MiB at every start,
	// one object that pushed the supervisor's later heap past the part
	// package prefault made ahead); an item is made when it is sent.
	ch   chan *item
	done chan struct{}

	dropped  atomic.Uint64 // pending, not yet recorded (all reasons)
	dropMu   sync.Mutex
	pending  map[string]map[string]uint64 // reason ("" or DropBudget) -> type -> count
	pendingN map[string]uint64
	// pendingKeys counts refused denials by key and kind (reason
	// DropBudget), bounded (refusedKeys).
	pendingKeys refusedKeys
	shareKeys   shareKeys
	// ended: Ending was called; endKeys is endRoom's key table.
	ended   atomic.Bool
	endKeys shareKeys

	// The size budget (Options.MaxBytes). accepted estimates the bytes of
	// every event accepted so far (queued or written), so that a burst is
	// refused at Emit, before it costs memory in the queue.
	maxBytes, ordinary, soft, signals, unmasked, ending, essential int64
	// endRoom and gitRoom: see the constants endShared and maxGitRoom.
	endRoom, gitRoom int64
	accepted         atomic.Int64
	over             atomic.Bool
	budgetAnnounced  bool // writer goroutine only
	late             atomic.Uint64
	maxQueued        atomic.Int64

	sinkMu sync.Mutex
	sinks  []*sinkRunner

	statsMu sync.Mutex
	stats   Stats

	beforeWrite func() // test hook, run by the writer goroutine
	beforeFsync func() // test hook, run by the writer goroutine

	// owned by the writer goroutine
	seq      uint64
	prev     string
	off      int64
	err      error
	closeErr error
	buf      []byte
	metas    []lineMeta
	closing  bool // the queue is closed: every pending loss is written now
}

// Create creates the trail at path (parent directories 0700, file 0600) and
// starts the writer goroutine. It refuses an existing file or a symlink
// (O_EXCL|O_NOFOLLOW), so a trail is never appended to or redirected; the
// error then wraps fs.ErrExist. The descriptor is close-on-exec, so it never
// leaks into init or the agent.
func Create(path string) (*Writer, error) {
	return create(path, time.Now, QueueSize, Options{})
}

// CreateOptions is Create with Options (a size budget).
func CreateOptions(path string, o Options) (*Writer, error) {
	return create(path, time.Now, QueueSize, o)
}

func create(path string, now func() time.Time, queue int, o Options) (*Writer, error) {
	if path == "" {
		return nil, errors.New("create audit trail: empty path")
	}
	// 0700: the trail names every command and host the agent touched.
	// The directory as named, not filepath.Dir (which cleans ".." away
	// as text): made where the kernel opens the trail, the place
	// CheckDirs and CheckPlacement checked (MkdirAll walks up the text).
	if i := strings.LastIndexByte(path, filepath.Separator); i > 0 {
		if err := os.MkdirAll(path[:i], 0o700); err != nil {
			return nil, fmt.Errorf("create audit trail directory: %w", err)
		}
	}
	// O_EXCL: never reuse (and so never splice into) an existing trail;
	// O_NOFOLLOW: a planted symlink must not redirect the write (CWE-59).
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND|oNoFollow, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("create audit trail (it already exists; choose another file for `audit`): %w", err)
		}
		return nil, fmt.Errorf("create audit trail: %w", err)
	}
	// Held while the file is open: retention never removes a live trail.
	lockLive(f.Fd())
	w := &Writer{
		path:     path,
		f:        f,
		now:      now,
		ch:       make(chan *item, queue),
		done:     make(chan struct{}),
		pending:  map[string]map[string]uint64{},
		pendingN: map[string]uint64{},
		prev:     GenesisPrev,
		buf:      make([]byte, 0, 64<<10),
	}
	w.stats.Head = GenesisPrev
	if o.MaxBytes > 0 {
		w.maxBytes = max(o.MaxBytes, MinBudget)
		w.gitRoom = min(maxGitRoom, w.maxBytes/16)
		w.endRoom = endShared + w.gitRoom
		w.soft = w.maxBytes - essentialReserve - w.endRoom - unmaskedReserve - finalReserve
		w.ordinary = w.soft - w.maxBytes/denialShare
		w.signals = w.maxBytes - endReserve - w.endRoom - unmaskedReserve - finalReserve
		w.unmasked = w.maxBytes - endReserve - w.endRoom - finalReserve
		w.ending = w.maxBytes - endReserve - finalReserve
		w.essential = w.maxBytes - finalReserve
	}
	go w.run()
	return w, nil
}

// Path returns the trail's path.
func (w *Writer) Path() string { return w.path }

// AddSink makes the writer copy every subsequent line to s (call it before
// the first Emit so the sink sees the start event). Close closes s.
func (w *Writer) AddSink(s Sink) {
	r := &sinkRunner{s: s, ch: make(chan sinkItem, 4096), done: make(chan struct{})}
	go r.run()
	w.sinkMu.Lock()
	w.sinks = append(w.sinks, r)
	w.sinkMu.Unlock()
}

// Record emits a typed event; it is Emit(ev.EventType(), ev).
func (w *Writer) Record(ev Event) { w.Emit(ev.EventType(), ev) }

// Emit queues one event and returns at once. fields is a struct or map whose
// JSON object is merged into the line after ts, seq, type and prev (nil for
// none; other JSON values appear as "value"). The timestamp is taken now and
// fields are marshalled now, so the caller may reuse them. If the queue is
// full the event is counted and a dropped event records the loss as soon as
// the writer catches up; Emit never blocks on I/O.
func (w *Writer) Emit(typ string, fields any) {
	if typ == "" {
		typ = "unknown" // a reader rejects an empty type; keep the event anyway
	}
	it := item{ts: w.now(), typ: typ, body: marshalFields(fields)}
	it.kind, it.key = keyOf(fields)
	w.endItem(&it, fields)
	w.emit(it, false)
}

// RecordRun is Record for an event of the run that may come after Ending
// (a refusal a server of the run decided late, from what the agent left
// in a socket's buffer before it exited): it is never one of the end's
// events, and never reaches endRoom. Ending is marked when the exit check
// starts, while the run's servers still shut down beside it: their late
// refusals' notices, recorded as end events, took the end room's notice
// part, and jail's own end lines were counted, not written (trail17).
func (w *Writer) RecordRun(ev Event) {
	typ := ev.EventType()
	if typ == "" {
		typ = "unknown"
	}
	it := item{ts: w.now(), typ: typ, body: marshalFields(ev)}
	it.kind, it.key = keyOf(ev)
	w.emit(it, false)
}

// Ending tells the writer that the sandbox's processes are gone: the
// deny, quarantine, unmasked and notice events recorded from now on are
// jail's own look at the run's end, and may use endRoom, which nothing
// before it could spend.
func (w *Writer) Ending() { w.ended.Store(true) }

// endItem marks it as an end event after Ending and keys an end event
// that is no denial (a notice by its text, an unmasked event by its path),
// for endKeys.
func (w *Writer) endItem(it *item, fields any) {
	if !w.ended.Load() {
		return
	}
	switch it.typ {
	case TypeDeny, TypeQuarantine, TypeUnmasked, TypeNotice:
		it.end, it.family = true, it.typ
		if n, ok := fields.(Notice); ok && strings.HasPrefix(n.Text, gitEndPrefix) {
			it.family = gitEndFamily
		}
		if it.key != "" {
			return
		}
		what := string(it.body)
		switch f := fields.(type) {
		case Notice:
			what = f.Text
		case Unmasked:
			what = f.Path
		}
		it.kind, it.key = it.typ, cutKey(it.typ+" "+what)
	}
}

// gitEndPrefix begins jail's own end lines of the kept git history (a
// ref or .git the agent deleted, with the command that fetches it back; a
// store not pruned): a family of the end's room of their own. They are
// few (a line a kept repository, at most 64) and no count of them is the
// agent's to raise: the families the agent's leftovers reach (the exit
// check's quarantines, their notices, agent configuration put back) take
// at most three quarters of the room, whatever their rules, so these are
// written after any of them.
const gitEndPrefix = "git: "

// endPart is how much of endRoom the end events of family may take.
func (w *Writer) endPart(family string) int64 {
	if family == gitEndFamily {
		return w.gitRoom
	}
	return endShared / kindShareDiv
}

// gitEndFamily is the family of the end lines that begin with gitEndPrefix.
const gitEndFamily = "notice git"

// RecordWritten records ev as Record does and waits until its line is
// written to the file: readers see it. It does not wait for the fsync an
// exit or kill event gets right after its write: Sync or Close wait for
// that, and the caller can do other work meanwhile (the run's end: its
// registry entry, control socket and cgroups go while the exit event is
// put on disk). Unlike Record it waits for room in the queue, as Sync
// does: what was queued before it is written first, in the same write
// when it can be. An event that could not be queued (closed, over budget:
// never an exit event) is an error.
func (w *Writer) RecordWritten(ev Event) error {
	it := item{ts: w.now(), typ: ev.EventType(), body: marshalFields(ev), written: make(chan error, 1)}
	it.kind, it.key = keyOf(ev)
	w.endItem(&it, ev)
	if !w.emit(it, true) {
		return fmt.Errorf("audit trail %s: %s event not queued", w.path, it.typ)
	}
	return <-it.written
}

// emit queues it (Emit), and tells whether it did; wait: it waits for
// room in the queue rather than counting the event as dropped.
func (w *Writer) emit(it item, wait bool) bool {
	typ := it.typ
	var est int64
	var keyed *shareKeys // the key table charged, if any
	if w.maxBytes > 0 {
		// The budget is charged here, synchronously: however fast events
		// come, what is accepted never exceeds it.
		est = int64(len(it.body)+len(typ)) + envelopeBytes
		limit := w.ordinary
		switch typ {
		case TypeDeny, TypeQuarantine:
			limit = w.soft // their share: see denialShare
		case TypeUnmasked:
			limit = w.unmasked // the share and a reserve: see unmaskedReserve
		case TypeSignal:
			limit = w.signals // never the end's reserve: see endReserve
		case TypeStart, TypeLimit, TypeKill, TypeTimeout:
			limit = w.essential
		case TypeExit:
			limit = 1<<63 - 1 // the end of the record is always written
		default:
			if it.key != "" {
				// A refused flow, name or exec (decision "deny"): a
				// denial, in their share; allowed ones are ordinary.
				limit = w.soft
			}
		}
		if it.end {
			limit = w.ending // endRoom too: see there
		}
		n := w.accepted.Add(est)
		refused := n > limit
		if !refused && it.key != "" && n > w.ordinary {
			// In the denials' share: a repeat of one denial, or a kind
			// that spent its part, is counted so that a different denial
			// after a flood the agent made is still written (trail15).
			refused = true
			if n <= w.soft && w.shareKeys.admit(it.kind, it.key, est, (w.soft-w.ordinary)/kindShareDiv) {
				refused, keyed = false, &w.shareKeys
			} else if it.end && w.endKeys.admit(it.family, it.key, est, w.endPart(it.family)) {
				// The share (or its part of this kind) is spent, by
				// what the agent did: the end's events have their room.
				refused, keyed = false, &w.endKeys
			}
		}
		if refused {
			w.accepted.Add(-est)
			first := !w.over.Swap(true)
			if it.key != "" {
				w.dropKey(it.kind, it.key) // first: the dropped event that counts it carries its key
			}
			w.dropFor(DropBudget, typ, 1)
			if first {
				// Refused events never reach the writer: wake it, so that
				// the dropped event marks the moment the budget was
				// reached, not whenever an event is next written (at the
				// exit, after a flood the agent made to bury what came
				// then).
				w.wake()
			}
			return false
		}
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		w.late.Add(1)
		return false
	}
	if wait {
		w.ch <- &it // the writer empties the queue without taking mu
		return true
	}
	select {
	case w.ch <- &it:
		if q := int64(len(w.ch)); q > w.maxQueued.Load() {
			w.maxQueued.Store(q) // racy max: a high-water mark, not an exact count
		}
		return true
	default:
		w.accepted.Add(-est)
		if keyed == &w.endKeys {
			keyed.release(it.family, it.key, est)
		} else if keyed != nil {
			keyed.release(it.kind, it.key, est)
		}
		w.maxQueued.Store(int64(cap(w.ch)))
		w.drop(typ, 1)
		return false
	}
}

// wake makes the writer write what losses are pending, without waiting
// for the next event; it never blocks (a full queue wakes it anyway).
func (w *Writer) wake() {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return
	}
	select {
	case w.ch <- &item{}: // a zero item only writes pending drop counts
	default:
	}
}

func (w *Writer) drop(typ string, n uint64) { w.dropFor("", typ, n) }

// dropKey counts a denial refused by the budget under its key (for the
// next dropped event's keys; bounded: past maxPendingKeys a new key is
// counted by type only).
func (w *Writer) dropKey(kind, key string) {
	w.dropMu.Lock()
	defer w.dropMu.Unlock()
	w.pendingKeys.add(kind, key)
}

// dropFor counts n lost events of type typ for reason ("" or DropBudget).
func (w *Writer) dropFor(reason, typ string, n uint64) {
	w.dropMu.Lock()
	if w.pending[reason] == nil {
		w.pending[reason] = map[string]uint64{}
	}
	w.pending[reason][typ] += n
	w.pendingN[reason] += n
	w.dropped.Add(n)
	w.dropMu.Unlock()
	w.statsMu.Lock()
	w.stats.Dropped += n
	if reason == DropBudget {
		w.stats.Budget += n
	}
	w.statsMu.Unlock()
}

// Sync waits until every event emitted before it is written and fsynced.
// It returns the first write or fsync error the writer ever hit.
func (w *Writer) Sync() error {
	ch := make(chan error, 1)
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return ErrClosed
	}
	w.ch <- &item{sync: ch} // may wait for queue space; Sync is allowed to block
	w.mu.RUnlock()
	return <-ch
}

// Flush waits until every event emitted before it is written, without an
// fsync: what is queued after it (an exit event, which is fsynced) then has
// the queue to itself. It returns the first write or fsync error the writer
// ever hit.
func (w *Writer) Flush() error {
	ch := make(chan error, 1)
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return ErrClosed
	}
	w.ch <- &item{sync: ch, flushOnly: true} // may wait for queue space, as Sync
	w.mu.RUnlock()
	return <-ch
}

// Close writes every queued event (and a final dropped event if needed),
// stops the sinks, fsyncs and closes the file. It returns the first error the
// writer hit, if any. Close is idempotent.
func (w *Writer) Close() error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.ch)
	}
	w.mu.Unlock()
	<-w.done
	return w.closeErr
}

// Err returns the first write or fsync error so far, without waiting.
func (w *Writer) Err() error {
	w.statsMu.Lock()
	defer w.statsMu.Unlock()
	return w.err
}

// Stats returns a snapshot of the writer's counters.
func (w *Writer) Stats() Stats {
	w.statsMu.Lock()
	s := w.stats
	w.statsMu.Unlock()
	s.LateEmits = w.late.Load()
	s.MaxQueued = int(w.maxQueued.Load())
	return s
}

func (w *Writer) setErr(err error) {
	w.statsMu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.statsMu.Unlock()
}

func (w *Writer) run() {
	defer close(w.done)
	for {
		it, ok := <-w.ch
		if !ok {
			break
		}
		w.batch(*it)
	}
	// Final bookkeeping: pending drops, then the sinks' own losses.
	w.closing = true
	w.batch(item{})
	w.sinkMu.Lock()
	sinks := w.sinks
	w.sinkMu.Unlock()
	for _, r := range sinks {
		r.stop(2 * time.Second)
	}
	w.batch(item{sync: make(chan error, 1)}) // writes sink dropped events, fsyncs
	if err := w.f.Close(); err != nil {
		w.setErr(fmt.Errorf("close audit trail: %w", err))
	}
	for _, r := range sinks {
		if err := r.s.Close(); err != nil {
			w.setErr(fmt.Errorf("close audit sink %s: %w", r.s.Name(), err))
		}
	}
	w.closeErr = w.Err()
}

// batch writes first plus whatever else is queued, with one write(2).
// A zero first item only flushes pending drop counts.
func (w *Writer) batch(first item) {
	w.buf = w.buf[:0]
	w.metas = w.metas[:0]
	startSeq, startPrev := w.seq, w.prev
	var syncs, written []chan error
	fsync := false
	add := func(it item) {
		// Losses are recorded as they happen, except past the budget: then
		// they are summed up before the events that end a run.
		force := w.closing || it.typ == TypeExit || it.typ == TypeKill || it.typ == TypeTimeout
		w.appendDropped(force)
		if it.sync != nil {
			syncs = append(syncs, it.sync)
			if !it.flushOnly {
				fsync = true
			}
			return
		}
		if it.typ == "" && it.body == nil {
			return
		}
		body := it.body
		if it.typ == TypeExit {
			body = w.withTrailDropped(body)
		}
		w.appendLine(it.ts, it.typ, body, lineMeta{typ: it.typ})
		if it.written != nil {
			written = append(written, it.written)
		}
		switch it.typ {
		case TypeKill, TypeExit, TypeTimeout:
			fsync = true // the issue requires the trail on disk at kill and exit
		}
	}
	add(first)
	for len(w.metas) < maxBatchItems && len(w.buf) < maxBatchBytes {
		select {
		case it, ok := <-w.ch:
			if !ok {
				goto write
			}
			add(*it)
			continue
		default:
		}
		break
	}
write:
	if w.beforeWrite != nil {
		w.beforeWrite()
	}
	if len(w.buf) > 0 {
		if _, err := w.f.Write(w.buf); err != nil {
			w.rollback(err, startSeq, startPrev)
		} else {
			w.off += int64(len(w.buf))
			w.statsMu.Lock()
			w.stats.Written = w.seq
			w.stats.Head = w.prev
			w.statsMu.Unlock()
			w.toSinks()
		}
	}
	// RecordWritten's callers learn of the write now, before the fsync
	// below (an exit event's): they await it separately (Sync, Close).
	for _, ch := range written {
		ch <- w.Err()
	}
	w.statsMu.Lock()
	clean := w.stats.Synced == w.stats.Written
	w.statsMu.Unlock()
	// A file whose every written line an fsync already covered has nothing
	// for another to put on disk (Close after the exit event's fsync: an
	// fsync of a clean file still cost 0.1-0.2 ms at every run's end).
	if fsync && !clean {
		if w.beforeFsync != nil {
			w.beforeFsync()
		}
		w.statsMu.Lock()
		w.stats.Fsyncs++
		w.statsMu.Unlock()
		if err := w.f.Sync(); err != nil {
			w.setErr(fmt.Errorf("fsync audit trail %s: %w", w.path, err))
		} else {
			w.statsMu.Lock()
			w.stats.Synced = w.stats.Written
			w.statsMu.Unlock()
		}
	}
	for _, ch := range syncs {
		ch <- w.Err()
	}
}

// rollback undoes a failed (possibly partial) write so that the file keeps
// only complete, chained lines, and counts the lost events as dropped.
func (w *Writer) rollback(err error, seq uint64, prev string) {
	w.setErr(fmt.Errorf("write audit trail %s: %w", w.path, err))
	if terr := w.f.Truncate(w.off); terr != nil {
		w.setErr(fmt.Errorf("truncate audit trail %s after failed write: %w", w.path, terr))
	}
	w.seq, w.prev = seq, prev
	for _, m := range w.metas {
		switch {
		case m.sink != nil:
			m.sink.dropped.Add(m.drops) // record it again later
		case m.typ == TypeDropped && m.dropTypes != nil:
			w.dropMu.Lock()
			if w.pending[m.dropReason] == nil {
				w.pending[m.dropReason] = map[string]uint64{}
			}
			for t, n := range m.dropTypes {
				w.pending[m.dropReason][t] += n
			}
			w.pendingKeys.merge(m.dropKeys)
			w.pendingN[m.dropReason] += m.drops
			w.dropped.Add(m.drops)
			w.dropMu.Unlock()
			if m.dropReason == DropBudget {
				w.budgetAnnounced = false
			}
		default:
			w.drop(m.typ, 1)
		}
	}
}

// appendDropped appends dropped events for pending losses. Past the size
// budget it writes the first budget loss at once (the moment is part of the
// record) and holds the rest until force (an exit, kill or timeout event,
// or Close), so that losses cannot themselves fill the disk.
func (w *Writer) appendDropped(force bool) {
	over := w.over.Load()
	if w.dropped.Load() != 0 {
		w.dropMu.Lock()
		for _, reason := range []string{"", DropBudget} {
			n := w.pendingN[reason]
			if n == 0 {
				continue
			}
			write := force || !over
			if reason == DropBudget {
				write = force || !w.budgetAnnounced
			}
			if !write {
				continue
			}
			types := w.pending[reason]
			delete(w.pending, reason)
			delete(w.pendingN, reason)
			w.dropped.Add(^(n - 1))
			ev := Dropped{Count: n, Types: types, Reason: reason}
			meta := lineMeta{typ: TypeDropped, drops: n, dropTypes: types, dropReason: reason}
			if reason == DropBudget {
				ev.Budget = w.maxBytes
				var taken refusedKeys
				ev.Keys, ev.Others, taken = w.pendingKeys.take()
				w.budgetAnnounced = true
				meta.dropKeys = taken
			}
			w.appendAccounted(TypeDropped, marshalFields(ev), meta)
		}
		w.dropMu.Unlock()
	}
	if over && !force {
		return
	}
	w.sinkMu.Lock()
	sinks := w.sinks
	w.sinkMu.Unlock()
	for _, r := range sinks {
		if n := r.dropped.Swap(0); n != 0 {
			body := marshalFields(Dropped{Count: n, Sink: r.s.Name()})
			w.appendAccounted(TypeDropped, body, lineMeta{typ: TypeDropped, drops: n, sink: r})
		}
	}
}

// appendAccounted appends a line the writer itself makes and charges it to
// the budget.
func (w *Writer) appendAccounted(typ string, body []byte, m lineMeta) {
	before := len(w.buf)
	w.appendLine(w.now(), typ, body, m)
	w.accepted.Add(int64(len(w.buf) - before))
}

// withTrailDropped adds "trail_dropped" to an exit event's fields: how many
// of this run's events the file does not hold (each counted by type in a
// dropped event before it).
func (w *Writer) withTrailDropped(body []byte) []byte {
	w.statsMu.Lock()
	n := w.stats.Dropped
	w.statsMu.Unlock()
	if n == 0 {
		return body
	}
	out := append([]byte{}, body...)
	if len(out) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"trail_dropped":`...)
	return strconv.AppendUint(out, n, 10)
}

// appendLine appends one complete line and advances seq and the chain.
func (w *Writer) appendLine(ts time.Time, typ string, body []byte, m lineMeta) {
	start := len(w.buf)
	w.seq++
	b := w.buf
	b = append(b, `{"ts":"`...)
	b = ts.UTC().AppendFormat(b, TimeFormat)
	b = append(b, `","seq":`...)
	b = strconv.AppendUint(b, w.seq, 10)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, typ)
	b = append(b, `,"prev":"`...)
	b = append(b, w.prev...)
	b = append(b, '"')
	if len(body) > 0 {
		b = append(b, ',')
		b = append(b, body...)
	}
	b = append(b, '}')
	sum := sha256.Sum256(b[start:])
	w.prev = hex.EncodeToString(sum[:])
	m.start, m.end = start, len(b)
	b = append(b, '\n')
	w.buf = b
	w.metas = append(w.metas, m)
}

func (w *Writer) toSinks() {
	w.sinkMu.Lock()
	sinks := w.sinks
	w.sinkMu.Unlock()
	if len(sinks) == 0 {
		return
	}
	for _, m := range w.metas {
		line := bytes.Clone(w.buf[m.start:m.end])
		for _, r := range sinks {
			if r.stopped {
				continue
			}
			select {
			case r.ch <- sinkItem{typ: m.typ, line: line}:
			default:
				r.dropped.Add(1) // never let a slow syslog stall the file
			}
		}
	}
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // strings always marshal
	return append(b, q...)
}

// marshalFields returns the JSON object of fields without its braces.
func marshalFields(fields any) []byte {
	if fields == nil {
		return nil
	}
	var b []byte
	var err error
	ok := false
	if s, isStart := fields.(Start); isStart {
		if p, isPrepared := s.Policy.(Prepared); isPrepared {
			if b, ok = marshalStart(s, p); !ok && p.b == nil {
				s.Policy = p.v // its own error, as if never prepared
				fields = s
			}
		}
	}
	if !ok {
		b, err = marshalEvent(fields)
	}
	if err != nil {
		b, _ = json.Marshal(map[string]string{"marshal_error": err.Error()})
	}
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	if len(b) < 2 || b[0] != '{' {
		b = append(append([]byte(`{"value":`), b...), '}')
	}
	inner := b[1 : len(b)-1]
	for _, k := range reserved {
		if bytes.Contains(inner, []byte(`"`+k+`"`)) {
			return renameReserved(b)
		}
	}
	return inner
}

// renameReserved rewrites an object whose top-level keys collide with the
// writer's own ("ts", "seq", "type", "prev") so that a field can never
// override them. Rare path: keys come out sorted.
func renameReserved(obj []byte) []byte {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		return obj[1 : len(obj)-1]
	}
	for _, k := range reserved {
		if v, ok := m[k]; ok {
			delete(m, k)
			nk := "field_" + k
			for m[nk] != nil {
				nk = "field_" + nk
			}
			m[nk] = v
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []byte
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendJSONString(out, k)
		out = append(out, ':')
		out = append(out, m[k]...)
	}
	return out
}

type sinkItem struct {
	typ  string
	line []byte
}

type sinkRunner struct {
	s       Sink
	ch      chan sinkItem
	dropped atomic.Uint64
	abandon atomic.Bool
	done    chan struct{}
	stopped bool // set and read by the writer goroutine only
}

func (r *sinkRunner) run() {
	defer close(r.done)
	for it := range r.ch {
		if r.abandon.Load() {
			r.dropped.Add(1)
			continue
		}
		if err := r.s.WriteEvent(it.typ, it.line); err != nil {
			r.dropped.Add(1)
		}
	}
}

// stop drains the sink for at most d, then counts what is left as dropped.
func (r *sinkRunner) stop(d time.Duration) {
	r.stopped = true
	close(r.ch)
	select {
	case <-r.done:
	case <-time.After(d):
		r.abandon.Store(true)
		<-r.done
	}
}
