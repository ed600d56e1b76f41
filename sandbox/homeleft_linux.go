package sandbox

import (
	"strings"

	"github.com/jail-sandbox/jail/cachehint"
	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/homeleft"
	"github.com/jail-sandbox/jail/notice"
)

// This file: the end of a run names what it wrote into the sandbox's own
// home, which ended with it (package homeleft): an agent without a profile
// signed in and saved its settings there, and the next run finds nothing.

// maxHomeLeft bounds the names looked up in the said-once record.
const maxHomeLeft = 16

// holdHome opens the sandbox's home, once init's mounts are made, where it
// is a tmpfs of the sandbox's own (not the user's home shown by
// --allow-writable-home, not degraded mode's host directories): the
// descriptor keeps it readable at the end. Not under --dry-run or --quiet
// (the line would be silenced yet taken as said).
func (r *runner) holdHome(pid int) {
	if r.plan == nil || r.pol.DryRun || r.pol.Quiet || r.degraded || pid <= 0 || r.plan.Home == "" {
		return
	}
	if !cachehint.Fleeting(r.plan.Home, places(r.plan.Mounts)) {
		return
	}
	d, err := homeleft.Open(pid, r.plan.Home)
	if err != nil {
		if r.trace {
			r.notes.Notef("trace", notice.Trace, "supervisor the sandbox's home not held: %v", err)
		}
		return
	}
	r.mu.Lock()
	r.homeLeft = d
	r.mu.Unlock()
}

// sayHomeLeft says what the run left in the sandbox's home, each name once
// for each workspace (saidBefore's record), and lets the home go. It
// reports whether it held the home (a step of JAIL_TRACE's).
func (r *runner) sayHomeLeft() bool {
	r.mu.Lock()
	d := r.homeLeft
	r.homeLeft = nil
	r.mu.Unlock()
	if d == nil {
		return false
	}
	defer r.dropHome(d)
	home := r.plan.Home
	var mounts []string
	for _, m := range r.plan.Mounts {
		if rel, ok := strings.CutPrefix(m.Path, home+"/"); ok {
			mounts = append(mounts, rel)
		}
	}
	names := homeleft.List(d, mounts)
	if len(names) > maxHomeLeft {
		names = names[:maxHomeLeft]
	}
	var fresh []homeleft.Entry
	for _, n := range names {
		if !saidBefore(r.plan.StateDir, "home left\x00"+r.plan.Workspace+"\x00"+n.Rel, true, false) {
			fresh = append(fresh, n)
		}
	}
	profile := ""
	for _, h := range r.pol.ProfileHints {
		if h.Tool == "" {
			profile = h.Profile // named like the command (jail -- codex)
			break
		}
	}
	// --write refuses a path a built-in protection keeps read-only
	// (~/.gitconfig): the line does not offer it. Lifts are not counted.
	// The rules are compiled once (Validate's memo) for the few asked.
	in := fsrules.Input{Workspace: r.plan.Workspace, Home: home, Deny: r.pol.Deny, NoDefaultDeny: r.pol.NoDefaultDeny, AllowGitConfig: r.pol.AllowGitConfig}
	in.Rules, _ = fsrules.CheckRules(in) // nil: each Validate compiles its own
	keepable := func(e homeleft.Entry) bool {
		in := in
		in.Writable = []string{home + "/" + e.Rel}
		return fsrules.Validate(in) == nil
	}
	if line := homeleft.Note(fresh, profile, keepable); line != "" {
		r.notef("%s", line)
	}
	return true
}

// dropHome closes the home's descriptor in the background, as dropMounts
// closes the namespace: the last reference to the tmpfs frees what the
// run wrote there (a gigabyte takes milliseconds), which the exit need not
// wait for. awaitMounts does.
func (r *runner) dropHome(d homeleft.Dir) {
	done := make(chan struct{})
	r.homeDropped = done
	go func() {
		defer close(done)
		d.Close()
	}()
}
