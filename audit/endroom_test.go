package audit

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// floodEveryKind spends every part of w's budget the agent reaches while
// it runs: the ordinary part (cheap execs), the denials' share with every
// kind it can cause (denials of several layers, quarantines of several
// rules, refused flows, names and execs), the signals' part of the
// reserve, and unmasked events (a flood of them after the share).
func floodEveryKind(w *Writer) {
	spendOrdinary(w)
	for i := range 3000 {
		w.Record(Deny{Layer: "guard-rail", What: "exec", Target: fmt.Sprintf("/tmp/x%d", i), Reason: "blocked"})
		w.Record(Deny{Layer: "agent-config", What: "config-key", Target: fmt.Sprintf("/h/.claude/s%d.json#hooks", i), Reason: "put back"})
		w.Record(Quarantine{Phase: "run", Path: fmt.Sprintf("/w/r%d/.git/hooks/pre-commit", i), Rule: "git-hook", Reason: "runs at commit", Action: "moved"})
		w.Record(Quarantine{Phase: "run", Path: fmt.Sprintf("/w/r%d/.envrc", i), Rule: "absent", Reason: "loaded by direnv", Action: "moved"})
		w.Record(Net{Decision: DecisionDeny, Proto: "tcp", Address: "203.0.113.7", Port: 1000 + i, Reason: "not allowed"})
		w.Record(DNS{Name: fmt.Sprintf("n%d.exfil.example", i), QType: "A", Decision: DecisionDeny, Reason: "not allowed"})
		w.Record(Exec{PID: i, Path: fmt.Sprintf("/usr/bin/c%d", i), Decision: DecisionDeny, Rule: "x"})
		w.Record(Signal{Signal: "SIGCONT", Number: 18, From: "supervisor", To: "agent"})
		w.Record(Unmasked{Path: fmt.Sprintf("/run/user/1/s%d", i), Kind: "mask", Rule: "socket", How: "deleted", Action: "reported"})
		w.Record(Notice{Kind: "jail", Severity: "warning", Text: fmt.Sprintf("moved /w/r%d out of the tree", i)})
	}
}

// trail16: the run's end is said by jail itself once the sandbox is gone
// (a quarantine of the exit check, the git ref the agent deleted with the
// command that fetches it back, an agent configuration put back). An
// agent that spent every part of the budget it reaches while it ran --
// every kind's part of the denials' share, the signals', the unmasked
// events' -- had those end lines counted, not written. They have a room
// of their own after Ending. Seen failing with Ending a no-op (main's
// writer, no room): none of the three end lines was written.
func TestWriterEndRoomAfterAFloodOfEveryKind(t *testing.T) {
	const budget = MinBudget
	w, path := newTestWriterOpts(t, 1<<15, Options{MaxBytes: budget})
	w.Record(Start{Schema: SchemaVersion, ID: "endroom"})
	floodEveryKind(w)
	// What the agent caused was refused before the room: the flood spent
	// every part it reaches.
	before := w.Stats().Budget
	w.Record(Quarantine{Phase: "run", Path: "/w/late/.git/hooks/post-checkout", Rule: "git-hook", Reason: "runs at checkout", Action: "moved"})
	w.Record(Notice{Kind: "jail", Severity: "warning", Text: "a late notice before the end"})
	if w.Stats().Budget != before+2 {
		t.Fatalf("the flood left room before the end (%d refused, then %d): the test proves nothing", before, w.Stats().Budget)
	}
	w.Ending()
	w.Record(Quarantine{Phase: "exit", Path: "/w/.git/hooks/pre-push", Rule: "git-hook", Reason: "runs at push", Action: "moved", Stored: "/s/q/1"})
	w.Record(Deny{Layer: "agent-config", What: "config-key", Target: "/h/.claude/settings.json#hooks", Reason: "put back at exit"})
	fetch := "git: this run deleted the ref refs/heads/side of /w/.git; the start's refs and commits are kept, to fetch back: git -C /w fetch /s/kept '+refs/*:refs/jail-kept/*'"
	w.Record(Notice{Kind: "jail", Severity: "warning", Text: fetch})
	w.Record(Exit{Code: 0, Reason: "exited"})
	data := closeAndRead(t, w, path, budget)
	for _, want := range []string{`"/w/.git/hooks/pre-push"`, `"/h/.claude/settings.json#hooks"`, `refs/heads/side of /w/.git`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("ATTACK WORKED: the end's %s was counted, not written, after the agent's flood of every kind", want)
		}
	}
	if bytes.Contains(data, []byte(`/w/late/.git/hooks/post-checkout`)) || bytes.Contains(data, []byte(`a late notice before the end`)) {
		t.Error("ATTACK WORKED: an event before Ending used the end's room")
	}
	s, err := Summarize(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := s.Write(&out, "trail.jsonl"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "/w/.git/hooks/pre-push") {
		t.Errorf("the summary lacks the end's quarantine:\n%.3000s", out.String())
	}
}

// trail16: within the end's room each family (quarantine, deny, notice,
// unmasked, jail's git lines) has a part and each key a few lines: the
// many leftovers the agent made for the exit check -- hooks, config files,
// new .git dirs, absent paths, each quarantined with a notice, and agent
// configuration put back -- cannot take the room of jail's own git line
// (the ref it deleted, with the fetch-back command).
func TestWriterEndRoomKeyedByFamily(t *testing.T) {
	const budget = MinBudget
	w, path := newTestWriterOpts(t, 1<<15, Options{MaxBytes: budget})
	w.Record(Start{Schema: SchemaVersion, ID: "endkinds"})
	floodEveryKind(w)
	w.Ending()
	for i := range 1000 {
		for _, rule := range []string{"git-hook", "git-config", "git-dir", "absent", "agent-dir"} {
			p := fmt.Sprintf("/w/e%d/%s", i, rule)
			w.Record(Quarantine{Phase: "exit", Path: p, Rule: rule, Reason: "left by the agent", Action: "moved"})
			w.Record(Notice{Kind: "jail", Severity: "warning", Text: "moved " + p + " out of the tree: left by the agent"})
		}
		w.Record(Deny{Layer: "agent-config", What: "config-key", Target: fmt.Sprintf("/h/.claude/s%d.json#hooks", i), Reason: "put back"})
	}
	w.Record(Notice{Kind: "jail", Severity: "warning", Text: "git: this run deleted the ref refs/heads/side of /w/.git"})
	w.Record(Exit{Code: 0, Reason: "exited"})
	data := closeAndRead(t, w, path, budget)
	if !bytes.Contains(data, []byte(`refs/heads/side of /w/.git`)) {
		t.Error("ATTACK WORKED: the agent's leftovers took the end's room of jail's git line")
	}
	if n := bytes.Count(data, []byte(`"phase":"exit"`)); n == 0 || n == 5000 {
		t.Errorf("%d of 5000 exit quarantines written: want some, not all", n)
	}
}

// TestWriterEndRoomHoldsEveryGitLine: jail keeps up to 64 repositories a
// start, and says a line of each at the end; the agent can plant
// repositories that sort before the user's (shallowest first, then by
// name), so every one of the 64 lines must fit, at realistic lengths,
// after a flood of every kind and the leftovers' quarantines, in the
// smallest budget --audit-max-size takes. Seen failing with the git
// lines' part a quarter of a 16 KiB room (review16c's reproduction: 8 of
// 20 written; here 6 of 64, the user's proj/b not among them).
func TestWriterEndRoomHoldsEveryGitLine(t *testing.T) {
	const budget = 1 << 20 // --audit-max-size's smallest
	w, path := newTestWriterOpts(t, 1<<15, Options{MaxBytes: budget})
	w.Record(Start{Schema: SchemaVersion, ID: "endgit"})
	floodEveryKind(w)
	w.Ending()
	for i := range 1000 {
		p := fmt.Sprintf("/w/e%d/hook", i)
		w.Record(Quarantine{Phase: "exit", Path: p, Rule: "git-hook", Reason: "left by the agent", Action: "moved"})
		w.Record(Notice{Kind: "jail", Severity: "warning", Text: "moved " + p + " out of the tree: left by the agent"})
	}
	dir := "/home/someone/src/" + strings.Repeat("project-", 12)
	for i := range 64 {
		name := fmt.Sprintf("a%02d", i)
		if i == 63 {
			name = "proj/b"
		}
		w.Record(Notice{Kind: "jail", Severity: "warning", Text: fmt.Sprintf(
			"git: this run deleted the ref refs/heads/feature-branch of %s/%s/.git; `git fetch %s/.local/state/jail/git-kept/%040x refs/heads/feature-branch:refs/heads/feature-branch` brings it back", dir, name, dir, i)})
	}
	w.Record(Exit{Code: 0, Reason: "exited"})
	data := closeAndRead(t, w, path, budget)
	n, user := 0, false
	for _, l := range bytes.Split(data, []byte("\n")) {
		if bytes.Contains(l, []byte(`"type":"notice"`)) && bytes.Contains(l, []byte(`git: this run deleted`)) {
			n++
			user = user || bytes.Contains(l, []byte(`/proj/b/.git`))
		}
	}
	if n != 64 || !user {
		t.Errorf("ATTACK WORKED: %d of 64 git lines written, the user's repository's among them: %v", n, user)
	}
}
