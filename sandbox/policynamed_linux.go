package sandbox

import (
	"fmt"
	"time"

	"github.com/jail-sandbox/jail/policy"
)

// policyNamedLive refuses a policy file named by a flag that a live run
// (live: the registry's records) can write: one started before any run
// named the file, in whose writable trees it lies. That run keeps it
// writable while it lasts, and this run's next start would read its
// agent's bytes. A live degraded run (no mounts: it guards a policy file,
// and a symlink on the way to one, by putting it back when changed) can
// change any of this run's policy files (all) for a moment, and this start
// may have read them then: refused too, whatever named them.
func policyNamedLive(flagged, all []policy.PolicyFile, first map[string]time.Time, live []Entry) error {
	names := func(f policy.PolicyFile) []string {
		out := []string{f.Path}
		if real, _, err := resolveNamed(f.Path); err == nil && real != f.Path {
			out = append(out, real)
		}
		return out
	}
	writes := func(e Entry, f policy.PolicyFile) bool {
		trees := e.Writable
		if len(trees) == 0 && e.Workspace != "" {
			trees = []string{e.Workspace} // a record of an older jail
		}
		for _, n := range names(f) {
			if enclosing(n, trees) != "" {
				return true
			}
		}
		return false
	}
	for _, e := range live {
		if !e.Degraded {
			continue
		}
		for _, f := range all {
			// Why: the guard's window (the file, or the link on the way
			// to it, changed until the supervisor puts it back) is when
			// this start may have read it.
			if writes(e, f) {
				return fmt.Errorf("policy file %s (%s) lies in a tree a live degraded run (%s) can write: it is put back when changed, not read-only, so this start may have read its agent's bytes; wait for that run to end (or jail kill %s), then start again",
					f.Path, f.From, e.ID, e.ID)
			}
		}
	}
	for _, f := range flagged {
		for _, e := range live {
			if !e.Started.Before(first[f.Path]) {
				continue // started after: it read the record and keeps the file
			}
			if writes(e, f) {
				return fmt.Errorf("policy file %s (%s) can be written by a live run (%s, started %s, before any run named the file): its agent could change this run's next policy; stop it (jail kill %s) or wait for it to end, then start again",
					f.Path, f.From, e.ID, e.Started.Format(time.TimeOnly), e.ID)
			}
		}
	}
	return nil
}
