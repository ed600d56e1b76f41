//go:build linux

package tests

// Issue 12: the audit summary. It tells exec attempts of missing paths
// from executions, groups repeated denials with counts, and shows failed
// connections as failed; a note true of several paths is said once.

import (
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The summary tells exec attempts of missing paths (a PATH search) from
// executions, groups repeated denials with counts, and shows a connection
// whose upstream could not be reached as failed, not as "allow 0B 0B".
func TestAuditSummaryAttemptsGroupsFailed(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close() // nothing listens there: the upstream dial fails
	probe := `use IO::Socket::INET;
my $s = IO::Socket::INET->new(PeerAddr => "down.test", PeerPort => $ARGV[0], Proto => "tcp", Timeout => 5);
if ($s) { print $s "hello\n"; my $l = <$s>; print defined $l ? "reply:$l" : "noreply\n" } else { print "noconnect\n" }`
	script := `PATH=/nonexistent/a:/nonexistent/b:/usr/bin:/bin; export PATH
env jail-no-such-cmd 2>/dev/null
n=1; for i in 1 2 3 4 5; do /usr/bin/touch forbidden-$n; done
/usr/bin/perl -e '` + probe + `' ` + port
	trail := filepath.Join(auditDir(t), "summary.jsonl")
	r := sh(t, runOpts{}, script, "--net", "allow", "--add-host", "down.test:127.0.0.1",
		"--allow-domain", "down.test:"+port, "--allow-ip", "127.0.0.1/32:"+port,
		"--block-command", "forbidden-[0-9]+", "--audit", trail)
	if strings.Contains(r.stdout, "reply:") {
		t.Fatalf("the probe had a reply from a closed port: %q %s", r.stdout, r.stderr)
	}
	s := auditCLI(t, trail)
	out := s.stdout
	// Attempts: env's execvp tried /nonexistent/a and /nonexistent/b
	// (and /usr/bin, /bin) for jail-no-such-cmd.
	cmds := section(out, "Commands")
	if strings.Contains(cmds, "jail-no-such-cmd") {
		t.Errorf("exec attempts of missing paths are listed as commands:\n%s", cmds)
	}
	if a := section(out, "Exec attempts"); !strings.Contains(a, "/nonexistent/a/jail-no-such-cmd") {
		t.Errorf("no attempts section naming the missing paths:\n%s", out)
	}
	if !strings.Contains(cmds, "/usr/bin/env") {
		t.Errorf("env itself is not a command:\n%s", cmds)
	}
	// Five refusals of one command: one line with its count.
	den := section(out, "Denials")
	if n := strings.Count(den, "forbidden-1"); n != 1 || !strings.Contains(den, "(5 times)") {
		t.Errorf("denials not grouped (want one line, 5 times):\n%s", den)
	}
	// The failed connection.
	netSec := section(out, "Network")
	if !regexp.MustCompile(`down\.test:` + port + ` +failed +1 `).MatchString(netSec) {
		t.Errorf("the failed connection is not shown as failed:\n%s", netSec)
	}
	if regexp.MustCompile(`down\.test:` + port + ` +allow`).MatchString(netSec) {
		t.Errorf("the failed connection reads as allowed:\n%s", netSec)
	}
	var failed int
	for _, e := range eventsOf(trailEvents(t, trail), "net") {
		if e["failed"] == true && e["name"] == "down.test" {
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("%d net events with failed:true for down.test, want 1", failed)
	}
}

// section returns the summary's section that starts with title, up to the
// next blank line.
func section(out, title string) string {
	i := strings.Index(out, "\n"+title)
	if i < 0 {
		return ""
	}
	s := out[i+1:]
	if j := strings.Index(s, "\n\n"); j >= 0 {
		s = s[:j]
	}
	return s
}

// A note true of several writable paths is said once, naming them all,
// not once per -w.
func TestAuditNotesOncePerThing(t *testing.T) {
	a, b := workspace(t), workspace(t)
	trail := filepath.Join(auditDir(t), "notes.jsonl")
	mustCode(t, run(t, runOpts{}, "-w", a, "-w", b, "--audit", trail, "--", "true"), 0)
	start := eventsOf(trailEvents(t, trail), "start")[0]
	notes, _ := start["notes"].([]any)
	var missing []string
	for _, n := range notes {
		if s := n.(string); strings.Contains(s, "do not exist") {
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 || len(missing) > 2 {
		t.Fatalf("%d notes about missing names, want 1 or 2 (one per kind): %q", len(missing), missing)
	}
	for _, s := range missing {
		if !strings.Contains(s, a+", "+b) {
			t.Errorf("note does not name both paths: %q", s)
		}
	}
}
