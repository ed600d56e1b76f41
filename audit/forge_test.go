package audit

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// forgedLine is text an agent puts where the trail keeps its words (a file
// name it execs, a name it looks up): a newline, then what a reader would
// take for a line of jail's own.
const forgedLine = "\n12:00:00.000    99 exit    FORGED exited, code 0"

// Adversarial: text the agent chose (the path it executes, a name it asks
// for, a path it plants) can hold newlines and tabs; the human output of
// `jail audit` (the summary, --type, --follow) must show them escaped, in
// their line and cell, never as a line or column of its own that a reader
// would take for jail's (a forged "exit", a "Denials (0)" that hides the
// real ones).
func TestHumanOutputKeepsAgentTextInItsLine(t *testing.T) {
	path := t.TempDir() + "/trail.jsonl"
	w, err := create(path, fakeClock(time.Millisecond), 64, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Record(Start{Schema: SchemaVersion, Version: "0.1.0", ID: "5f2c9a1b7e3d", Command: []string{"sh"}})
	// argv[0] differs from the path, so the path is printed beside it.
	w.Record(Exec{PID: 7, Path: "/ws/x" + forgedLine, Argv: []string{"innocent"}, Decision: DecisionAllow})
	w.Record(Exec{PID: 8, Path: "/ws/t\tDENIED" + forgedLine, Argv: []string{"rm"}, Decision: DecisionDeny, Rule: "r"})
	w.Record(Exec{PID: 9, Path: "/ws/gone" + forgedLine, Argv: []string{"gone"}, Decision: DecisionAllow, Missing: true})
	w.Record(DNS{Name: "a" + forgedLine, QType: "A", Decision: DecisionDeny, Reason: "not allowed"})
	w.Record(Net{Decision: DecisionDeny, Proto: "tcp", Name: "b" + forgedLine, Address: "198.18.0.2", Port: 443, Reason: "r" + forgedLine})
	w.Record(Deny{Layer: "proxy", What: "connect", Target: "c" + forgedLine, Reason: "d" + forgedLine})
	w.Record(Quarantine{Action: "moved", Path: "/ws/.mcp.json" + forgedLine, Phase: "exit", Reason: "r"})
	w.Record(Exit{Reason: "exited"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(must(os.ReadFile(path)), []byte(`\n12:00:00.000`)) {
		t.Fatal("the trail lacks the planted newline; the test would prove nothing")
	}
	for _, args := range [][]string{{path}, {"--type", "exec,dns,net,deny,quarantine", path}, {"--follow", path}} {
		out, _, _ := runCLI(t, args...)
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimLeft(line, " \t"), "12:00:00.000") || strings.HasPrefix(line, "DENIED") {
				t.Errorf("%v: agent text made a line of its own: %q\nwhole output:\n%s", args, line, out)
			}
		}
		if strings.Contains(out, "\t") {
			t.Errorf("%v: a raw tab in human output (an agent-made column)", args)
		}
		if !strings.Contains(out, `\n12:00:00.000`) {
			t.Errorf("%v: the planted text is not shown escaped:\n%s", args, out)
		}
	}
}

// Adversarial: a bidi control in a name the agent chose (U+202E RIGHT-TO-
// LEFT OVERRIDE, an isolate) makes a terminal that lays out bidirectional
// text show another name: /tmp/invoice<RLO>fdp.sh reads as
// /tmp/invoicehs.pdf in the summary's command table. Seen with main's
// binary: `jail audit` printed U+202E raw in the Command line and the
// table; seen failing here on main's isControl. Shown escaped (\u202e).
func TestHumanOutputEscapesBidiControls(t *testing.T) {
	path := t.TempDir() + "/trail.jsonl"
	w, err := create(path, fakeClock(time.Millisecond), 64, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rlo := "/tmp/invoice\u202efdp.sh"
	w.Record(Start{Schema: SchemaVersion, Version: "0.1.0", ID: "5f2c9a1b7e3d", Command: []string{"sh", "-c", rlo}})
	w.Record(Exec{PID: 7, Path: rlo, Argv: []string{"x\u2067y"}, Decision: DecisionAllow})
	w.Record(DNS{Name: "a\u200fb", QType: "A", Decision: DecisionDeny, Reason: "not allowed"})
	w.Record(Exit{Reason: "exited"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{path}, {"--type", "exec,dns", path}, {"--follow", path}} {
		out, _, _ := runCLI(t, args...)
		for _, r := range []rune{0x202e, 0x2067, 0x200f} {
			if strings.ContainsRune(out, r) {
				t.Errorf("%v: raw %U in human output:\n%s", args, r, out)
			}
		}
		if !strings.Contains(out, `\u202e`) {
			t.Errorf("%v: the override is not shown escaped:\n%s", args, out)
		}
	}
}
