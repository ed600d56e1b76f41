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
// agent's bytes.
func policyNamedLive(files []policy.PolicyFile, first map[string]time.Time, live []Entry) error {
	for _, f := range files {
		names := []string{f.Path}
		if real, _, err := resolveNamed(f.Path); err == nil && real != f.Path {
			names = append(names, real)
		}
		for _, e := range live {
			if !e.Started.Before(first[f.Path]) {
				continue // started after: it read the record and keeps the file
			}
			trees := e.Writable
			if len(trees) == 0 && e.Workspace != "" {
				trees = []string{e.Workspace} // a record of an older jail
			}
			for _, n := range names {
				if enclosing(n, trees) != "" {
					return fmt.Errorf("policy file %s (%s) can be written by a live run (%s, started %s, before any run named the file): its agent could change this run's next policy; stop it (jail kill %s) or wait for it to end, then start again",
						f.Path, f.From, e.ID, e.Started.Format(time.TimeOnly), e.ID)
				}
			}
		}
	}
	return nil
}
