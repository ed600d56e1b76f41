package sandbox

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jail-sandbox/jail/netproxy"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/toolreg"
)

// This file: the end of a run that refused a package registry says which
// toolchain profile would have allowed it. `jail -- npm install`, or an
// agent's npm install under -P claude, is refused the registry, and the
// refusal says to allow that one name: it then works, but with npm's cache
// in the sandbox's empty home, lost at the end, where -P node allows every
// registry npm is configured with and keeps a cache of jail's own. Which
// profile allows what is the host's configuration of each tool, asked only
// here, at the end, and only when both a refusal and one of the tools'
// programs happened (policy.RegistryHints).

// maxRefusedNames bounds the refused names kept for the end's hint (the
// trail has every one).
const maxRefusedNames = 64

// sawExec notes the tool a program of the sandbox's belongs to
// (toolreg.ToolOf), for sayRegistryHints.
func (r *runner) sawExec(path string, argv []string) {
	if t := toolreg.ToolOf(path, argv); t != "" {
		r.toolsRan.Or(toolBit(t))
	}
}

func toolBit(tool string) uint32 {
	if i := slices.Index(toolreg.Tools, tool); i >= 0 {
		return 1 << i
	}
	return 0
}

// refusedName keeps a refused flow's event when an allow-domain rule would
// let it through (a name and a hint): what a profile's registries could
// allow.
func (r *runner) refusedName(ev netproxy.Event) {
	if ev.Name == "" || ev.Hint == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.refused) >= maxRefusedNames || slices.ContainsFunc(r.refused, func(o netproxy.Event) bool { return o.Name == ev.Name && o.Port == ev.Port }) {
		return
	}
	r.refused = append(r.refused, ev)
}

// sayRegistryHints says, for each toolchain profile that would have
// allowed names this run refused, one line naming the profile. Never under
// --dry-run or --quiet (as sayCacheHints), nor without a refusal or a
// tool's program among the run's execs (its command's program where the
// execs are not seen).
func (r *runner) sayRegistryHints() {
	if r.pol.RegistryHints == nil || r.pol.DryRun || r.pol.Quiet {
		return
	}
	bits := r.toolsRan.Load()
	if !r.execsSeen.Load() && len(r.pol.Command) > 0 {
		bits |= toolBit(toolreg.ToolOf(r.pol.Command[0], r.pol.Command))
	}
	var tools []string
	for i, t := range toolreg.Tools {
		if bits&(1<<i) != 0 {
			tools = append(tools, t)
		}
	}
	if len(tools) == 0 {
		return
	}
	// Why wait: a tool that connected and exited at once leaves its flow
	// in the refusal listener's queue as the run ends; it is refused
	// while the servers stop (their drain), after this point, and its
	// name was missing here (a CI run's TestRegistryNamesMaven: the
	// refusal said, the profile not). The run's end waits for the
	// servers anyway (finish); only a run where a tool ran waits here.
	if r.serversDone != nil {
		<-r.serversDone
	}
	r.mu.Lock()
	refused := slices.Clone(r.refused)
	r.mu.Unlock()
	if len(refused) == 0 {
		return
	}
	for _, line := range registryNotes(refused, r.pol.RegistryHints(tools)) {
		r.notef("%s", line)
	}
}

// registryNotes are the lines for refused names that hints' registries
// allow: one a profile, its names in the order they were refused (three,
// then how many more), each name under the first hint that allows it.
func registryNotes(refused []netproxy.Event, hints []policy.ProfileHint) []string {
	type group struct {
		hint  policy.ProfileHint
		names []string
	}
	var groups []*group
	for _, ev := range refused {
		h, ok := allowingHint(ev, hints)
		if !ok {
			continue
		}
		i := slices.IndexFunc(groups, func(g *group) bool { return g.hint.Profile == h.Profile })
		if i < 0 {
			groups = append(groups, &group{hint: h})
			i = len(groups) - 1
		}
		groups[i].names = append(groups[i].names, ev.Target())
	}
	var out []string
	for _, g := range groups {
		names := g.names
		more := ""
		if len(names) > 3 {
			more = fmt.Sprintf(" and %d more", len(names)-3)
			names = names[:3]
		}
		what, them := "is a registry "+g.hint.Tool+" is configured with", "it"
		if len(g.names) > 1 {
			what, them = "are registries "+g.hint.Tool+" is configured with", "them"
		}
		line := fmt.Sprintf("%s%s, refused in this run, %s: add `profile` %s, which allows %s", strings.Join(names, ", "), more, what, g.hint.Profile, them)
		if g.hint.Caches {
			line += " and keeps caches of jail's own"
		}
		out = append(out, line)
	}
	return out
}

// allowingHint is the first of hints whose domains let ev's name and port
// through.
func allowingHint(ev netproxy.Event, hints []policy.ProfileHint) (policy.ProfileHint, bool) {
	for _, h := range hints {
		for _, d := range h.Domains {
			if r, err := netproxy.ParseDomainPattern(d); err == nil && r.Match(ev.Name, ev.Port) {
				return h, true
			}
		}
	}
	return policy.ProfileHint{}, false
}
