package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/credswap"
	"github.com/jail-sandbox/jail/statedir"
)

// This file: the wiring of package credswap (agent credential files): the
// start's snapshot, taken with the agent configuration guard's (before the
// go) and recorded in the state directory for a killed run's next start,
// and the end's check, after the sandbox has ended.

// takeCreds snapshots the agents' credential files under the home and
// records the snapshot (credswap.Keep) until the end has settled them.
func (r *runner) takeCreds() {
	if r.plan.Home == "" {
		return
	}
	r.creds = credswap.Take(r.plan.Home)
	if r.plan.StateDir == "" || len(r.creds) == 0 {
		return
	}
	rec, err := credswap.Keep(filepath.Join(r.plan.StateDir, statedir.CredSwap), r.id, r.creds)
	if err != nil {
		// Not refused: the end still checks them. Said: a supervisor
		// killed in this run leaves what the agent wrote there.
		r.notef("agent credential files are checked at this run's end only, not at the next start if this run is killed (%v)", err)
		return
	}
	r.credRec = rec
}

// recoverCreds settles what runs whose supervisor was killed left in the
// credential files, as their end would have (credswap.Recover). Called
// before the start's snapshot and before init's mounts.
func (r *runner) recoverCreds() {
	if r.plan.StateDir == "" {
		return
	}
	r.settleDead(filepath.Join(r.plan.StateDir, statedir.CredSwap), r.id, r.plan.Home)
}

// gcCreds is jail gc's part: the same as a start's recoverCreds. It tells
// whether something could not be put back.
func (r *runner) gcCreds() (failed bool) {
	sd, err := statedir.Dir()
	if err != nil {
		return false
	}
	return r.settleDead(filepath.Join(sd, statedir.CredSwap), audit.NewID(), os.Getenv("HOME"))
}

func (r *runner) settleDead(dir, self, home string) (failed bool) {
	if _, err := os.Lstat(dir); err != nil {
		return false // no run has recorded any
	}
	for _, d := range credswap.Recover(dir, self) {
		if d.Err != nil {
			r.errorf("%v", d.Err)
			failed = true
			continue
		}
		if len(d.Changes) == 0 && len(d.Left) == 0 {
			continue
		}
		r.notef("earlier run %s (started %s) ended without its credential check (its supervisor was killed): checking its agent credential files now",
			d.ID, d.Started.Local().Format(time.DateTime))
		for _, s := range d.Left {
			r.notef("%s credentials: changed after that run ended (your CLI since, not that run's agent): left as they are", credPath(home, s))
		}
		if r.sayCreds(home, d.Changes, " (left by an interrupted jail run)") {
			failed = true
		}
	}
	return failed
}

// settleCreds puts back credential entries changed without a due refresh
// and says every change (entry names only, never token values). Why: an
// agent that writes another account's tokens there makes the user's CLI on
// the host work as that account (session 19's credswap).
func (r *runner) settleCreds() {
	snaps := r.creds
	r.creds = nil
	if len(snaps) == 0 {
		return
	}
	r.sayCreds(r.plan.Home, credswap.Settle(r.plan.Home, snaps, time.Now()), "")
	// Settled (a failure is said): the next start has nothing to repair.
	r.credRec.Drop()
	r.credRec = nil
}

// sayCreds says each change on the terminal and puts back ones in the
// trail. It tells whether one could not be put back.
func (r *runner) sayCreds(home string, changes []credswap.Change, leftover string) (failed bool) {
	for _, c := range changes {
		p := credPath(home, c.Snap)
		switch {
		case c.Created:
			// A sign-in inside (the profiles allow one): kept, but said
			// with what to do when it was not the user's (credswap.Decide).
			r.notef("%s credentials%s: made in the sandbox (a sign-in inside jail): kept; if you did not sign in there, remove the file and sign in on the host", p, leftover)
		case len(c.Kept) > 0:
			r.notef("%s credentials%s: %s changed with a token refresh due: kept", p, leftover, strings.Join(c.Kept, ", "))
		}
		if len(c.Undone) == 0 {
			continue
		}
		what := "put back as at the start (no token refresh was due: another account's tokens would have stayed)"
		if c.Err != nil {
			failed = true
			what = "could not be put back: " + c.Err.Error()
			r.errorf("%s credentials%s: %s changed and %s", p, leftover, strings.Join(c.Undone, ", "), what)
		} else {
			r.notef("%s credentials%s: %s changed in the sandbox: %s", p, leftover, strings.Join(c.Undone, ", "), what)
		}
		if leftover != "" {
			what += " (at the next start: the run that changed it was interrupted)"
		}
		for _, e := range c.Undone {
			r.record(audit.Deny{Layer: "agent-config", What: "credential", Target: c.Target + "#" + e, Reason: what})
		}
	}
	return failed
}

// credPath names a credential file as the user knows it: ~/PATH when it is
// under this home, else its whole path.
func credPath(home string, s credswap.Snap) string {
	if home != "" && s.Target == filepath.Join(home, s.Path) {
		return "~/" + s.Path
	}
	return s.Target
}
