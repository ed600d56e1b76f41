package ns

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// The wire format of a Message on the supervisor/init socket. It replaced
// encoding/json there: init's first JSON decode (the field tables and
// codecs json builds, by reflection, for every type it meets) cost 2.5 to
// 6 ms of init's start, on the path from init's exec to the agent, and it
// kept bytes only where a type said so (Strings). This format is written
// and read by hand, keeps every string byte for byte, and the supervisor
// reads init's messages with it too: init runs beside the agent, so its
// bytes are untrusted there, and the decoder is bounded (no count
// allocates more than the bytes left could fill) and fuzzed (FuzzWire,
// FuzzWireMatchesJSON).
//
//	payload  = wireVersion struct(Message)
//	struct   = { tag value } 0          ; tags ascending, zero values omitted
//	int      = zig-zag varint           ; uint: uvarint
//	string   = uvarint(len) bytes
//	bytes    = uvarint(len+1) bytes     ; 0: nil (nil and empty both survive)
//	list     = uvarint(len+1) elements  ; 0: nil
//	map      = uvarint(len+1) { key value }, keys sorted
//	bool     = the tag alone (true)
//	pointer  = the tag, then the struct (nil: no tag)
//
// A new field needs a tag here: TestWireCarriesEveryField fills every
// exported field of every protocol type and fails on one that is lost.
const wireVersion = 0x01

// Field tags. Never reuse a number within one struct.
const (
	// Message
	tMsgType = iota + 1
	tMsgSpec
	tMsgNames
	tMsgPid
	tMsgPort
	tMsgCode
	tMsgSignal
	tMsgError
	tMsgExitCode
	tMsgInfo
	tMsgGroup
	tMsgID
	tMsgExec
	tMsgLevel
	tMsgText
	tMsgPath
)

const (
	// Spec
	tSpecMounts = iota + 1
	tSpecHostname
	tSpecLoopbackUp
	tSpecCwd
	tSpecArgv
	tSpecEnv
	tSpecPty
	tSpecPtyFDs
	tSpecTrace
	tSpecTraceOrigin
	tSpecRlimits
	tSpecUserNSLimits
	tSpecAgentRlimits
	tSpecIgnoreSIGXFSZ
	tSpecHooks
	tSpecDegraded
	tSpecAgentTimerSlack
)

const (
	// Mount
	tMountKind = iota + 1
	tMountPath
	tMountSource
	tMountDir
	tMountSize
	tMountMode
	tMountFD
	tMountData
	tMountFile
	tMountLink
	tMountWhy
	tMountNoLinks
)

const (
	// Rlimit, UserNSLimit, ExecSpec
	tRlimitResource = iota + 1
	tRlimitCur
	tRlimitMax
)

const (
	tLimitName = iota + 1
	tLimitValue
)

const (
	tExecID = iota + 1
	tExecArgv
	tExecEnv
	tExecCwd
	tExecTty
	tExecDeadline
	tExecReportChild
)

// maxWireDepth bounds nesting; the protocol's deepest value is two
// structs below Message.
const maxWireDepth = 4

// encodeMessage is m on the wire.
func encodeMessage(m Message) []byte {
	e := wenc{b: make([]byte, 0, 256)}
	e.b = append(e.b, wireVersion)
	e.str(tMsgType, m.Type)
	if m.Spec != nil {
		e.tag(tMsgSpec)
		e.spec(m.Spec)
	}
	e.strs(tMsgNames, m.Names)
	e.int(tMsgPid, int64(m.Pid))
	e.int(tMsgPort, int64(m.Port))
	e.int(tMsgCode, int64(m.Code))
	e.int(tMsgSignal, int64(m.Signal))
	e.str(tMsgError, m.Error)
	e.int(tMsgExitCode, int64(m.ExitCode))
	if m.Info != nil {
		e.tag(tMsgInfo)
		e.count(len(m.Info))
		for _, k := range sortedKeys(m.Info) {
			e.raw(k)
			e.raw(m.Info[k])
		}
	}
	e.bool(tMsgGroup, m.Group)
	e.int(tMsgID, int64(m.ID))
	if m.Exec != nil {
		e.tag(tMsgExec)
		x := m.Exec
		e.int(tExecID, int64(x.ID))
		e.strs(tExecArgv, x.Argv)
		e.strs(tExecEnv, x.Env)
		e.str(tExecCwd, x.Cwd)
		e.bool(tExecTty, x.Tty)
		e.int(tExecDeadline, x.Deadline)
		e.bool(tExecReportChild, x.ReportChild)
		e.end()
	}
	e.str(tMsgLevel, m.Level)
	e.str(tMsgText, m.Text)
	e.str(tMsgPath, m.Path)
	e.end()
	return e.b
}

func (e *wenc) spec(s *Spec) {
	if s.Mounts != nil {
		e.tag(tSpecMounts)
		e.count(len(s.Mounts))
		for i := range s.Mounts {
			mt := &s.Mounts[i]
			e.str(tMountKind, mt.Kind)
			e.str(tMountPath, mt.Path)
			e.str(tMountSource, mt.Source)
			e.bool(tMountDir, mt.Dir)
			e.int(tMountSize, mt.Size)
			e.uint(tMountMode, uint64(mt.Mode))
			e.int(tMountFD, int64(mt.FD))
			e.bytes(tMountData, mt.Data)
			e.str(tMountFile, mt.File)
			e.str(tMountLink, mt.Link)
			e.str(tMountWhy, mt.Why)
			e.bool(tMountNoLinks, mt.NoLinks)
			e.end()
		}
	}
	e.str(tSpecHostname, s.Hostname)
	e.bool(tSpecLoopbackUp, s.LoopbackUp)
	e.str(tSpecCwd, s.Cwd)
	e.strs(tSpecArgv, s.Argv)
	e.strs(tSpecEnv, s.Env)
	e.bool(tSpecPty, s.Pty)
	if s.PtyFDs != nil {
		e.tag(tSpecPtyFDs)
		e.count(len(s.PtyFDs))
		for _, n := range s.PtyFDs {
			e.b = binary.AppendVarint(e.b, int64(n))
		}
	}
	e.bool(tSpecTrace, s.Trace)
	e.int(tSpecTraceOrigin, s.TraceOrigin)
	e.rlimits(tSpecRlimits, s.Rlimits)
	if s.UserNSLimits != nil {
		e.tag(tSpecUserNSLimits)
		e.count(len(s.UserNSLimits))
		for _, l := range s.UserNSLimits {
			e.str(tLimitName, l.Name)
			e.uint(tLimitValue, l.Value)
			e.end()
		}
	}
	e.rlimits(tSpecAgentRlimits, s.AgentRlimits)
	e.bool(tSpecIgnoreSIGXFSZ, s.IgnoreSIGXFSZ)
	if s.Hooks != nil {
		e.tag(tSpecHooks)
		e.count(len(s.Hooks))
		for _, k := range sortedKeys(s.Hooks) {
			e.raw(k)
			e.rawBytes(s.Hooks[k])
		}
	}
	e.bool(tSpecDegraded, s.Degraded)
	e.int(tSpecAgentTimerSlack, s.AgentTimerSlack)
	e.end()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// wenc appends the wire format to b.
type wenc struct{ b []byte }

func (e *wenc) tag(t int)    { e.b = append(e.b, byte(t)) }
func (e *wenc) end()         { e.b = append(e.b, 0) }
func (e *wenc) count(n int)  { e.b = binary.AppendUvarint(e.b, uint64(n)+1) }
func (e *wenc) raw(s string) { e.b = append(binary.AppendUvarint(e.b, uint64(len(s))), s...) }
func (e *wenc) rawBytes(b []byte) {
	if b == nil {
		e.b = append(e.b, 0)
		return
	}
	e.count(len(b))
	e.b = append(e.b, b...)
}

func (e *wenc) str(t int, s string) {
	if s != "" {
		e.tag(t)
		e.raw(s)
	}
}

func (e *wenc) bytes(t int, b []byte) {
	if b != nil {
		e.tag(t)
		e.rawBytes(b)
	}
}

func (e *wenc) int(t int, v int64) {
	if v != 0 {
		e.tag(t)
		e.b = binary.AppendVarint(e.b, v)
	}
}

func (e *wenc) uint(t int, v uint64) {
	if v != 0 {
		e.tag(t)
		e.b = binary.AppendUvarint(e.b, v)
	}
}

func (e *wenc) bool(t int, v bool) {
	if v {
		e.tag(t)
	}
}

func (e *wenc) strs(t int, l []string) {
	if l == nil {
		return
	}
	e.tag(t)
	e.count(len(l))
	for _, s := range l {
		e.raw(s)
	}
}

func (e *wenc) rlimits(t int, l []Rlimit) {
	if l == nil {
		return
	}
	e.tag(t)
	e.count(len(l))
	for _, r := range l {
		e.int(tRlimitResource, int64(r.Resource))
		e.uint(tRlimitCur, r.Cur)
		e.uint(tRlimitMax, r.Max)
		e.end()
	}
}

// errWire is every malformed payload: the caller says which message.
var errWire = errors.New("malformed message")

// decodeMessage reads what encodeMessage wrote. Anything else is an error,
// never a panic, and no count allocates beyond what the payload can hold.
func decodeMessage(b []byte) (Message, error) {
	var m Message
	if len(b) == 0 || b[0] != wireVersion {
		return m, fmt.Errorf("%w: not jail's wire format (version byte)", errWire)
	}
	d := newWdec(b[1:])
	d.message(&m)
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d bytes after the message", len(d.b))
	}
	if d.err != nil {
		return Message{}, d.err
	}
	return m, nil
}

// wdec reads the wire format from b; the first error sticks.
type wdec struct {
	b     []byte
	s     string // b as first given, copied once: the strings read are its substrings
	err   error
	depth int
}

// newWdec reads b. Every string read is a substring of one copy of b, made
// here: one allocation instead of one per string (in a fresh process each
// new small-object size class is a fresh span, a page fault at 18-30 µs on
// a paravirtualized VM; init decodes its spec once, on the path to the
// agent). Nothing decoded aliases b (the caller's buffer), and a message
// keeps no more than its own payload alive.
func newWdec(b []byte) *wdec {
	return &wdec{b: b, s: string(b)}
}

func (d *wdec) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{errWire}, args...)...)
	}
	d.b = nil
}

// fields calls f for each tag of a struct until its end; tags must ascend.
func (d *wdec) fields(what string, f func(tag byte)) {
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > maxWireDepth {
		d.fail("%s nested too deep", what)
		return
	}
	last := byte(0)
	for d.err == nil {
		if len(d.b) == 0 {
			d.fail("%s: no end", what)
			return
		}
		t := d.b[0]
		d.b = d.b[1:]
		if t == 0 {
			return
		}
		if t <= last {
			d.fail("%s: field %d after %d", what, t, last)
			return
		}
		last = t
		f(t)
	}
}

func (d *wdec) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *wdec) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// nonZero reads an int field, which the encoder writes only when not 0.
func (d *wdec) nonZero(v int64) int64 {
	if v == 0 {
		d.fail("zero value written")
	}
	return v
}

func (d *wdec) int() int {
	v := d.nonZero(d.varint())
	if v < math.MinInt || v > math.MaxInt {
		d.fail("int out of range")
		return 0
	}
	return int(v)
}

func (d *wdec) int64() int64 { return d.nonZero(d.varint()) }

func (d *wdec) uint64() uint64 {
	v := d.uvarint()
	if v == 0 && d.err == nil {
		d.fail("zero value written")
	}
	return v
}

// length reads a length that the rest of the payload must hold.
func (d *wdec) length() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("length %d beyond the %d bytes left", n, len(d.b))
		return 0
	}
	return int(n)
}

// count reads a list's or map's count+1 (0: nil): each element takes a
// byte at least, so a count the payload cannot hold is refused before any
// allocation.
func (d *wdec) count() (n int, isNil bool) {
	c := d.uvarint()
	if d.err != nil {
		return 0, true
	}
	if c == 0 {
		return 0, true
	}
	if c-1 > uint64(len(d.b)) {
		d.fail("count %d beyond the %d bytes left", c-1, len(d.b))
		return 0, true
	}
	return int(c - 1), false
}

// prealloc is how many elements of a count to allocate at once: a count
// is at most the bytes left, but an element in memory is larger than its
// byte on the wire, so the rest grows as elements really arrive.
func prealloc(n int) int { return min(n, 64) }

func (d *wdec) raw() string {
	n := d.length()
	if d.err != nil {
		return ""
	}
	// d.b is always a suffix of the bytes d.s copied.
	off := len(d.s) - len(d.b)
	s := d.s[off : off+n]
	d.b = d.b[n:]
	return s
}

func (d *wdec) str() string {
	s := d.raw()
	if s == "" && d.err == nil {
		d.fail("empty string written")
	}
	return s
}

func (d *wdec) rawBytes() []byte {
	n, isNil := d.count()
	if isNil || d.err != nil {
		return nil
	}
	b := make([]byte, n)
	copy(b, d.b[:n])
	d.b = d.b[n:]
	return b
}

func (d *wdec) strs() []string {
	n, isNil := d.count()
	if isNil {
		return nil
	}
	l := make([]string, 0, prealloc(n))
	for i := 0; i < n && d.err == nil; i++ {
		l = append(l, d.raw())
	}
	return l
}

func (d *wdec) strMap() map[string]string {
	n, isNil := d.count()
	if isNil {
		return nil
	}
	m := make(map[string]string, prealloc(n))
	last := ""
	for i := 0; i < n && d.err == nil; i++ {
		k := d.raw()
		if i > 0 && k <= last {
			d.fail("map keys not ascending")
		}
		last = k
		m[k] = d.raw()
	}
	return m
}

func (d *wdec) message(m *Message) {
	d.fields("message", func(t byte) {
		switch t {
		case tMsgType:
			m.Type = d.str()
		case tMsgSpec:
			m.Spec = &Spec{}
			d.spec(m.Spec)
		case tMsgNames:
			m.Names = d.strs()
		case tMsgPid:
			m.Pid = d.int()
		case tMsgPort:
			m.Port = d.int()
		case tMsgCode:
			m.Code = d.int()
		case tMsgSignal:
			m.Signal = d.int()
		case tMsgError:
			m.Error = d.str()
		case tMsgExitCode:
			m.ExitCode = d.int()
		case tMsgInfo:
			m.Info = d.strMap()
		case tMsgGroup:
			m.Group = true
		case tMsgID:
			m.ID = d.int()
		case tMsgExec:
			m.Exec = &ExecSpec{}
			d.exec(m.Exec)
		case tMsgLevel:
			m.Level = d.str()
		case tMsgText:
			m.Text = d.str()
		case tMsgPath:
			m.Path = d.str()
		default:
			d.fail("message: unknown field %d", t)
		}
	})
}

func (d *wdec) exec(x *ExecSpec) {
	d.fields("exec", func(t byte) {
		switch t {
		case tExecID:
			x.ID = d.int()
		case tExecArgv:
			x.Argv = d.strs()
		case tExecEnv:
			x.Env = d.strs()
		case tExecCwd:
			x.Cwd = d.str()
		case tExecTty:
			x.Tty = true
		case tExecDeadline:
			x.Deadline = d.int64()
		case tExecReportChild:
			x.ReportChild = true
		default:
			d.fail("exec: unknown field %d", t)
		}
	})
}

func (d *wdec) spec(s *Spec) {
	d.fields("spec", func(t byte) {
		switch t {
		case tSpecMounts:
			n, isNil := d.count()
			if isNil {
				return
			}
			s.Mounts = make([]Mount, 0, prealloc(n))
			for i := 0; i < n && d.err == nil; i++ {
				s.Mounts = append(s.Mounts, Mount{})
				d.mount(&s.Mounts[i])
			}
		case tSpecHostname:
			s.Hostname = d.str()
		case tSpecLoopbackUp:
			s.LoopbackUp = true
		case tSpecCwd:
			s.Cwd = d.str()
		case tSpecArgv:
			s.Argv = d.strs()
		case tSpecEnv:
			s.Env = d.strs()
		case tSpecPty:
			s.Pty = true
		case tSpecPtyFDs:
			n, isNil := d.count()
			if isNil {
				return
			}
			s.PtyFDs = make([]int, 0, prealloc(n))
			for i := 0; i < n && d.err == nil; i++ {
				v := d.varint()
				if v < math.MinInt || v > math.MaxInt {
					d.fail("int out of range")
				}
				s.PtyFDs = append(s.PtyFDs, int(v))
			}
		case tSpecTrace:
			s.Trace = true
		case tSpecTraceOrigin:
			s.TraceOrigin = d.int64()
		case tSpecRlimits:
			s.Rlimits = d.rlimits()
		case tSpecUserNSLimits:
			n, isNil := d.count()
			if isNil {
				return
			}
			s.UserNSLimits = make([]UserNSLimit, 0, prealloc(n))
			for i := 0; i < n && d.err == nil; i++ {
				s.UserNSLimits = append(s.UserNSLimits, UserNSLimit{})
				l := &s.UserNSLimits[i]
				d.fields("userns limit", func(t byte) {
					switch t {
					case tLimitName:
						l.Name = d.str()
					case tLimitValue:
						l.Value = d.uint64()
					default:
						d.fail("userns limit: unknown field %d", t)
					}
				})
			}
		case tSpecAgentRlimits:
			s.AgentRlimits = d.rlimits()
		case tSpecIgnoreSIGXFSZ:
			s.IgnoreSIGXFSZ = true
		case tSpecAgentTimerSlack:
			s.AgentTimerSlack = d.int64()
		case tSpecHooks:
			n, isNil := d.count()
			if isNil {
				return
			}
			s.Hooks = make(map[string][]byte, prealloc(n))
			last := ""
			for i := 0; i < n && d.err == nil; i++ {
				k := d.raw()
				if i > 0 && k <= last {
					d.fail("map keys not ascending")
				}
				last = k
				s.Hooks[k] = d.rawBytes()
			}
		case tSpecDegraded:
			s.Degraded = true
		default:
			d.fail("spec: unknown field %d", t)
		}
	})
}

func (d *wdec) mount(mt *Mount) {
	d.fields("mount", func(t byte) {
		switch t {
		case tMountKind:
			mt.Kind = d.str()
		case tMountPath:
			mt.Path = d.str()
		case tMountSource:
			mt.Source = d.str()
		case tMountDir:
			mt.Dir = true
		case tMountNoLinks:
			mt.NoLinks = true
		case tMountSize:
			mt.Size = d.int64()
		case tMountMode:
			v := d.uint64()
			if v > math.MaxUint32 {
				d.fail("mount mode out of range")
			}
			mt.Mode = uint32(v)
		case tMountFD:
			mt.FD = d.int()
		case tMountData:
			mt.Data = d.rawBytes()
		case tMountFile:
			mt.File = d.str()
		case tMountLink:
			mt.Link = d.str()
		case tMountWhy:
			mt.Why = d.str()
		default:
			d.fail("mount: unknown field %d", t)
		}
	})
}

func (d *wdec) rlimits() []Rlimit {
	n, isNil := d.count()
	if isNil {
		return nil
	}
	l := make([]Rlimit, 0, prealloc(n))
	for i := 0; i < n && d.err == nil; i++ {
		l = append(l, Rlimit{})
		r := &l[i]
		d.fields("rlimit", func(t byte) {
			switch t {
			case tRlimitResource:
				r.Resource = d.int()
			case tRlimitCur:
				r.Cur = d.uint64()
			case tRlimitMax:
				r.Max = d.uint64()
			default:
				d.fail("rlimit: unknown field %d", t)
			}
		})
	}
	return l
}

// HookWriter writes a hook's configuration (Spec.Hooks) in the wire
// format, so that init reads it without encoding/json too: the caller
// gives each field a tag of its own, in ascending order, and ReadHook
// reads it back. Zero values are omitted, as in a Message.
type HookWriter struct{ e wenc }

// NewHookWriter starts a configuration.
func NewHookWriter() *HookWriter {
	return &HookWriter{e: wenc{b: append(make([]byte, 0, 128), wireVersion)}}
}

// String writes a string field (omitted when empty).
func (w *HookWriter) String(tag byte, s string) { w.e.str(int(tag), s) }

// Bytes writes a byte field (omitted when nil).
func (w *HookWriter) Bytes(tag byte, b []byte) { w.e.bytes(int(tag), b) }

// Strings writes a list of strings (omitted when nil).
func (w *HookWriter) Strings(tag byte, l []string) { w.e.strs(int(tag), l) }

// Int writes an int field (omitted when 0).
func (w *HookWriter) Int(tag byte, v int) { w.e.int(int(tag), int64(v)) }

// Bool writes a bool field (the tag alone when true).
func (w *HookWriter) Bool(tag byte, v bool) { w.e.bool(int(tag), v) }

// Uint16s writes a list of uint16 (omitted when nil).
func (w *HookWriter) Uint16s(tag byte, l []uint16) {
	if l == nil {
		return
	}
	w.e.tag(int(tag))
	w.e.count(len(l))
	for _, v := range l {
		w.e.b = binary.AppendUvarint(w.e.b, uint64(v))
	}
}

// Done ends the configuration and returns its bytes.
func (w *HookWriter) Done() []byte {
	w.e.end()
	return w.e.b
}

// HookReader reads one field's value for ReadHook's callback.
type HookReader struct{ d *wdec }

// String reads a string field.
func (r HookReader) String() string { return r.d.str() }

// Bytes reads a byte field.
func (r HookReader) Bytes() []byte { return r.d.rawBytes() }

// Strings reads a list of strings.
func (r HookReader) Strings() []string { return r.d.strs() }

// Int reads an int field.
func (r HookReader) Int() int { return r.d.int() }

// Uint16s reads a list of uint16.
func (r HookReader) Uint16s() []uint16 {
	n, isNil := r.d.count()
	if isNil {
		return nil
	}
	l := make([]uint16, 0, prealloc(n))
	for i := 0; i < n && r.d.err == nil; i++ {
		v := r.d.uvarint()
		if v > math.MaxUint16 {
			r.d.fail("uint16 out of range")
		}
		l = append(l, uint16(v))
	}
	return l
}

// ReadHook reads what a HookWriter wrote: field calls the reader's method
// of each tag's type (a bool field's tag alone means true), and returns
// false for a tag it does not know, which fails the read.
func ReadHook(b []byte, field func(tag byte, r HookReader) bool) error {
	if len(b) == 0 || b[0] != wireVersion {
		return fmt.Errorf("%w: not jail's wire format (version byte)", errWire)
	}
	d := newWdec(b[1:])
	d.fields("configuration", func(t byte) {
		if !field(t, HookReader{d}) {
			d.fail("configuration: unknown field %d", t)
		}
	})
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d bytes after the configuration", len(d.b))
	}
	return d.err
}
