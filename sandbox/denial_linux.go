package sandbox

import (
	"fmt"
	"os"
	"strings"

	"github.com/jail-sandbox/jail/denials"
	"github.com/jail-sandbox/jail/netproxy"
	"github.com/jail-sandbox/jail/notice"
	"github.com/jail-sandbox/jail/policy"
)

// This file: refusals, said once to the user and written down for the agent.

// A notice kind groups notices (the exit summary can count them by kind).
const (
	noticeNet     = "net-refused" // a flow or proxy request jail refused
	noticeNetFail = "net-failed"  // an allowed flow whose upstream could not be reached
	noticeExec    = "exec-refused"
	// a published port at its bound of open connections (one per port)
	noticePublishFull = "publish-full"
)

// denial is one refusal: what the user is told (once per key) and what the
// sandbox's record says (every time, within its budget).
type denial struct {
	kind  string        // the notice's kind
	key   string        // what makes two refusals the same thing
	text  string        // the user's notice, without "jail: "
	entry denials.Entry // the record's line
}

// deny reports a refusal: the record's line first (so that it is there by
// the time the client fails), then the user's notice if this thing was not
// refused before.
func (r *runner) deny(d denial) {
	r.mu.Lock()
	rec := r.denials
	r.mu.Unlock()
	if err := rec.Add(d.entry); err != nil {
		r.mu.Lock()
		r.denials = nil // the sandbox is gone, or its record is: stop writing
		r.mu.Unlock()
	}
	r.notice(d.kind, d.key, d.text)
}

// maxNotices bounds the notices of one kind: an agent that tries a thousand
// names must not fill the user's terminal (the trail has every one).
const maxNotices = 20

// notice says text to the user once per (kind, key) through the notice
// channel: later refusals of the same thing are counted there (the exit
// summary says how many times), and the trail has the first as a notice
// event. The channel holds it while a terminal is relayed.
func (r *runner) notice(kind, key, text string) {
	r.mu.Lock()
	if r.noticed == nil {
		r.noticed = map[string]bool{}
		r.noticeCount = map[string]int{}
	}
	k := kind + "\x00" + key
	seen := r.noticed[k]
	n := r.noticeCount[kind]
	if !seen {
		r.noticed[k] = true
		r.noticeCount[kind] = n + 1
	}
	r.mu.Unlock()
	switch {
	case seen:
		// Counted by the channel against the first (the text is not used).
		r.say(notice.Notice{Kind: kind, Severity: notice.Warning, Group: key})
	case n > maxNotices:
	case n == maxNotices:
		// Of kind, not "jail": recorded as the run's (recordNotice).
		r.say(notice.Notice{Kind: kind, Severity: notice.Warning, Text: Spell(fmt.Sprintf("more than %d %s notices; the audit trail has every one", maxNotices, kind))})
	default:
		// The agent chose the names and commands: an --env/--setenv value
		// it put there is the user's secret, on the screen as in the trail.
		r.say(notice.Notice{Kind: kind, Severity: notice.Warning, Group: key, Text: Spell(r.redact.str(text))})
	}
}

// openDenials takes the record's writable file from init.
func (r *runner) openDenials(f *os.File) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.denialsFile = f
	r.denials = denials.NewWriter(f, denials.DefaultBudget)
}

// closeDenials drops the supervisor's handle: with it goes the last
// reference to the record's file system, once the sandbox is gone too.
func (r *runner) closeDenials() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.denials = nil
	if r.denialsFile != nil {
		r.denialsFile.Close()
		r.denialsFile = nil
	}
}

// netDenial turns a refused flow's event into a denial: the user's notice
// names the target and the flag that would allow it, and the profile named
// like the command that would (hints: policy.ProfileHints); the record says
// the same in the words the sandbox may read (Public: no address the host
// resolved), without the profile (the agent cannot apply one). sshAgent
// says the run passes an ssh agent: a refusal of port 22 (git over ssh)
// without one names `ssh-agent` beside the domain, since the domain alone
// leads to ssh's "Permission denied (publickey)".
func netDenial(ev netproxy.Event, hints []policy.ProfileHint, sshAgent bool, sshHostOf func(string) string) denial {
	target := ev.Target()
	e := denials.Entry{Time: ev.Time, Kind: denials.KindNet, Target: target, Reason: ev.Public}
	if e.Reason == "" || e.Reason == ev.Reason {
		e.Reason, e.Allow = ev.Reason, ev.Hint
	}
	// The record is read as it is: its option references are spelled as
	// the user types them (--allow-domain), like the notice (notef).
	e.Reason, e.Allow = Spell(e.Reason), Spell(e.Allow)
	text := netproxy.RefusalText(target, ev.Reason, ev.Hint)
	if ev.Port == 22 && ev.Name != "" && ev.Hint != "" && !sshAgent {
		if host := hostOf(sshHostOf, ev.Name); host != "" {
			// A Host alias of the user's ssh config (git@gh-work:...):
			// ssh inside knew no such host (the config is hidden without
			// --ssh-agent, which shows a copy), and the domain to allow
			// is the alias's HostName, not the alias.
			text = netproxy.RefusalText(target, ev.Reason, "`ssh-agent` and `allow-domain` "+host) +
				" (" + ev.Name + " is a Host of your ~/.ssh/config, for " + host + ")"
		} else {
			text += " and `ssh-agent` (ssh signs with your agent's keys)"
		}
	}
	if p := hintedProfile(ev, hints); p != "" {
		text += ", or run with `profile` " + p + ", which allows it and keeps " + p + "'s own state"
	}
	return denial{kind: noticeNet, key: target, text: text, entry: e}
}

// hostOf asks sshHostOf (nil: no ssh config known) for name's HostName.
func hostOf(sshHostOf func(string) string, name string) string {
	if sshHostOf == nil {
		return ""
	}
	return sshHostOf(name)
}

// hintedProfile is the first of hints whose allow-domain patterns let ev's
// name and port through, "" for none (or a refusal no allow-domain undoes:
// a raw address, a deny-domain rule).
func hintedProfile(ev netproxy.Event, hints []policy.ProfileHint) string {
	if ev.Name == "" || ev.Hint == "" {
		return ""
	}
	h, _ := allowingHint(ev, hints)
	return h.Profile
}

// execDenial is a command the guard rail refused: path and argv as the trail
// has them (redacted, bounded), rule the guard rail's rule. No flag is
// suggested: the rules catch destructive commands, and turning them off
// (--no-guard-rails) is not advice jail gives for one command.
func execDenial(path string, argv []string, rule string) denial {
	line := strings.Join(argv, " ")
	return denial{kind: noticeExec, key: line, text: "refused command " + line + " (guard rail " + rule + ")",
		entry: denials.Entry{Kind: denials.KindExec, Target: path, Argv: argv, Reason: "guard rail " + rule}}
}
