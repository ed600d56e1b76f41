package notice

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jail-sandbox/jail/internal/termsafe"
)

func TestVisibility(t *testing.T) {
	all := []Notice{
		{Kind: "jail", Severity: Trace, Text: "t"},
		{Kind: "jail", Severity: Debug, Text: "d"},
		{Kind: "jail", Severity: Info, Text: "i"},
		{Kind: "jail", Severity: Warning, Text: "w"},
		{Kind: "jail", Severity: Error, Text: "e"},
	}
	for _, tc := range []struct {
		name     string
		o        Options
		shown    string
		recorded string
	}{
		{"default", Options{}, "iwe", "iwe"},
		{"quiet", Options{Quiet: true}, "e", "iwe"},
		{"verbose", Options{Verbose: true}, "diwe", "iwe"},
		{"quiet verbose", Options{Quiet: true, Verbose: true}, "de", "iwe"},
		{"trace", Options{Trace: true}, "tiwe", "iwe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			rec := ""
			tc.o.Record = func(n Notice) { rec += n.Text }
			s := New(&out, tc.o)
			for _, n := range all {
				s.Add(n)
			}
			shown := ""
			for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				shown += strings.TrimPrefix(l, "jail: ")
			}
			if shown != tc.shown || rec != tc.recorded {
				t.Fatalf("shown %q recorded %q, want %q and %q", shown, rec, tc.shown, tc.recorded)
			}
		})
	}
}

func TestGroupsShownOnceAndCounted(t *testing.T) {
	var out bytes.Buffer
	recorded := 0
	s := New(&out, Options{Record: func(Notice) { recorded++ }})
	for i := 0; i < 3; i++ {
		s.Add(Notice{Kind: "net", Severity: Warning, Text: "refused a.example:443", Group: "a.example:443"})
	}
	s.Add(Notice{Kind: "exec", Severity: Warning, Text: "same group, other kind", Group: "a.example:443"})
	if got := strings.Count(out.String(), "refused a.example"); got != 1 {
		t.Fatalf("a grouped notice was written %d times:\n%s", got, out.String())
	}
	if recorded != 2 {
		t.Fatalf("recorded %d notices, want one per group (2)", recorded)
	}
	if c := s.Counts()["net\x00a.example:443"]; c != 3 {
		t.Fatalf("count %d, want 3", c)
	}
}

// While held, nothing is written; Release writes one summary with counts
// and the footer, and later notices go out at once again.
func TestHoldRelease(t *testing.T) {
	var out bytes.Buffer
	s := New(&out, Options{})
	s.Add(Notice{Kind: "jail", Severity: Warning, Text: "before"})
	s.Hold()
	mark := out.Len()
	s.Add(Notice{Kind: "net", Severity: Warning, Text: "refused b.example:443", Group: "b"})
	s.Add(Notice{Kind: "net", Severity: Warning, Text: "refused b.example:443", Group: "b"})
	s.Add(Notice{Kind: "jail", Severity: Debug, Text: "not shown without -v"})
	s.Add(Notice{Kind: "jail", Severity: Error, Text: "an error"})
	if out.Len() != mark {
		t.Fatalf("wrote while held: %q", out.String()[mark:])
	}
	s.Release("audit trail: /x/trail.jsonl")
	want := "jail: refused b.example:443 (2 times)\njail: an error\njail: audit trail: /x/trail.jsonl\n"
	if got := out.String()[mark:]; got != want {
		t.Fatalf("summary:\n%q\nwant\n%q", got, want)
	}
	s.Add(Notice{Kind: "jail", Severity: Warning, Text: "after"})
	if !strings.HasSuffix(out.String(), "jail: after\n") {
		t.Fatalf("not written at once after Release: %q", out.String())
	}
	// Nothing kept: Release writes nothing, not even the footer.
	s.Hold()
	mark = out.Len()
	s.Release("audit trail: /x")
	if out.Len() != mark {
		t.Fatalf("empty summary wrote %q", out.String()[mark:])
	}
}

func TestWriterLines(t *testing.T) {
	var out bytes.Buffer
	s := New(&out, Options{})
	w := s.Writer("net", Warning)
	w.Write([]byte("jail: blocked connect to 1.2.3.4:80 (raw IP)\njail: blocked conn"))
	w.Write([]byte("ect to 1.2.3.4:80 (raw IP)\nsecond\n"))
	want := "jail: blocked connect to 1.2.3.4:80 (raw IP)\njail: second\n"
	if out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
}

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain":             "plain",
		"ends\n":            "ends",
		"a\x1b]52;c;x\x07b": `a\x1b]52;c;x\x07b`,
		"two\nlines":        `two\x0alines`,
		"tab\there":         "tab here",
		"c1 \u009b21t":      `c1 \x9b21t`,
		"ünïcode stays":     "ünïcode stays",
	} {
		if got := oneLine(in); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzOneLine: a notice's text is one line, inert on a terminal (no control
// character, only UTF-8), whatever the agent's bytes; text that needs no
// escape is kept as it is, but for its line ending and tabs. oneLine is
// termsafe.Escape after those two: a differential fuzz against its former
// copy of Escape's loop found no input where the two differ.
func FuzzOneLine(f *testing.F) {
	f.Add("a\tb\x1b]52;c;x\x07\n\x9b2J\u202e\xff\r\n")
	f.Add("plain text\n")
	f.Fuzz(func(t *testing.T, s string) {
		got := oneLine(s)
		if strings.ContainsFunc(got, termsafe.Control) || !utf8.ValidString(got) {
			t.Fatalf("oneLine(%q) = %q: a control character or a byte that is not UTF-8", s, got)
		}
		trimmed := strings.TrimRight(s, "\r\n")
		if !strings.ContainsFunc(strings.ReplaceAll(trimmed, "\t", ""), termsafe.Control) && utf8.ValidString(trimmed) &&
			got != strings.ReplaceAll(trimmed, "\t", " ") {
			t.Fatalf("oneLine(%q) = %q: changed text that needs no escape", s, got)
		}
	})
}

// Adversarial: a notice's text can hold the agent's bytes as they are (the
// argv of a command the guard rail refused, a name it sent): not UTF-8 at
// all. A lone 0x9b is CSI to a terminal that reads 8-bit controls (one
// not in a UTF-8 locale), as 0x1b 0x5b is to every terminal; 0x90 (DCS)
// and 0x9d (OSC) likewise. Such bytes are shown escaped, never raw.
func TestNoticeEscapesRawC1Bytes(t *testing.T) {
	for _, text := range []string{
		"refused command rm -rf / \x9b2J \xff",                  // nothing else to escape
		"refused command rm -rf / \x9b2J\x9d52;c;aGk=\x07 \xff", // beside a C0 control
	} {
		var out bytes.Buffer
		s := New(&out, Options{})
		s.Add(Notice{Kind: "exec", Severity: Warning, Text: text})
		got := out.String()
		for _, b := range []byte{0x9b, 0x9d, 0x07, 0xff} {
			if strings.IndexByte(got, b) >= 0 {
				t.Errorf("raw byte %#x on the terminal: %q", b, got)
			}
		}
		if !strings.Contains(got, `\x9b2J`) || !strings.Contains(got, `\xff`) {
			t.Errorf("the bytes are not shown escaped: %q", got)
		}
	}
}

// Adversarial: a bidi control in agent-chosen text (a file it created, a
// command the guard rail refused) makes a bidi-aware terminal show another
// name (invoice<RLO>fdp.sh as invoicehs.pdf). Seen failing on main's
// isControl (U+202E written raw). Shown escaped (\u202e).
func TestNoticeEscapesBidiControls(t *testing.T) {
	var out bytes.Buffer
	s := New(&out, Options{})
	s.Add(Notice{Kind: "exec", Severity: Warning, Text: "created /ws/invoice\u202efdp.sh and a\u2066b"})
	got := out.String()
	for _, r := range []rune{0x202e, 0x2066} {
		if strings.ContainsRune(got, r) {
			t.Errorf("raw %U on the terminal: %q", r, got)
		}
	}
	if !strings.Contains(got, `\u202e`) || !strings.Contains(got, `\u2066`) {
		t.Errorf("not shown escaped: %q", got)
	}
}

// An urgent notice (a mask the host took away) is shown with --quiet, and
// while held it goes out at once through the urgent writer as well as in
// the summary; without an urgent writer it is written as any line. On
// main's Sink it was hidden by --quiet and held until Release.
func TestUrgentBreaksThroughQuietAndHold(t *testing.T) {
	var out bytes.Buffer
	s := New(&out, Options{Quiet: true})
	s.Add(Notice{Kind: "jail", Severity: Warning, Text: "routine"})
	s.Add(Notice{Kind: "jail", Severity: Warning, Text: "mask fell \x1b[2J", Urgent: true})
	if got := out.String(); got != "jail: mask fell \\x1b[2J\n" {
		t.Fatalf("--quiet: wrote %q, want only the urgent line, escaped", got)
	}
	out.Reset()
	s.Hold()
	s.Add(Notice{Kind: "jail", Severity: Warning, Text: "held before a writer", Urgent: true})
	if got := out.String(); got != "jail: held before a writer\n" {
		t.Fatalf("held without an urgent writer: wrote %q", got)
	}
	out.Reset()
	var screen []string
	s.SetUrgent(func(line string) { screen = append(screen, line) })
	s.Add(Notice{Kind: "jail", Severity: Warning, Text: "routine while held"})
	s.Add(Notice{Kind: "jail", Severity: Warning, Text: "second fall", Urgent: true})
	if out.Len() != 0 {
		t.Fatalf("held: wrote %q on the screen directly", out.String())
	}
	if len(screen) != 1 || screen[0] != "jail: second fall" {
		t.Fatalf("urgent writer had %q, want the urgent line only", screen)
	}
	s.Release("")
	if got := out.String(); got != "jail: held before a writer\njail: second fall\n" {
		t.Fatalf("summary %q: want both urgent notices again, not the routine one (--quiet)", got)
	}
}

// AlsoUrgent gets every urgent line, escaped, held or not, besides the
// Sink's own writing (a client attached to a background sandbox's
// terminal); routine notices never.
func TestAlsoUrgent(t *testing.T) {
	var out bytes.Buffer
	s := New(&out, Options{})
	var also []string
	s.AlsoUrgent(func(line string) { also = append(also, line) })
	s.Add(Notice{Kind: "jail", Severity: Warning, Text: "routine"})
	s.Add(Notice{Kind: "jail", Severity: Warning, Text: "fell \x1b]0;x\x07", Urgent: true})
	s.Hold()
	s.Add(Notice{Kind: "jail", Severity: Warning, Text: "fell again", Urgent: true})
	want := []string{`jail: fell \x1b]0;x\x07`, "jail: fell again"}
	if strings.Join(also, "|") != strings.Join(want, "|") {
		t.Fatalf("AlsoUrgent got %q, want %q", also, want)
	}
	if !strings.Contains(out.String(), `jail: fell \x1b]0;x\x07`) {
		t.Fatalf("the Sink's own line is gone: %q", out.String())
	}
}

// A timely notice while notices are held goes to the timely writer at
// once, escaped, and into the summary too; not held, it is written as any
// other; --quiet keeps it from both; without a timely writer it waits for
// the summary.
func TestTimely(t *testing.T) {
	var out bytes.Buffer
	s := New(&out, Options{})
	s.Add(Notice{Kind: "net", Severity: Info, Text: "not held", Timely: true})
	if out.String() != "jail: not held\n" {
		t.Fatalf("not held: %q", out.String())
	}
	out.Reset()
	s.Hold()
	s.Add(Notice{Kind: "net", Severity: Info, Text: "no writer yet", Timely: true})
	var screen []string
	s.SetTimely(func(line string) { screen = append(screen, line) })
	s.Add(Notice{Kind: "net", Severity: Info, Text: "routine"})
	s.Add(Notice{Kind: "net", Severity: Info, Text: "server \x1b[2J", Timely: true})
	if out.Len() != 0 {
		t.Fatalf("held: wrote %q directly", out.String())
	}
	if len(screen) != 1 || screen[0] != `jail: server \x1b[2J` {
		t.Fatalf("timely writer had %q, want the timely line only, escaped", screen)
	}
	s.Release("")
	if got := out.String(); got != "jail: no writer yet\njail: routine\njail: server \\x1b[2J\n" {
		t.Fatalf("summary %q", got)
	}
	q := New(&out, Options{Quiet: true})
	q.Hold()
	screen = nil
	q.SetTimely(func(line string) { screen = append(screen, line) })
	q.Add(Notice{Kind: "net", Severity: Info, Text: "quiet", Timely: true})
	if len(screen) != 0 {
		t.Fatalf("--quiet: the timely writer had %q", screen)
	}
}
