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

// Summary is the digest `jail audit FILE` prints.
type Summary struct {
	Start    *Start
	StartTS  time.Time
	Exit     *Exit
	LastTS   time.Time
	Counts   map[string]int
	Commands []CommandCount // most frequent first
	Execs    int
	Net      []NetRow
	DNSAllow int
	DNSDeny  int
	Denials  []*Record // exec, dns and net denials, deny and quarantine events, in order
	Limits   []*Record // limit, signal, kill, timeout events, in order
	Dropped  uint64
	// BudgetDropped of Dropped were refused by the trail's size budget
	// (Budget bytes).
	BudgetDropped uint64
	Budget        int64
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

// NetRow aggregates flows to one destination with one decision.
type NetRow struct {
	Dest      string // name (or address) and port
	Decision  string
	Conns     int
	BytesUp   int64
	BytesDown int64
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
			s.Execs++
			c := cmds[e.Path]
			if c == nil {
				c = &CommandCount{Path: e.Path}
				cmds[e.Path] = c
			}
			c.Count++
			if e.Decision != DecisionAllow {
				c.Denied++
				s.Denials = append(s.Denials, rec)
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
				s.Denials = append(s.Denials, rec)
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
			k := [2]string{dest, e.Decision}
			row := nets[k]
			if row == nil {
				row = &NetRow{Dest: dest, Decision: e.Decision}
				nets[k] = row
				netOrder = append(netOrder, k)
			}
			row.Conns++
			row.BytesUp += e.BytesUp
			row.BytesDown += e.BytesDown
			if e.Decision != DecisionAllow {
				s.Denials = append(s.Denials, rec)
			}
		case TypeDeny, TypeQuarantine:
			s.Denials = append(s.Denials, rec)
		case TypeLimit, TypeSignal, TypeKill, TypeTimeout:
			s.Limits = append(s.Limits, rec)
		case TypeDropped:
			var e Dropped
			if rec.Decode(&e) == nil {
				s.Dropped += e.Count
				if e.Reason == DropBudget {
					s.BudgetDropped += e.Count
					s.Budget = e.Budget
				}
			}
		}
	}
	for _, c := range cmds {
		s.Commands = append(s.Commands, *c)
	}
	sort.Slice(s.Commands, func(i, j int) bool {
		a, b := s.Commands[i], s.Commands[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Path < b.Path
	})
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
	fmt.Fprintf(tw, "Trail\t%s\n", name)
	if st := s.Start; st != nil {
		fmt.Fprintf(tw, "Command\t%s\n", quoteArgv(st.Command))
		fmt.Fprintf(tw, "Sandbox\tid %s, jail %s, uid %d%s, started %s\n", st.ID, st.Version, st.UID,
			map[bool]string{true: " (as root: agent is host nobody)"}[st.Root], s.StartTS.UTC().Format(TimeFormat))
		fmt.Fprintf(tw, "Kernel\t%s\n", kernelLine(st.Kernel))
		for _, n := range st.Notes {
			fmt.Fprintf(tw, "Note\t%s\n", n)
		}
	} else {
		fmt.Fprintf(tw, "Command\tunknown (no start event)\n")
	}
	switch {
	case s.Exit != nil:
		fmt.Fprintf(tw, "Duration\t%s\n", msStr(s.Exit.WallMS))
		fmt.Fprintf(tw, "Exit\t%s\n", exitLine(*s.Exit))
	case !s.StartTS.IsZero():
		fmt.Fprintf(tw, "Duration\tat least %s\n", s.LastTS.Sub(s.StartTS).Round(time.Millisecond))
		fmt.Fprintf(tw, "Exit\tnone recorded: the run is still going, or jail was killed before it could record one\n")
	default:
		fmt.Fprintf(tw, "Exit\tnone recorded\n")
	}
	fmt.Fprintf(tw, "Chain\t%s\n", s.chainLine())
	tw.Flush()

	section(&b, fmt.Sprintf("Events (%d)", s.Verify.Lines))
	for _, t := range s.types() {
		fmt.Fprintf(&b, "  %-10s %6d\n", t, s.Counts[t])
	}

	n := min(len(s.Commands), TopCommands)
	section(&b, fmt.Sprintf("Commands (top %d of %d, %d execs)", n, len(s.Commands), s.Execs))
	if n == 0 {
		b.WriteString("  none recorded\n")
	} else {
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  COUNT\tDENIED\tCOMMAND\n")
		for _, c := range s.Commands[:n] {
			fmt.Fprintf(tw, "  %d\t%d\t%s\n", c.Count, c.Denied, c.Path)
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
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\n", r.Dest, r.Decision, r.Conns, bytesStr(r.BytesUp), bytesStr(r.BytesDown))
		}
		tw.Flush()
	}

	section(&b, fmt.Sprintf("Denials (%d)", len(s.Denials)))
	if len(s.Denials) == 0 {
		b.WriteString("  none\n")
	}
	for _, r := range s.Denials {
		fmt.Fprintf(&b, "  %s  %-5s %s\n", s.offset(r.TS), r.Type, describe(r))
	}

	section(&b, fmt.Sprintf("Limits, signals, kills (%d)", len(s.Limits)))
	if len(s.Limits) == 0 {
		b.WriteString("  none\n")
	}
	for _, r := range s.Limits {
		fmt.Fprintf(&b, "  %s  %-7s %s\n", s.offset(r.TS), r.Type, describe(r))
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
	}
	if len(s.Malformed) > 0 {
		section(&b, fmt.Sprintf("Malformed lines (%d)", len(s.Malformed)))
		for _, le := range s.Malformed {
			fmt.Fprintf(&b, "  %v\n", le)
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
