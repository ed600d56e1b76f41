package sandbox

import (
	"strings"
	"time"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/credswap"
)

// This file: the wiring of package credswap (agent credential files): the
// start's snapshot, taken with the agent configuration guard's (before the
// go), and the end's check, after the sandbox has ended.

// takeCreds snapshots the agents' credential files under the home.
func (r *runner) takeCreds() {
	if r.plan.Home == "" {
		return
	}
	r.creds = credswap.Take(r.plan.Home)
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
	for _, c := range credswap.Settle(r.plan.Home, snaps, time.Now()) {
		p := c.Target
		switch {
		case c.Created:
			// A sign-in inside (the profiles allow one): kept, but said
			// with what to do when it was not the user's (credswap.Decide).
			r.notef("%s credentials: made in the sandbox (a sign-in inside jail): kept; if you did not sign in there, remove the file and sign in on the host", p)
		case len(c.Kept) > 0:
			r.notef("%s credentials: %s changed with a token refresh due: kept", p, strings.Join(c.Kept, ", "))
		}
		if len(c.Undone) == 0 {
			continue
		}
		what := "put back as at the start (no token refresh was due: another account's tokens would have stayed)"
		if c.Err != nil {
			what = "could not be put back: " + c.Err.Error()
			r.errorf("%s credentials: %s changed and %s", p, strings.Join(c.Undone, ", "), what)
		} else {
			r.notef("%s credentials: %s changed in the sandbox: %s", p, strings.Join(c.Undone, ", "), what)
		}
		for _, e := range c.Undone {
			r.record(audit.Deny{Layer: "agent-config", What: "credential", Target: p + "#" + e, Reason: what})
		}
	}
}
