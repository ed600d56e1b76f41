package audit

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jail-sandbox/jail/internal/termsafe"
)

// FormatRecord renders one event as a single human-readable line, as
// `jail audit --follow` prints it.
func FormatRecord(rec *Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %5d %-7s ", rec.TS.UTC().Format("15:04:05.000"), rec.Seq, rec.Type)
	b.WriteString(describe(rec))
	// Agent-controlled text (argv, names, paths) must not drive the reader's
	// terminal: escape sequences are shown quoted, never interpreted; nor
	// make lines of its own: the record is one line, so a newline in it is
	// the agent's (a path it executed) and is shown as \n.
	return inline(strings.TrimRight(b.String(), " "))
}

// describe renders the fields of an event (without ts/seq/type).
func describe(rec *Record) string {
	switch rec.Type {
	case TypeStart:
		var e Start
		if rec.Decode(&e) == nil {
			return fmt.Sprintf("jail %s id %s: %s (%s)", e.Version, e.ID, quoteArgv(e.Command), kernelLine(e.Kernel))
		}
	case TypeExec:
		var e Exec
		if rec.Decode(&e) == nil {
			dec := e.Decision
			if e.Missing {
				dec = "missing" // an attempt: nothing ran
			}
			s := fmt.Sprintf("%s pid %d %s", dec, e.PID, quoteArgv(e.Argv))
			if len(e.Argv) == 0 || e.Argv[0] != e.Path {
				s += " [" + e.Path + "]"
			}
			return s + because(e.Rule, e.Reason)
		}
	case TypeDNS:
		var e DNS
		if rec.Decode(&e) == nil {
			s := fmt.Sprintf("%s %s %s", e.Decision, e.Name, e.QType)
			if len(e.Answers) > 0 {
				s += " -> " + strings.Join(e.Answers, ",")
			}
			return s + because("", e.Reason)
		}
	case TypeNet:
		var e Net
		if rec.Decode(&e) == nil {
			if e.Failed {
				return fmt.Sprintf("failed %s %s", e.Proto, netDest(e)) + because("", e.Reason)
			}
			s := fmt.Sprintf("%s %s %s", e.Decision, e.Proto, netDest(e))
			if e.Decision == DecisionAllow || e.BytesUp+e.BytesDown > 0 {
				s += fmt.Sprintf(" up %s down %s %s", bytesStr(e.BytesUp), bytesStr(e.BytesDown), msStr(e.DurationMS))
			}
			return s + because("", e.Reason)
		}
	case TypeDeny:
		var e Deny
		if rec.Decode(&e) == nil {
			s := fmt.Sprintf("%s %s %s", e.Layer, e.What, e.Target)
			if e.PID != 0 {
				s += fmt.Sprintf(" pid %d", e.PID)
			}
			return s + because("", e.Reason)
		}
	case TypeQuarantine:
		var e Quarantine
		if rec.Decode(&e) == nil {
			s := fmt.Sprintf("%s %s at %s", e.Action, e.Path, e.Phase)
			if e.Run != "" {
				s += " of run " + e.Run
			}
			if e.Stored != "" {
				s += " -> " + e.Stored
			}
			if e.Left != "" {
				s += " -> " + e.Left
			}
			why := e.Reason
			if e.Error != "" {
				why += " (" + e.Error + ")"
			}
			return s + because(e.Rule, why)
		}
	case TypeAgent:
		var e Agent
		if rec.Decode(&e) == nil {
			s := e.Decision + " " + e.Request
			if e.Key != "" {
				s += " with " + e.Key
			}
			return s
		}
	case TypeUnmasked:
		var e Unmasked
		if rec.Decode(&e) == nil {
			return fmt.Sprintf("%s %s %s on the host: its %s is gone", e.Action, e.Path, e.How, e.Kind) + because(e.Rule, "")
		}
	case TypeLimit:
		var e Limit
		if rec.Decode(&e) == nil {
			return limitLine(e)
		}
	case TypeSignal:
		var e Signal
		if rec.Decode(&e) == nil {
			s := fmt.Sprintf("%s (%d) from %s", e.Signal, e.Number, e.From)
			if e.To != "" {
				s += " to " + e.To
			}
			if e.Forwarded {
				s += ", forwarded"
			}
			if e.Requester != nil {
				s += fmt.Sprintf(", asked by pid %d (uid %d)", e.Requester.PID, e.Requester.UID)
			}
			return s
		}
	case TypeKill:
		var e Kill
		if rec.Decode(&e) == nil {
			return killLine(e)
		}
	case TypeTimeout:
		var e Timeout
		if rec.Decode(&e) == nil {
			return fmt.Sprintf("fired after %s (limit %s)", msStr(e.WallMS), msStr(e.LimitMS))
		}
	case TypeExit:
		var e Exit
		if rec.Decode(&e) == nil {
			return exitLine(e)
		}
	case TypeNotice:
		var e Notice
		if rec.Decode(&e) == nil {
			return fmt.Sprintf("%s %s: %s", e.Severity, e.Kind, e.Text)
		}
	case TypeDropped:
		var e Dropped
		if rec.Decode(&e) == nil {
			s := fmt.Sprintf("%d events lost", e.Count)
			if e.Reason == DropBudget {
				s = fmt.Sprintf("%d events not written: size budget %s reached", e.Count, bytesStr(e.Budget))
			}
			if e.Sink != "" {
				s += " by sink " + e.Sink
			}
			if len(e.Types) > 0 {
				s += " (" + countsStr(e.Types) + ")"
			}
			if len(e.Keys) > 0 {
				s += "; refused denials: " + countsStr(e.Keys)
			}
			return s
		}
	}
	return otherFields(rec)
}

// otherFields renders the non-envelope keys of an unknown or odd event.
func otherFields(rec *Record) string {
	keys := make([]string, 0, len(rec.Fields))
	for k := range rec.Fields {
		switch k {
		case "ts", "seq", "type", "prev":
		default:
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+string(rec.Fields[k]))
	}
	return strings.Join(parts, " ")
}

func because(rule, reason string) string {
	switch {
	case rule != "" && reason != "":
		return fmt.Sprintf(": %s (rule %q)", reason, rule)
	case rule != "":
		return fmt.Sprintf(" (rule %q)", rule)
	case reason != "":
		return ": " + reason
	}
	return ""
}

func netDest(e Net) string {
	host := e.Address
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if e.Name != "" && e.Address != "" {
		return fmt.Sprintf("%s:%d (%s)", e.Name, e.Port, e.Address)
	}
	if e.Name != "" {
		// Refused by name (a fake address never handed out, a proxy
		// request): no address to show, and "()" read as a lost one.
		return e.Name + ":" + strconv.Itoa(e.Port)
	}
	return host + ":" + strconv.Itoa(e.Port)
}

func kernelLine(k Kernel) string {
	ll := "Landlock off"
	if k.LandlockABI > 0 {
		ll = fmt.Sprintf("Landlock ABI %d", k.LandlockABI)
	}
	return fmt.Sprintf("Linux %s, %s, seccomp %s, exec audit %s, cgroup %s, network %s",
		k.Release, ll, onOff(k.Seccomp), onOff(k.SeccompNotify), k.CgroupMode, k.NetworkMode)
}

func limitLine(e Limit) string {
	s := fmt.Sprintf("%s (%s)", e.Kind, e.Source)
	if e.Limit != 0 {
		s += fmt.Sprintf(" limit %d", e.Limit)
	}
	if e.Value != 0 {
		s += fmt.Sprintf(" value %d", e.Value)
	}
	if e.PID != 0 {
		s += fmt.Sprintf(" pid %d", e.PID)
	}
	if e.Action != "" {
		s += ", " + e.Action
	}
	return s
}

func killLine(e Kill) string {
	s := fmt.Sprintf("by %s via %s", e.By, e.Method)
	if e.Signal != "" {
		s += " with " + e.Signal
	}
	if e.Processes != 0 {
		s += fmt.Sprintf(", %d processes", e.Processes)
	}
	return s + because("", e.Reason)
}

func exitLine(e Exit) string {
	s := fmt.Sprintf("%s, code %d", e.Reason, e.Code)
	if e.Signal != "" {
		s += ", signal " + e.Signal
	}
	s += fmt.Sprintf(", wall %s, cpu %s user + %s sys", msStr(e.WallMS), msStr(e.CPUUserMS), msStr(e.CPUSysMS))
	if e.PeakMemoryBytes > 0 {
		s += ", peak memory " + bytesStr(e.PeakMemoryBytes)
	}
	if e.Error != "" {
		s += ": " + e.Error
	}
	return s
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func msStr(ms float64) string {
	d := time.Duration(ms * float64(time.Millisecond))
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.String()
}

func bytesStr(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f%ciB", float64(n)/float64(div), "KMGTP"[exp])
}

func countsStr(m map[string]uint64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// quoteArgv renders argv for a terminal, quoting what a shell would need.
func quoteArgv(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = shellQuote(a)
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_./:=@%+,-", c)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	// strconv.Quote also neutralizes control characters and escape
	// sequences an agent could plant to spoof a reader's terminal.
	if strings.ContainsFunc(s, func(r rune) bool { return r == '\n' || r == '\t' || isControl(r) || r == '\'' }) {
		return strconv.Quote(s)
	}
	return "'" + s + "'"
}

// sanitize escapes terminal control characters (C0 but newline and tab,
// DEL, C1) in agent-controlled text, so a planted ESC sequence is shown, not
// interpreted by the terminal of whoever reads the trail.
func sanitize(s string) string { return escapeRunes(s, isControl) }

// inline is sanitize for text that must stay in its line and cell: it
// escapes newlines and tabs too. Whatever the agent chose (a file name it
// executed or planted, a name it looked up, a Host it sent) can hold them,
// and a raw newline would print a line a reader takes for jail's own (a
// forged exit, a "Denials (0)" above the real ones), a raw tab a column of
// the summary's tables.
func inline(s string) string { return escapeRunes(s, isInlineControl) }

// escapeRunes writes each rune of s that esc picks as its Go escape (\x1b,
// \n, \u009b): shown, never acted on.
func escapeRunes(s string, esc func(rune) bool) string {
	if !strings.ContainsFunc(s, esc) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if esc(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isInlineControl(r rune) bool { return termsafe.Control(r) }

// isControl is termsafe.Control but newline and tab, which a multi-line
// text (an argv shown as it was) may keep.
func isControl(r rune) bool { return r != '\n' && r != '\t' && termsafe.Control(r) }
