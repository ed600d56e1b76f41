package main

import (
	"path/filepath"
	"slices"

	"github.com/jail-sandbox/jail/config"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/profile"
)

// profileHints is the profile named like the command's program (jail --
// claude: the claude profile) when the run does not apply it, with the
// names it allows: a refusal of one of them then says that the profile
// allows it (the supervisor's netDenial). `jail -- claude` refused
// api.anthropic.com and said to allow that one name, the first of several
// steps (its sign-in's host next, then the state an empty home does not
// keep) each of which the profile takes. Only that one profile is read,
// and only then: a run with it applied, or of a program no profile is
// named after, reads none.
func profileHints(env config.Env, command, applied []string) []policy.ProfileHint {
	if len(command) == 0 {
		return nil
	}
	name := filepath.Base(command[0])
	if !policy.ValidName(name) || slices.Contains(applied, name) {
		return nil
	}
	f, err := profile.ForConfigDir(env.ConfigDir).Load(name)
	if err != nil {
		return nil // none of that name, or one that does not parse (its own run says so)
	}
	var doms []string
	for _, s := range f.Settings {
		if s.Option != nil && s.Option.Name == "allow-domain" {
			doms = append(doms, s.Value)
		}
	}
	if len(doms) == 0 {
		return nil
	}
	return []policy.ProfileHint{{Profile: name, Domains: doms}}
}
