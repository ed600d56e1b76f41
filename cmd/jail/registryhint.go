package main

import (
	"os"
	"slices"
	"time"

	"github.com/jail-sandbox/jail/config"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/profile"
	"github.com/jail-sandbox/jail/toolreg"
)

// hintTimeout bounds each tool's answer at the end of a run.
const hintTimeout = 3 * time.Second

// registryHints answers the supervisor's question at the end of a run that
// refused a name and ran a package tool (policy.RegistryHints): which
// profiles the run does not apply take their registries from one of those
// tools, and which hosts the host's configuration of each tool names, as
// allowRegistries would allow them under the profile. Nothing is read or
// run before it is asked: a start pays for a closure. Under a net none or
// host the user set, a profile allows no registry (allowRegistries), so
// there is nothing to say; the none a policy without rules is given by
// default is not that (res.Policy is the policy before its check).
func registryHints(p policy.Policy, res *config.Result, env config.Env, environ []string) func([]string) []policy.ProfileHint {
	if res.Policy.Net == policy.NetNone || res.Policy.Net == policy.NetHost {
		return nil
	}
	return hintsFor(p, res.Workspace, env, environ)
}

// backgroundRegistryHints is registryHints in the supervisor of a
// background sandbox (jail.RegistryHints), asked only when the command
// line's policy had them: it runs in the command line's environment and
// directory, and its policy is the one the command line made, workspace
// and all (none set: the one jail chooses, config.GitTopLevel).
func backgroundRegistryHints(p *policy.Policy) func([]string) []policy.ProfileHint {
	env, err := config.ProcessEnv()
	if err != nil {
		return nil
	}
	if p.Cwd != "" {
		env.Cwd = p.Cwd
	}
	ws := p.Workspace
	if ws == "" {
		ws = config.GitTopLevel(env)
	}
	return hintsFor(*p, ws, env, os.Environ())
}

// hintsFor is registryHints' question, for a run in workspace.
func hintsFor(p policy.Policy, workspace string, env config.Env, environ []string) func([]string) []policy.ProfileHint {
	return func(tools []string) []policy.ProfileHint {
		src := profile.ForConfigDir(env.ConfigDir)
		// Each profile is loaded once, below (List would load them all
		// for their descriptions first).
		infos, err := src.Names()
		if err != nil {
			return nil
		}
		type cand struct {
			name, tool string
			caches     bool
		}
		var cands []cand
		var want []string
		for _, in := range infos {
			if slices.Contains(p.Profile, in.Name) {
				continue
			}
			f, err := src.Load(in.Name)
			if err != nil {
				continue // one that does not parse (its own run says so)
			}
			caches := slices.ContainsFunc(f.Settings, func(s config.Setting) bool { return s.Option != nil && s.Option.Name == "cache" })
			for _, r := range f.Registries {
				if slices.Contains(tools, r.Tool) {
					cands = append(cands, cand{in.Name, r.Tool, caches})
					if !slices.Contains(want, r.Tool) {
						want = append(want, r.Tool)
					}
				}
			}
		}
		if len(cands) == 0 {
			return nil
		}
		// A hint is not worth the wait a profile's start accepts (toolreg's
		// 10 s): a tool that does not answer in time is named by none.
		renv := registryEnv(&p, workspace, env, environ)
		renv.Timeout = hintTimeout
		found := toolreg.Resolve(want, renv)
		var out []policy.ProfileHint
		for _, c := range cands {
			h := policy.ProfileHint{Profile: c.name, Tool: c.tool, Caches: c.caches}
			for _, host := range found.Hosts {
				// An address is allowed by allow-ip, not by a name's
				// pattern; the profile's run says so (allowRegistries).
				if host.Tool == c.tool && !host.IsIP() {
					h.Domains = append(h.Domains, host.Pattern())
				}
			}
			if len(h.Domains) > 0 {
				out = append(out, h)
			}
		}
		return out
	}
}
