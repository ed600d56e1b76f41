package sandbox

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/jail-sandbox/jail/agentcfg"
	"github.com/jail-sandbox/jail/hostpath"
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
	r := hostpath.NewResolver()
	defer r.Close()
	return policyNamedLiveBy(r, flagged, all, first, live)
}

// policyNamedLiveBy is policyNamedLive with r's lookups (nil: afresh).
func policyNamedLiveBy(r *hostpath.Resolver, flagged, all []policy.PolicyFile, first map[string]time.Time, live []Entry) error {
	// Each file resolved once, when a live run is first checked against
	// it, not again for every live run.
	resolved := make(map[string][]string, len(all))
	writes := func(e Entry, f policy.PolicyFile) bool {
		names, ok := resolved[f.Path]
		if !ok {
			names = namedPaths(r, f.Path)
			resolved[f.Path] = names
		}
		return e.canWrite(names...)
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

// namedPaths are path and, when it resolves elsewhere, where it leads (r:
// the pass's resolver, nil looks afresh).
func namedPaths(r *hostpath.Resolver, path string) []string {
	out := []string{path}
	if real, _, err := resolveNamedBy(r, path); err == nil && real != path {
		out = append(out, real)
	}
	return out
}

// namedIn says whether one of names lies in trees.
func namedIn(names, trees []string) bool {
	for _, n := range names {
		if enclosing(n, trees) != "" {
			return true
		}
	}
	return false
}

// canWrite says whether one of paths lies in a tree the run of e can write.
func (e Entry) canWrite(paths ...string) bool {
	trees := e.Writable
	if len(trees) == 0 && e.Workspace != "" {
		trees = []string{e.Workspace} // a record of an older jail
	}
	return namedIn(paths, trees)
}

// policyNamedSince refuses this run, once registered, when the record in
// stateDir names a file its plan did not see there (kept: what the plan
// read) in a tree it can write (writable). Why: a start naming the file
// while this one planned (two starts at once) wrote the record after this
// plan read it, and listed the live runs before this one was registered:
// neither saw the other, and this run's agent could rewrite what that
// run's next start reads (policyfiles3). With the name written before
// that start's list, and this check after this run's registration, one of
// the two always sees the other.
func policyNamedSince(stateDir string, kept map[string]bool, writable []string) error {
	r := hostpath.NewResolver()
	defer r.Close()
	return policyNamedSinceBy(r, readPolicyNamed(stateDir), kept, writable)
}

// policyNamedSinceBy is policyNamedSince on the record rec with r's
// lookups (nil: afresh).
func policyNamedSinceBy(r *hostpath.Resolver, rec policyNamedRecord, kept map[string]bool, writable []string) error {
	paths := make([]string, 0, len(rec))
	for p := range rec {
		if !kept[p] && filepath.IsAbs(p) {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		if namedIn(namedPaths(r, p), writable) {
			return fmt.Errorf("policy file %s was named (%s) by a start made while this one was planned, and lies in a tree this run can write: start again (it is read-only then)", p, rec[p].From)
		}
	}
	return nil

}

// guardSwapped is the refusal of a start whose guarded agent settings
// changed between the plan and the guard (skipped: agentcfg.New's "PATH:
// what it is now"). Such a change is another process's: a live run whose
// agent can write there (live, without this run, self) is named, with how
// to stop it. Not retried: the window is the whole sandbox's making, a
// retry needs a new plan, and an agent that swaps on purpose wins the
// retry's window too; refused, nothing is left unguarded (session 19).
func guardSwapped(skipped []string, targets []agentcfg.Target, live []Entry, self string) error {
	var paths []string
	for _, t := range targets {
		for _, s := range skipped {
			if strings.HasPrefix(s, t.Path+":") {
				paths = append(paths, t.Path)
			}
		}
	}
	// Each path as named and where it leads, with the links on its way:
	// a target reached through a symlink into a live run's tree (~/.claude
	// -> a workspace's cfg) was called "another program" by its lexical
	// path only (session 19), and a link on the way that run can write is
	// as much its agent's to swap.
	var names []string
	for _, p := range paths {
		names = append(names, p)
		if real, via, err := resolveNamed(p); err == nil {
			names = append(append(names, real), via...)
		} else {
			names = append(names, via...)
		}
	}
	who := "another program changed it"
	for _, e := range live {
		if e.ID != self && e.canWrite(names...) {
			who = fmt.Sprintf("the live run %s can write there, and its agent may be changing it: stop it (jail kill %s) or wait for it to end", e.ID, e.ID)
			break
		}
	}
	return fmt.Errorf("%w: agent configuration changed while the sandbox was being made, and jail cannot guard it now (%s); %s, then start jail again", policy.ErrInvalid, strings.Join(skipped, "; "), who)
}
