package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jail-sandbox/jail/agentcfg"
	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/sentinel"
	"github.com/jail-sandbox/jail/statedir"
)

// This file: the wiring of package agentcfg (agent configuration that names
// commands): where its state lives, when it starts and stops, and how what it
// did reaches the user (an audit event at once, a notice at exit).

// agentGuard is the runner's part of it.
type agentGuard struct {
	g      *agentcfg.Guard
	mu     sync.Mutex
	events []agentcfg.Event // for the exit notice
	// The trail opens with its start event: deny events that come before it
	// (an interrupted run's leftovers found at start) wait here.
	started bool
	pending []audit.Event
	closing bool // the last check (Close) is under way: its events are "exit"
}

// recoverGuard finishes what interrupted runs left (Recover). Called after
// the trail is open and before init has its spec: a file a killed run's
// agent changed is put back before init's mounts are made (a file bind
// mount holds the inode it was made on, and Recover may write by rename).
func (r *runner) recoverGuard() error {
	// The records say what to write at the next start and the quarantine
	// holds the agents' versions: both live in jail's state directory,
	// which no plan lets the sandbox see (BuildPlan refuses or masks it).
	if r.plan.StateDir == "" {
		if len(r.plan.Guarded) == 0 {
			return nil
		}
		return fmt.Errorf("%w: agent configuration guard: %v", policy.ErrInvalid, statedir.ErrNoStateDir)
	}
	r.acfg = &agentGuard{}
	agentcfg.Recover(r.guardOptions())
	return nil
}

// gcAgentConfig is jail gc's part of it: what a killed run's agent left
// in its configuration, and what a run's last check could not put back
// (its record stays), is put back as the next start would (Recover), and
// said. It tells whether something still could not be.
func (r *runner) gcAgentConfig() (failed bool) {
	sd, err := statedir.Dir()
	if err != nil {
		return false
	}
	dir := filepath.Join(sd, statedir.AgentConfig)
	if _, err := os.Lstat(dir); err != nil {
		return false // no run has guarded anything
	}
	agentcfg.Recover(agentcfg.Options{
		Dir: dir, Quarantine: filepath.Join(sd, statedir.Quarantine), ID: audit.NewID(),
		Report: func(ev agentcfg.Event) {
			failed = failed || ev.Err != nil
			guardManifest(ev, "leftover")
			r.guardNotice(ev)
		},
	})
	return failed
}

func (r *runner) guardOptions() agentcfg.Options {
	return agentcfg.Options{
		Dir:        filepath.Join(r.plan.StateDir, statedir.AgentConfig),
		Quarantine: filepath.Join(r.plan.StateDir, statedir.Quarantine),
		ID:         r.id, Context: agentcfg.Context{Workspace: r.plan.Workspace}, Report: r.guardReport,
	}
}

// openGuard snapshots the plan's guarded files, writes the record a killed
// run's next start repairs from, and starts watching them. It runs while
// init builds the sandbox (raiseWalls), before the go: nothing of the
// sandbox has run yet, so the snapshot is the files as the user left them.
func (r *runner) openGuard() error {
	if r.acfg == nil || len(r.plan.Guarded) == 0 {
		return nil
	}
	g, skipped, err := agentcfg.New(r.plan.Guarded, r.guardOptions())
	if len(skipped) > 0 {
		// Why: the plan masked or resolved every path it saw odd; one New
		// still cannot guard changed since the plan (a concurrent run's
		// agent swapped a FIFO or a symlink in). Left out, it was the
		// agent's to write, and its hooks there outlived the run: the
		// start is refused instead (session 18), naming a live run that
		// can write there (session 19).
		live, _ := List()
		return guardSwapped(skipped, r.plan.Guarded, live, r.id)
	}
	if err != nil {
		return err
	}
	r.acfg.g = g
	if err := g.Watch(); err != nil {
		n := fmt.Sprintf("agent configuration is checked at exit only, not while the sandbox runs (%v)", err)
		r.plan.Notes = append(r.plan.Notes, n)
		r.notef("%s", n)
	}
	return nil
}

// guardReport records an event at once; the notice waits for the exit
// (while the sandbox runs, the terminal may be the agent's). Events found
// at start (an interrupted run) are told at once.
func (r *runner) guardReport(ev agentcfg.Event) {
	r.acfg.mu.Lock()
	phase := "run"
	if ev.Recovered {
		phase = "leftover"
	} else if r.acfg.closing {
		phase = "exit"
	}
	for _, a := range guardAudit(ev) {
		if r.acfg.started {
			r.record(a)
		} else {
			r.acfg.pending = append(r.acfg.pending, a)
		}
	}
	r.acfg.mu.Unlock()
	guardManifest(ev, phase)
	if ev.Recovered {
		r.guardNotice(ev)
		return
	}
	r.acfg.mu.Lock()
	r.acfg.events = append(r.acfg.events, ev)
	r.acfg.mu.Unlock()
}

// guardStarted records the events held until the start event was written;
// called right after it.
func (r *runner) guardStarted() {
	if r.acfg == nil {
		return
	}
	r.acfg.mu.Lock()
	defer r.acfg.mu.Unlock()
	r.acfg.started = true
	for _, a := range r.acfg.pending {
		r.record(a)
	}
	r.acfg.pending = nil
}

// closeGuard runs the last check (the sandbox has ended) and tells the user
// what was put back. Safe to call more than once.
func (r *runner) closeGuard() {
	if r.acfg == nil {
		return
	}
	r.acfg.mu.Lock()
	r.acfg.closing = true
	r.acfg.mu.Unlock()
	if r.acfg.g != nil {
		// The inotify descriptor is closed last, off the run's end
		// (closeWatches).
		r.closeLater(r.acfg.g.CloseLater())
	}
	r.acfg.mu.Lock()
	evs := r.acfg.events
	r.acfg.events = nil
	r.acfg.mu.Unlock()
	undone := false
	for _, ev := range mergeGuardEvents(evs) {
		r.guardNotice(ev)
		undone = undone || (ev.Err == nil && ev.Action != "left" && ev.Action != "readable")
	}
	if undone {
		// What to do next, once: the user may have asked for the change
		// inside (Gemini CLI's "trust parent folder", an MCP server
		// added in a session), and would otherwise be asked again, or
		// find it gone, at every run.
		r.notef("agent configuration: the guard undoes such a change in every run; to keep one, make it outside jail (the agent run on the host, or the file itself)")
	}
}

// mergeGuardEvents folds the events of one file into one notice.
func mergeGuardEvents(evs []agentcfg.Event) []agentcfg.Event {
	var out []agentcfg.Event
	idx := map[string]int{}
	for _, ev := range evs {
		if ev.Err != nil || ev.Action == "readable" {
			// A failure, or modes given back (not keys): told on their own.
			out = append(out, ev)
			continue
		}
		i, ok := idx[ev.Target.Path]
		if !ok {
			idx[ev.Target.Path] = len(out)
			out = append(out, ev)
			continue
		}
		m := &out[i]
		for _, k := range ev.Keys {
			if !containsStr(m.Keys, k) {
				m.Keys = append(m.Keys, k)
			}
		}
		m.Whole = m.Whole || ev.Whole
		if ev.Saved != "" {
			m.Saved = ev.Saved
		}
	}
	return out
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func (r *runner) guardNotice(ev agentcfg.Event) {
	p := ev.Target.Path
	if ev.Err != nil {
		r.errorf("agent configuration: %s: %v", p, ev.Err)
		return
	}
	saved := ""
	if ev.Saved != "" {
		saved = "; the agent's version is saved in " + ev.Saved
	}
	prefix := "agent configuration"
	if ev.Retried {
		prefix += " (left by a jail run that could not put it back)"
	} else if ev.Recovered {
		prefix += " (left by an interrupted jail run)"
	}
	switch {
	case ev.Action == "left":
		r.notef("%s: %s changed after that run ended (%s): left as it is", prefix, p, noticeKeys(ev.Keys, ", "))
	case ev.Action == "readable":
		r.notef("%s: the agent had made %s unreadable (its loader would read no settings, your restrictions in it gone): read access given back (%s)", prefix, p, strings.Join(ev.Keys, "; "))
	case ev.Action == "stripped":
		r.notef("%s: took %s out of %s, which the agent created%s", prefix, noticeKeys(ev.Keys, ", "), p, saved)
	case ev.Action == "removed":
		r.notef("%s: removed %s, which the agent created (%s)%s", prefix, p, noticeKeys(ev.Keys, ", "), saved)
	case ev.Whole:
		r.notef("%s: put back %s as it was (%s)%s", prefix, p, noticeKeys(ev.Keys, "; "), saved)
	default:
		r.notef("%s: put back %s in %s as on the host%s", prefix, noticeKeys(ev.Keys, ", "), p, saved)
	}
}

// noticeMaxKeys bounds the keys a notice names: an agent that changed
// every project's MCP servers (thousands) would otherwise print a line of
// tens of kilobytes. The trail's events and the quarantine's manifest
// keep the whole list.
const noticeMaxKeys = 8

// noticeKeys joins keys with sep for a notice, the first noticeMaxKeys of
// them and how many more.
func noticeKeys(keys []string, sep string) string {
	if len(keys) <= noticeMaxKeys {
		return strings.Join(keys, sep)
	}
	return fmt.Sprintf("%s%sand %d more (the audit trail lists each)", strings.Join(keys[:noticeMaxKeys], sep), sep, len(keys)-noticeMaxKeys)
}

// guardManifest lists a saved agent version in the manifest.jsonl of the
// quarantine directory that holds it, as the sentinel lists its entries
// (sentinel.AppendManifest is the manifest's one writer).
func guardManifest(ev agentcfg.Event, phase string) {
	if ev.Saved == "" {
		return
	}
	what := strings.Join(ev.Keys, ", ")
	if ev.Whole {
		what = strings.Join(ev.Keys, "; ")
	}
	me := sentinel.Event{Time: time.Now().UTC(), Phase: phase, Path: ev.Target.Path, Rule: "agent-config",
		Reason: what + ": " + guardAction(ev), Stored: ev.Saved, Kind: "file",
		Replaced: ev.Action == "restored" || ev.Action == "stripped"}
	if fi, err := os.Lstat(ev.Saved); err == nil {
		me.Bytes = fi.Size()
	}
	_ = sentinel.AppendManifest(filepath.Dir(ev.Saved), me) // best effort, as the sentinel's own lines
}

// guardAction says what the guard did, for the trail and the manifest.
func guardAction(ev agentcfg.Event) string {
	reason := "put back the host's value"
	switch ev.Action {
	case "left":
		reason = "changed after an interrupted run ended: left as it is"
	case "removed":
		reason = "removed: the agent created it"
	case "stripped":
		reason = "taken out of a file the agent created"
	case "readable":
		reason = "read access given back: the agent had made it unreadable (read as no settings)"
	}
	if ev.Retried {
		reason += " (at the next start: the run that changed it could not put it back)"
	} else if ev.Recovered && ev.Action != "left" {
		reason += " (at the next start: the run that changed it was interrupted)"
	}
	return reason
}

// guardAudit turns an event into deny events: one per key put back.
func guardAudit(ev agentcfg.Event) []audit.Event {
	p := ev.Target.Path
	if ev.Err != nil {
		return []audit.Event{audit.Deny{Layer: "agent-config", What: "config-file", Target: p, Reason: "could not put back: " + ev.Err.Error()}}
	}
	reason := guardAction(ev)
	if ev.Saved != "" {
		reason += "; the agent's version is saved in " + ev.Saved
	}
	if ev.Whole || ev.Action == "readable" {
		return []audit.Event{audit.Deny{Layer: "agent-config", What: "config-file", Target: p, Reason: strings.Join(ev.Keys, "; ") + ": " + reason}}
	}
	var out []audit.Event
	for _, k := range ev.Keys {
		out = append(out, audit.Deny{Layer: "agent-config", What: "config-key", Target: p + "#" + k, Reason: reason})
	}
	return out
}
