package audit

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// spendOrdinary fills the ordinary part of w's budget with cheap events
// the agent causes at will, so that what follows lands in the denials'
// share.
func spendOrdinary(w *Writer) {
	for i := 0; w.Stats().Budget == 0; i++ {
		w.Record(Exec{PID: i, Path: "/bin/true", Argv: []string{"true"}, Decision: DecisionAllow})
	}
}

// deniedTargets returns the targets of the deny events in a trail.
func deniedTargets(t *testing.T, data []byte) (targets map[string]int, keys map[string]uint64) {
	t.Helper()
	recs, _, _ := ReadAll(bytes.NewReader(data))
	targets, keys = map[string]int{}, map[string]uint64{}
	for _, r := range recs {
		switch r.Type {
		case TypeDeny:
			var d Deny
			r.Decode(&d)
			targets[d.Target]++
		case TypeDropped:
			var d Dropped
			r.Decode(&d)
			for k, n := range d.Keys {
				keys[k] += n
			}
		}
	}
	return targets, keys
}

// trail15: the denials' share was the agent's to spend with one denial
// repeated (a blocked command in a loop, a connection retried), after
// which a different, later denial -- the one that mattered -- was counted,
// not written. Within the share each (kind, target) is written a few
// times, repeats only counted: a flood of one denial cannot hide another.
// Seen failing on main's writer: the distinct denial after the flood was
// counted (no deny line with its target).
func TestWriterDenialFloodOfOneKeyLeavesOthers(t *testing.T) {
	const budget = MinBudget
	w, path := newTestWriterOpts(t, 1024, Options{MaxBytes: budget})
	w.Record(Start{Schema: SchemaVersion, ID: "denykeys"})
	spendOrdinary(w)
	const flood = 5000
	for i := range flood {
		w.Record(Deny{Layer: "guard-rail", What: "exec", Target: "/usr/bin/git", PID: i, Reason: "git push --force"})
	}
	w.Record(Deny{Layer: "guard-rail", What: "exec", Target: "/usr/bin/rm", PID: 7, Reason: "rm -rf ~"})
	w.Record(Quarantine{Phase: "run", Path: "/w/.git/hooks/pre-commit", Rule: "git-hook", Reason: "runs at commit", Action: "moved"})
	w.Record(Exit{Code: 0, Reason: "exited"})
	data := closeAndRead(t, w, path, budget)
	targets, keys := deniedTargets(t, data)
	if targets["/usr/bin/rm"] != 1 {
		t.Errorf("ATTACK WORKED: the distinct denial after a flood of one was not written (deny targets %v)", targets)
	}
	if !bytes.Contains(data, []byte(`"type":"quarantine"`)) {
		t.Error("ATTACK WORKED: the quarantine after a flood of one denial was not written")
	}
	if targets["/usr/bin/git"] == 0 || targets["/usr/bin/git"] == flood {
		t.Errorf("%d of %d flooded denials written: want some, not all", targets["/usr/bin/git"], flood)
	}
	k := "deny guard-rail/exec /usr/bin/git"
	if keys[k] == 0 {
		t.Errorf("dropped events name no count for %q: %v", k, keys)
	}
}

// trail15: a flood of distinct targets of one kind (execs of a thousand
// names, each refused) spends at most a part of the share: a denial of
// another kind after it is still written. A flood over every kind the
// agent can cause still runs out the share: then denials are counted
// (by type, and by key for the most repeated), as before.
func TestWriterDenialFloodOfOneKindLeavesOtherKinds(t *testing.T) {
	const budget = MinBudget
	w, path := newTestWriterOpts(t, 1024, Options{MaxBytes: budget})
	w.Record(Start{Schema: SchemaVersion, ID: "denykinds"})
	spendOrdinary(w)
	for i := range 5000 {
		w.Record(Deny{Layer: "guard-rail", What: "exec", Target: fmt.Sprintf("/tmp/x%d", i), PID: i, Reason: "blocked"})
	}
	w.Record(Deny{Layer: "agent-config", What: "config-key", Target: "/h/.claude/settings.json#hooks", Reason: "put back"})
	w.Record(Exit{Code: 0, Reason: "exited"})
	data := closeAndRead(t, w, path, budget)
	targets, _ := deniedTargets(t, data)
	if targets["/h/.claude/settings.json#hooks"] != 1 {
		t.Errorf("ATTACK WORKED: a denial of another kind after a flood of distinct targets was not written")
	}
	n := 0
	for k := range targets {
		if strings.HasPrefix(k, "/tmp/x") {
			n++
		}
	}
	if n == 0 || n == 5000 {
		t.Errorf("%d of 5000 distinct denials written: want some, not all", n)
	}
}

// trail15: a refused connection, DNS name or exec is recorded as a net,
// dns or exec event with decision "deny" (the proxy's refusals have no
// deny event): those were ordinary events, so once the agent spent the
// ordinary part with cheap allowed ones (execs of /bin/true), a refused
// connection to an exfiltration host was counted, not written. They take
// the denials' share too, keyed as deny events are. Seen failing on the
// branch's first commit (b006b4e): no net, dns or exec deny line.
func TestWriterRefusedFlowsKeepTheDenialsShare(t *testing.T) {
	const budget = MinBudget
	w, path := newTestWriterOpts(t, 1024, Options{MaxBytes: budget})
	w.Record(Start{Schema: SchemaVersion, ID: "denyflows"})
	spendOrdinary(w)
	for i := range 3000 { // one refused host retried: must not hide the next
		w.Record(Net{Decision: DecisionDeny, Proto: "tcp", Address: "203.0.113.7", Port: 443, Reason: "not allowed"})
		w.Record(Exec{PID: i, Path: "/bin/true", Argv: []string{"true"}, Decision: DecisionAllow})
	}
	w.Record(Net{Decision: DecisionDeny, Proto: "tcp", Name: "exfil.example", Address: "198.51.100.9", Port: 443, Reason: "not allowed"})
	w.Record(DNS{Name: "secret.exfil.example", QType: "A", Decision: DecisionDeny, Reason: "not allowed"})
	w.Record(Exec{PID: 9, Path: "/usr/bin/curl", Argv: []string{"curl"}, Decision: DecisionDeny, Rule: "curl"})
	w.Record(Exit{Code: 0, Reason: "exited"})
	data := closeAndRead(t, w, path, budget)
	for _, want := range []string{`"exfil.example"`, `"secret.exfil.example"`, `"/usr/bin/curl"`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("ATTACK WORKED: the refusal of %s after the ordinary part was spent was counted, not written", want)
		}
	}
	if n := bytes.Count(data, []byte(`"203.0.113.7"`)); n == 0 || n >= 3000 {
		t.Errorf("%d of 3000 repeated refusals written: want some, not all", n)
	}
	if bytes.Count(data, []byte(`"decision":"allow"`)) == 0 {
		t.Error("no allowed exec written: the test spent nothing")
	}
}

// trail16: past the share, a flood of 5,000 distinct targets of one kind
// (and of another) is counted; the dropped events named the 16 most
// counted keys and said nothing of the other 4,984: neither how many
// keys nor how many events of that kind. Each kind's others are said
// ("N other keys, M events"), so that named and others add up to what
// was refused, in the trail and in the summary. Seen failing on main's
// writer: the named keys' events summed to 16 of ~4,990 refused a kind.
func TestWriterDroppedKeysOverflowSaidPerKind(t *testing.T) {
	const budget = MinBudget
	w, path := newTestWriterOpts(t, 1<<15, Options{MaxBytes: budget})
	w.Record(Start{Schema: SchemaVersion, ID: "overflow"})
	spendOrdinary(w)
	const flood = 5000
	for i := range flood {
		w.Record(Deny{Layer: "guard-rail", What: "exec", Target: fmt.Sprintf("/tmp/x%d", i), PID: i, Reason: "blocked"})
		w.Record(DNS{Name: fmt.Sprintf("n%d.exfil.example", i), QType: "A", Decision: DecisionDeny, Reason: "not allowed"})
	}
	w.Record(Exit{Code: 0, Reason: "exited"})
	data := closeAndRead(t, w, path, budget)
	recs, _, _ := ReadAll(bytes.NewReader(data))
	written := map[string]uint64{}
	named := map[string]uint64{}
	namedKeys := map[string]uint64{}
	others := map[string]OtherKeys{}
	for _, r := range recs {
		switch r.Type {
		case TypeDeny:
			written["deny guard-rail/exec"]++
		case TypeDNS:
			written["dns deny"]++
		case TypeDropped:
			var d Dropped
			r.Decode(&d)
			for k, n := range d.Keys {
				switch {
				case strings.HasPrefix(k, "deny guard-rail/exec "):
					named["deny guard-rail/exec"] += n
					namedKeys["deny guard-rail/exec"]++
				case strings.HasPrefix(k, "dns deny "):
					named["dns deny"] += n
					namedKeys["dns deny"]++
				}
			}
			for kind, o := range d.Others {
				x := others[kind]
				x.Keys, x.Events, x.Uncounted = x.Keys+o.Keys, x.Events+o.Events, x.Uncounted+o.Uncounted
				others[kind] = x
			}
		}
	}
	for _, kind := range []string{"deny guard-rail/exec", "dns deny"} {
		refused := flood - written[kind]
		if written[kind] == 0 || refused == 0 {
			t.Fatalf("%s: %d of %d written: the test proves nothing", kind, written[kind], flood)
		}
		o := others[kind]
		if got := named[kind] + o.Events; got != refused {
			t.Errorf("%s: the dropped events account for %d refused events (%d named, %d others), %d were refused", kind, got, named[kind], o.Events, refused)
		}
		// Every refused target here is a key of its own: named keys and
		// others' keys (a floor where some were uncounted) add up.
		if o.Keys+o.Uncounted+namedKeys[kind] != refused {
			t.Errorf("%s: others say %d keys (%d uncounted) of %d refused distinct targets", kind, o.Keys, o.Uncounted, refused)
		}
	}
	s, err := Summarize(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := s.Write(&out, "trail.jsonl"); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"deny guard-rail/exec", "dns deny"} {
		want := fmt.Sprintf("%s: ", kind)
		i := strings.Index(out.String(), "    "+want)
		if i < 0 || !strings.Contains(out.String()[i:], "other keys, ") {
			t.Errorf("the summary has no others line for %s:\n%.3000s", kind, out.String()[strings.Index(out.String(), "Dropped"):])
		}
	}
}

// trail17: the share's key table holds maxShareKeys keys; past it a new
// key had no count of its own, only its kind's part bounding it. An agent
// that made 4,096 distinct denials (of several kinds, none spending its
// kind's part) and then flooded one new one spent that kind's part with
// it: a different, later denial of the kind -- the one that mattered --
// was counted, not written. Past the table a key is counted in a slot of
// its own hash (keyed: the agent cannot aim at another key's slot).
// Seen failing on main's writer: no deny line for /usr/bin/rm, and the
// flooded key written some thousand times.
func TestWriterDenialFloodPastTheKeyTable(t *testing.T) {
	const budget = 16 << 20 // a share that holds more than maxShareKeys denials
	w, path := newTestWriterOpts(t, 1<<15, Options{MaxBytes: budget})
	w.Record(Start{Schema: SchemaVersion, ID: "pasttable"})
	spendOrdinary(w)
	before := w.Stats().Dropped // spendOrdinary's last, refused
	// The table filled, a quarter of the keys of each of four kinds (so
	// that none spends its kind's part).
	whats := []string{"exec", "write", "read", "connect"}
	for i := range maxShareKeys {
		w.Record(Deny{Layer: "guard-rail", What: whats[i%len(whats)], Target: fmt.Sprintf("/tmp/k%d", i), PID: i, Reason: "blocked"})
		if i%1024 == 1023 {
			if err := w.Flush(); err != nil { // the queue kept from overflowing
				t.Fatal(err)
			}
		}
	}
	if n := w.Stats().Dropped - before; n != 0 {
		t.Fatalf("%d of the table's %d keys not written: the test proves nothing", n, maxShareKeys)
	}
	const flood = 20000
	for i := range flood {
		w.Record(Deny{Layer: "guard-rail", What: "exec", Target: "/usr/bin/git", PID: i, Reason: "git push --force"})
		if i%1024 == 1023 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.Record(Deny{Layer: "guard-rail", What: "exec", Target: "/usr/bin/rm", PID: 7, Reason: "rm -rf ~"})
	w.Record(Exit{Code: 0, Reason: "exited"})
	data := closeAndRead(t, w, path, budget)
	targets, keys := deniedTargets(t, data)
	if targets["/usr/bin/rm"] != 1 {
		t.Errorf("ATTACK WORKED: the distinct denial after a flood of one key past the table was not written (%d lines of the flooded key)", targets["/usr/bin/git"])
	}
	if targets["/usr/bin/git"] == 0 || targets["/usr/bin/git"] > perKeyShare {
		t.Errorf("%d of %d flooded denials written: want 1 to %d", targets["/usr/bin/git"], flood, perKeyShare)
	}
	if k := "deny guard-rail/exec /usr/bin/git"; keys[k] == 0 {
		t.Errorf("dropped events name no count for %q", k)
	}
}
