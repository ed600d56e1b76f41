package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// TopCommands is how many commands the summary lists.
const TopCommands = 10

// TopDroppedKeys is how many keys of refused denials the summary lists.
const TopDroppedKeys = 16

// Summary is the digest `jail audit FILE` prints.
type Summary struct {
	Start    *Start
	StartTS  time.Time
	Exit     *Exit
	LastTS   time.Time
	Counts   map[string]int
	Commands []CommandCount // executions, most frequent first
	Execs    int
	// Attempts are execs of paths that did not exist (missing: a PATH
	// search's misses), most frequent first; AttemptsTotal counts them.
	Attempts      []CommandCount
	AttemptsTotal int
	Net           []NetRow
	DNSAllow      int
	DNSDeny       int
	Denials       []*Record // exec, dns and net denials, deny and quarantine events, in order
	// DenialGroups are Denials by what was refused, in order of first
	// appearance, with counts.
	DenialGroups []DenialGroup
	Notices      []Notice
	Limits       []*Record // limit, signal, kill, timeout events, in order
	Dropped      uint64
	// BudgetDropped of Dropped were refused by the trail's size budget
	// (Budget bytes).
	BudgetDropped uint64
	Budget        int64
	// DroppedKeys and DroppedOthers sum the dropped events' keys and
	// others: the refused denials by what they refused, and per kind
	// those no key names.
	DroppedKeys   map[string]uint64
	DroppedOthers map[string]OtherKeys
	Malformed     []*LineError
	Verify        Result
	VerifyErr     error // *VerifyError when the chain is broken
}

// CommandCount is one row of the commands table.
type CommandCount struct {
	Path   string
	Count  int
	Denied int
}

// DenialGroup is one refused thing: its type, what and why, how many
// times, and when first.
type DenialGroup struct {
	Type  string
	Text  string
	Count int
	First time.Time
}

// NetRow aggregates flows to one destination with one decision ("failed"
// for allowed flows whose upstream connection could not be made).
type NetRow struct {
	Dest      string // name (or address) and port
	Decision  string
	Conns     int
	BytesUp   int64
	BytesDown int64
	Reason    string // for failed rows: why (the first failure's)
}

// Summarize reads a whole trail and digests it. Bad lines are collected in
// Malformed and VerifyErr, never fatal; only I/O errors are returned.
func Summarize(r io.Reader) (*Summary, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read audit trail: %w", err)
	}
	s := &Summary{Counts: map[string]int{}}
	s.Verify, s.VerifyErr = Verify(bytes.NewReader(data))
	recs, bad, err := ReadAll(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	for _, le := range bad {
		if !errors.Is(le, ErrTruncated) {
			s.Malformed = append(s.Malformed, le)
		}
	}
	cmds := map[string]*CommandCount{}
	attempts := map[string]*CommandCount{}
	groups := map[[2]string]*DenialGroup{}
	var groupOrder [][2]string
	deny := func(rec *Record) {
		s.Denials = append(s.Denials, rec)
		k := [2]string{rec.Type, denialText(rec)}
		g := groups[k]
		if g == nil {
			g = &DenialGroup{Type: rec.Type, Text: k[1], First: rec.TS}
			groups[k] = g
			groupOrder = append(groupOrder, k)
		}
		g.Count++
	}
	nets := map[[2]string]*NetRow{}
	var netOrder [][2]string
	for _, rec := range recs {
		s.Counts[rec.Type]++
		s.LastTS = rec.TS
		switch rec.Type {
		case TypeStart:
			var e Start
			if s.Start == nil && rec.Decode(&e) == nil {
				s.Start, s.StartTS = &e, rec.TS
			}
		case TypeExit:
			var e Exit
			if rec.Decode(&e) == nil {
				s.Exit = &e
			}
		case TypeExec:
			var e Exec
			if rec.Decode(&e) != nil {
				continue
			}
			table := cmds
			if e.Missing && e.Decision == DecisionAllow {
				table = attempts
				s.AttemptsTotal++
			} else {
				s.Execs++
			}
			c := table[e.Path]
			if c == nil {
				c = &CommandCount{Path: e.Path}
				table[e.Path] = c
			}
			c.Count++
			if e.Decision != DecisionAllow {
				c.Denied++
				deny(rec)
			}
		case TypeDNS:
			var e DNS
			if rec.Decode(&e) != nil {
				continue
			}
			if e.Decision == DecisionAllow {
				s.DNSAllow++
			} else {
				s.DNSDeny++
				deny(rec)
			}
		case TypeNet:
			var e Net
			if rec.Decode(&e) != nil {
				continue
			}
			dest := netDest(e)
			if e.Name != "" {
				dest = fmt.Sprintf("%s:%d", e.Name, e.Port)
			}
			dec := e.Decision
			if e.Failed {
				dec = "failed"
			}
			k := [2]string{dest, dec}
			row := nets[k]
			if row == nil {
				row = &NetRow{Dest: dest, Decision: dec}
				if e.Failed {
					row.Reason = e.Reason
				}
				nets[k] = row
				netOrder = append(netOrder, k)
			}
			row.Conns++
			row.BytesUp += e.BytesUp
			row.BytesDown += e.BytesDown
			if e.Decision != DecisionAllow {
				deny(rec)
			}
		case TypeDeny, TypeQuarantine, TypeUnmasked:
			deny(rec)
		case TypeNotice:
			var e Notice
			if rec.Decode(&e) == nil {
				s.Notices = append(s.Notices, e)
			}
		case TypeLimit, TypeSignal, TypeKill, TypeTimeout:
			s.Limits = append(s.Limits, rec)
		case TypeDropped:
			var e Dropped
			if rec.Decode(&e) == nil {
				s.Dropped += e.Count
				if e.Reason == DropBudget {
					s.BudgetDropped += e.Count
					s.Budget = e.Budget
					s.addDroppedKeys(e)
				}
			}
		}
	}
	s.Commands, s.Attempts = byCount(cmds), byCount(attempts)
	for _, k := range groupOrder {
		s.DenialGroups = append(s.DenialGroups, *groups[k])
	}
	for _, k := range netOrder {
		s.Net = append(s.Net, *nets[k])
	}
	sort.SliceStable(s.Net, func(i, j int) bool {
		a, b := s.Net[i], s.Net[j]
		if a.Decision != b.Decision {
			return a.Decision == DecisionAllow
		}
		return a.BytesUp+a.BytesDown > b.BytesUp+b.BytesDown
	})
	return s, nil
}

func byCount(m map[string]*CommandCount) []CommandCount {
	out := make([]CommandCount, 0, len(m))
	for _, c := range m {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Path < b.Path
	})
	return out
}

// denialText says what a denial refused and why, without what changes
// from one attempt to the next (pid, query type, time): equal texts are
// one refused thing.
func denialText(rec *Record) string {
	switch rec.Type {
	case TypeExec:
		var e Exec
		if rec.Decode(&e) == nil {
			s := quoteArgv(e.Argv)
			if len(e.Argv) == 0 || e.Argv[0] != e.Path {
				s += " [" + e.Path + "]"
			}
			return s + because(e.Rule, e.Reason)
		}
	case TypeDNS:
		var e DNS
		if rec.Decode(&e) == nil {
			return e.Name + because("", e.Reason)
		}
	case TypeNet:
		var e Net
		if rec.Decode(&e) == nil {
			return e.Proto + " " + netDest(e) + because("", e.Reason)
		}
	case TypeDeny:
		var e Deny
		if rec.Decode(&e) == nil {
			return fmt.Sprintf("%s %s %s", e.Layer, e.What, e.Target) + because("", e.Reason)
		}
	}
	return describe(rec)
}

func (s *Summary) offset(t time.Time) string {
	if s.StartTS.IsZero() {
		return t.UTC().Format("15:04:05.000")
	}
	return fmt.Sprintf("+%.3fs", t.Sub(s.StartTS).Seconds())
}

// Write prints the human summary; name labels the trail.
func (s *Summary) Write(w io.Writer, name string) error {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Trail\t%s\n", inline(name))
	if st := s.Start; st != nil {
		fmt.Fprintf(tw, "Command\t%s\n", quoteArgv(st.Command))
		fmt.Fprintf(tw, "Sandbox\tid %s, jail %s, uid %d%s, started %s\n", inline(st.ID), inline(st.Version), st.UID,
			map[bool]string{true: " (as root: agent is host nobody)"}[st.Root], s.StartTS.UTC().Format(TimeFormat))
		fmt.Fprintf(tw, "Kernel\t%s\n", inline(kernelLine(st.Kernel)))
		for _, n := range st.Notes {
			fmt.Fprintf(tw, "Note\t%s\n", inline(elideNames(n)))
		}
	} else {
		fmt.Fprintf(tw, "Command\tunknown (no start event)\n")
	}
	switch {
	case s.Exit != nil:
		fmt.Fprintf(tw, "Duration\t%s\n", msStr(s.Exit.WallMS))
		fmt.Fprintf(tw, "Exit\t%s\n", inline(exitLine(*s.Exit)))
	case !s.StartTS.IsZero():
		fmt.Fprintf(tw, "Duration\tat least %s\n", s.LastTS.Sub(s.StartTS).Round(time.Millisecond))
		fmt.Fprintf(tw, "Exit\tnone recorded: the run is still going, or jail was killed before it could record one\n")
	default:
		fmt.Fprintf(tw, "Exit\tnone recorded\n")
	}
	fmt.Fprintf(tw, "Chain\t%s\n", inline(s.chainLine()))
	tw.Flush()

	section(&b, fmt.Sprintf("Events (%d)", s.Verify.Lines))
	for _, t := range s.types() {
		fmt.Fprintf(&b, "  %-10s %6d\n", inline(t), s.Counts[t])
	}

	n := min(len(s.Commands), TopCommands)
	section(&b, fmt.Sprintf("Commands (top %d of %d, %d execs)", n, len(s.Commands), s.Execs))
	if n == 0 {
		b.WriteString("  none recorded\n")
	} else {
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  COUNT\tDENIED\tCOMMAND\n")
		for _, c := range s.Commands[:n] {
			fmt.Fprintf(tw, "  %d\t%d\t%s\n", c.Count, c.Denied, inline(c.Path))
		}
		tw.Flush()
	}

	if s.AttemptsTotal > 0 {
		n := min(len(s.Attempts), TopCommands)
		section(&b, fmt.Sprintf("Exec attempts of missing paths (top %d of %d, %d attempts: PATH searches, nothing ran)", n, len(s.Attempts), s.AttemptsTotal))
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  COUNT\tPATH\n")
		for _, c := range s.Attempts[:n] {
			fmt.Fprintf(tw, "  %d\t%s\n", c.Count, inline(c.Path))
		}
		tw.Flush()
	}

	section(&b, fmt.Sprintf("Network (DNS: %d answered, %d refused)", s.DNSAllow, s.DNSDeny))
	if len(s.Net) == 0 {
		b.WriteString("  no connections\n")
	} else {
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  DESTINATION\tDECISION\tCONNS\tUP\tDOWN\n")
		for _, r := range s.Net {
			why := ""
			if r.Reason != "" {
				why = "\t" + inline(r.Reason)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s%s\n", inline(r.Dest), inline(r.Decision), r.Conns, bytesStr(r.BytesUp), bytesStr(r.BytesDown), why)
		}
		tw.Flush()
	}

	title := fmt.Sprintf("Denials (%d)", len(s.Denials))
	if len(s.DenialGroups) != len(s.Denials) {
		title = fmt.Sprintf("Denials (%d, of %d things; first time, count)", len(s.Denials), len(s.DenialGroups))
	}
	section(&b, title)
	if len(s.Denials) == 0 {
		b.WriteString("  none\n")
	}
	for _, g := range s.DenialGroups {
		count := ""
		if g.Count > 1 {
			count = fmt.Sprintf(" (%d times)", g.Count)
		}
		fmt.Fprintf(&b, "  %s  %-5s %s%s\n", s.offset(g.First), inline(g.Type), inline(g.Text), count)
	}

	if len(s.Notices) > 0 {
		section(&b, fmt.Sprintf("Notices (%d)", len(s.Notices)))
		for _, n := range s.Notices {
			fmt.Fprintf(&b, "  %-7s %-8s %s\n", inline(n.Severity), inline(n.Kind), inline(n.Text))
		}
	}

	section(&b, fmt.Sprintf("Limits, signals, kills (%d)", len(s.Limits)))
	if len(s.Limits) == 0 {
		b.WriteString("  none\n")
	}
	for _, r := range s.Limits {
		fmt.Fprintf(&b, "  %s  %-7s %s\n", s.offset(r.TS), inline(r.Type), inline(describe(r)))
	}

	if s.Dropped > 0 {
		section(&b, "Dropped")
		if s.BudgetDropped > 0 {
			fmt.Fprintf(&b, "  %d events were not written: the trail reached its size budget (%s, audit-max-size); they are counted by type in the dropped events\n",
				s.BudgetDropped, bytesStr(s.Budget))
		}
		if n := s.Dropped - s.BudgetDropped; n > 0 {
			fmt.Fprintf(&b, "  %d events were lost (the writer fell behind); see the dropped events\n", n)
		}
		s.writeDroppedKeys(&b)
	}
	if len(s.Malformed) > 0 {
		section(&b, fmt.Sprintf("Malformed lines (%d)", len(s.Malformed)))
		for _, le := range s.Malformed {
			fmt.Fprintf(&b, "  %s\n", inline(le.Error()))
		}
	}
	_, err := io.WriteString(w, sanitize(b.String()))
	return err
}

func section(b *bytes.Buffer, title string) {
	b.WriteString("\n" + title + "\n")
}

// types lists the types present, schema order first, then unknown ones.
func (s *Summary) types() []string {
	var out []string
	known := map[string]bool{}
	for _, t := range Types {
		known[t] = true
		if s.Counts[t] > 0 {
			out = append(out, t)
		}
	}
	var extra []string
	for t := range s.Counts {
		if !known[t] {
			extra = append(extra, t)
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

func (s *Summary) chainLine() string {
	v := s.Verify
	var b strings.Builder
	if v.OK {
		fmt.Fprintf(&b, "verified: %d lines, seq 1-%d, head %s", v.Lines, v.LastSeq, v.Head)
	} else {
		fmt.Fprintf(&b, "BROKEN: %v", s.VerifyErr)
		if len(v.Problems) > 1 {
			fmt.Fprintf(&b, " (%d problems)", len(v.Problems))
		}
	}
	if v.Truncated {
		b.WriteString("; final line incomplete (writer killed mid-write)")
	}
	if !v.Ended && v.Lines > 0 {
		b.WriteString("; no exit event")
	}
	return b.String()
}

// addDroppedKeys sums a budget dropped event's keys and others.
func (s *Summary) addDroppedKeys(e Dropped) {
	for k, n := range e.Keys {
		if s.DroppedKeys == nil {
			s.DroppedKeys = map[string]uint64{}
		}
		s.DroppedKeys[k] += n
	}
	for kind, o := range e.Others {
		if s.DroppedOthers == nil {
			s.DroppedOthers = map[string]OtherKeys{}
		}
		x := s.DroppedOthers[kind]
		x.Keys += o.Keys
		x.Events += o.Events
		x.Uncounted += o.Uncounted
		s.DroppedOthers[kind] = x
	}
}

// writeDroppedKeys says what the refused denials were: the most counted
// by what they refused, then per kind the keys and events no line names
// (trail16: past the 16 named, the trail said nothing of the rest).
func (s *Summary) writeDroppedKeys(b *bytes.Buffer) {
	if len(s.DroppedKeys) == 0 && len(s.DroppedOthers) == 0 {
		return
	}
	keys := make([]string, 0, len(s.DroppedKeys))
	for k := range s.DroppedKeys {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if s.DroppedKeys[keys[i]] != s.DroppedKeys[keys[j]] {
			return s.DroppedKeys[keys[i]] > s.DroppedKeys[keys[j]]
		}
		return keys[i] < keys[j]
	})
	b.WriteString("  refused and not written, by what was refused:\n")
	for i, k := range keys {
		if i == TopDroppedKeys {
			fmt.Fprintf(b, "    (%d more keys named in the dropped events)\n", len(keys)-i)
			break
		}
		fmt.Fprintf(b, "    %7d  %s\n", s.DroppedKeys[k], inline(k))
	}
	kinds := make([]string, 0, len(s.DroppedOthers))
	for k := range s.DroppedOthers {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, kind := range kinds {
		o := s.DroppedOthers[kind]
		n := fmt.Sprint(o.Keys)
		if o.Uncounted > 0 {
			n = fmt.Sprint("at least ", max(o.Keys, 1))
		}
		fmt.Fprintf(b, "    %s: %s other keys, %d events\n", inline(kind), n, o.Events)
	}
}

// noteNamesShown is how many names of a long list a summary's note keeps.
const noteNamesShown = 8

// elideNames shortens a start note that lists many names before its
// verb ("/ws: .bashrc .profile ... do not exist, so nothing is mounted
// over them: ..."): a hundred names of protected files, twice, were most
// of a summary's first screen. The first noteNamesShown are kept and
// the rest counted; --json shows the note whole.
func elideNames(n string) string {
	head, rest, ok := strings.Cut(n, ": ")
	if !ok {
		return n
	}
	names, tail, ok := strings.Cut(rest, " do not exist")
	if !ok {
		return n
	}
	f := strings.Fields(names)
	if len(f) <= noteNamesShown+2 {
		return n
	}
	return fmt.Sprintf("%s: %s and %d more do not exist%s", head, strings.Join(f[:noteNamesShown], " "), len(f)-noteNamesShown, tail)
}
