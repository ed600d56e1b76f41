package sandbox

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/jail-sandbox/jail/agentcfg"
	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/gitguard"
	"github.com/jail-sandbox/jail/hostpath"
	"github.com/jail-sandbox/jail/policy"
)

// maxPolicyLinks bounds the other names (hard links) of policy files made
// read-only a start: each is a mount. Past it the start refuses.
const maxPolicyLinks = 16

// policyFileRules protects the files this run's policy was read from
// (p.PolicyFiles: the user's config, --config, settings files; and
// p.SeccompFile) that lie inside a writable tree. The next run reads them
// again: a settings file in the workspace that the agent rewrote
// (allowWrite ["~/Documents"], allowedDomains) widened that run, nothing
// said (review17b). In a mounted run each is read-only (a mask of kind
// ReadOnly: it cannot be written, replaced or removed, its directories are
// pinned like every mask's), and so is every other name it has in the
// writable trees (a hard link: a bind covers one name, not the file).
// Degraded mode has no mounts: each is guarded whole instead (the guard
// puts it back when it changes, as it does an agent's configuration).
//
// A symlink on the way to one (a dotfiles manager's link) is guarded as
// agentNamed's are: kept a link to the same place. Not protected: a file
// the user made writable by name (-w FILE: said), a file already guarded
// key by key with every key jail reads kept (a Claude Code settings.json:
// sandbox and permissions), one hidden inside anyway, and a trusted project
// file (not in PolicyFiles: its trust covers its bytes, and a change
// refuses the next run).
//
// earlier are the files earlier runs were given by flags (the record in
// jail's state directory), kept as this run's own. roots are the writable binds of host paths; guarded the targets the
// agent configuration guard has already; fm the masks so far; mounts the
// host's mount table (the file's other views).
//
// exposed are the earlier runs' files left writable through other names
// past the bound (marked in the record: policyExposed).
//
// ways are the directories the way to a policy file passes and leaves (ws/srt.json
// -> b/../real/srt.json): the caller pins them, as guardedWays' pins.
func policyFileRules(p *policy.Policy, earlier []policy.PolicyFile, roots []agentcfg.Root, guarded []agentcfg.Target, fm []fsrules.Mask, hidden []string, mounts []fsrules.Mount, degraded bool) (masks []fsrules.Mask, targets []agentcfg.Target, notes, exposed []string, ways []wayPin, err error) {
	// Why one resolver for every file: the record's files (up to 256)
	// share their directories; each walked afresh (twice with a link on
	// its way: leftDirs) cost 10,000 system calls and 16 ms of CPU a
	// start (namedcost). The answers are Walk's as each name was first
	// looked up in this pass (TestPolicyNamedResolverSame compares them):
	// one view for the whole plan; the check after registration
	// (policyNamedSince) looks afresh.
	r := hostpath.NewResolver()
	defer r.Close()
	return policyFileRulesBy(r, p, earlier, roots, guarded, fm, hidden, mounts, degraded)
}

// policyFileRulesBy is policyFileRules with r's lookups (nil: afresh).
func policyFileRulesBy(r *hostpath.Resolver, p *policy.Policy, earlier []policy.PolicyFile, roots []agentcfg.Root, guarded []agentcfg.Target, fm []fsrules.Mask, hidden []string, mounts []fsrules.Mount, degraded bool) (masks []fsrules.Mask, targets []agentcfg.Target, notes, exposed []string, ways []wayPin, err error) {
	// Why earlier's too: a file an earlier run was given by a flag is read
	// again by that run's next start; this run, not given the flag, must
	// not rewrite it either (policynamed.go).
	files := append(allPolicyFiles(p), earlier...)
	if len(files) == 0 || len(roots) == 0 {
		return nil, nil, nil, nil, nil, nil
	}
	fromEarlier := make(map[string]bool, len(earlier))
	for _, f := range earlier {
		fromEarlier[f.Path] = true
	}
	// origin: a protected name -> the earlier run's file it is, when no
	// file of this run's own policy is that name.
	origin, ownName := map[string]string{}, map[string]bool{}
	rootP := rootPaths(roots)
	have := make(map[string]bool, len(fm)+len(guarded))
	for _, m := range fm {
		have[m.Path] = true
	}
	for _, t := range guarded {
		// Why: a guarded file whose guard keeps every key jail reads from
		// it (a Claude Code settings.json: "sandbox", and "permissions"
		// for WebFetch domains; the sandbox block's presence decides its
		// format) stays the agent's to write otherwise. Another guarded
		// file named as a policy file is made read-only like any.
		if keepsKeys(t, "sandbox", "permissions") {
			have[t.Path] = true
		}
	}
	var links []gitguard.Protect
	var said []string
	shared := map[[2]uint64]string{} // files with other names: (dev, ino) -> path
	whyOf := map[string]string{}
	protect := func(path, root, why string) {
		have[path] = true
		if degraded {
			// Why: no mount can make it read-only here; the guard puts the
			// file back as it was at the start when it changes.
			targets = append(targets, agentcfg.Target{
				File: agentcfg.File{Agent: "jail", Scope: agentcfg.Home, Path: path, Format: agentcfg.Whole, Why: why},
				Path: path, Root: root,
			})
			return
		}
		// Why: read-only by mount, the agent can neither write nor
		// replace nor remove the file the next run reads its policy from.
		masks = append(masks, fsrules.Mask{Path: path, Kind: fsrules.ReadOnly, Rule: why})
	}
	for _, f := range files {
		why := "policy file (" + f.From + "): the next run reads it again"
		real, via, err := resolveNamedBy(r, f.Path)
		for _, l := range via {
			if enclosing(l, hidden) != "" {
				continue // in jail's config directory, hidden inside
			}
			links = append(links, gitguard.Protect{Path: l, Why: "a symlink on the way to " + f.Path + ", a policy file (" + f.From + ") the next run reads again"})
		}
		if err != nil {
			continue // gone: nothing to keep
		}
		if len(via) > 0 {
			// Why: the file and the links on its way are kept, not a
			// directory the way passes and leaves by a ".." (b in
			// srt.json -> b/../real/srt.json): the agent swapped b for a
			// link into a tree of its own and the next start given the
			// flag read the agent's settings through the unchanged link
			// (review19c; review18d's hole for agent settings).
			for _, d := range leftDirs(r, f.Path, real, via, roots) {
				if enclosing(d, hidden) == "" {
					ways = append(ways, wayPin{Dir: d, Of: f.Path})
				}
			}
		}
		// Why: a mount of the same file system elsewhere (a bind of the
		// project's directory) shows the file under another name, which
		// may lie in a writable tree when the name read does not: each
		// such view is protected as the file is (fsrules.TreeViews: the
		// host's mount table as the plan read it).
		names := []string{real}
		for _, v := range fsrules.TreeViews(mounts, real) {
			if !v.Part {
				names = append(names, v.Path)
			}
		}
		for i, name := range names {
			if have[name] || enclosing(name, hidden) != "" {
				continue // masked or guarded already, or hidden inside
			}
			root := enclosing(name, rootP)
			if root == "" {
				continue // not writable inside
			}
			if root == name {
				notes = append(notes, fmt.Sprintf("policy file %s (%s) is writable inside: you made it writable by name, so the agent can change the next run's policy", name, f.From))
				continue
			}
			var st syscall.Stat_t
			if syscall.Lstat(name, &st) != nil {
				continue
			}
			why := why
			if i > 0 {
				why = "another view (a mount) of " + real + ", a " + why
			}
			if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
				// The profiles directory, a link out of jail's config
				// directory: what is added there is a profile too.
				if degraded {
					notes = append(notes, fmt.Sprintf("policy file %s (%s) is writable inside: degraded mode cannot make a directory read-only, so the agent can add or change what the next run reads there", name, f.From))
					continue
				}
				have[name] = true
				masks = append(masks, fsrules.Mask{Path: name, Kind: fsrules.ReadOnly, Dir: true, Rule: why})
				said = append(said, name+"/ ("+f.From+")")
				continue
			}
			if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
				continue // read as a pipe, or replaced since: nothing to keep
			}
			protect(name, root, why)
			whyOf[name] = why
			if fromEarlier[f.Path] && !ownName[name] {
				origin[name] = f.Path
			} else {
				ownName[name] = true
				delete(origin, name)
			}
			said = append(said, name+" ("+f.From+")")
			if st.Nlink > 1 {
				shared[[2]uint64{uint64(st.Dev), uint64(st.Ino)}] = name //nolint:unconvert // Dev is int32 on darwin
			}
		}
	}
	if len(shared) > 0 {
		var other []string
		byName := fsrules.OtherNames(rootP, shared, mounts)
		for n := range byName {
			if !have[n] && enclosing(n, hidden) == "" { // hidden inside: nothing to write through
				other = append(other, n)
			}
		}
		sort.Strings(other)
		if len(other) > maxPolicyLinks {
			// Why refused, not said: a name left writable rewrites the
			// file the next run reads (an earlier run's agent can make the
			// links: the file is its own); each protected name is a mount,
			// so the count is bounded, and past it the run fails closed.
			// Only for this run's own policy files: a file only an
			// earlier run named (another workspace's --settings) refused
			// every run of a tree holding its links, whoever made them.
			// Such a file is marked in the record instead (exposed), and
			// the start given its flag refuses until the user checks it.
			var own string
			early := map[string]bool{}
			for _, n := range other {
				if o, ok := origin[byName[n]]; ok {
					early[o] = true
				} else if own == "" {
					own = n
				}
			}
			if own != "" {
				f := byName[own]
				return nil, nil, nil, nil, nil, fmt.Errorf("policy file %s has %d other names (hard links) in the trees the sandbox can write, more than a start makes read-only (%d), so the agent could rewrite it through one: remove them (find %s -samefile %s) and start again",
					f, len(other), maxPolicyLinks, enclosing(other[0], rootP), f)
			}
			for o := range early {
				exposed = append(exposed, o)
			}
			sort.Strings(exposed)
			notes = append(notes, fmt.Sprintf("policy files named by a flag in an earlier run, not this one: %s: %d other names (hard links) in the trees the sandbox can write, more than a start makes read-only (%d): the rest stay writable, so the start given that flag refuses until you check the file; remove them (find %s -samefile %s)",
				strings.Join(exposed, ", "), len(other), maxPolicyLinks, enclosing(other[0], rootP), byName[other[0]]))
			other = other[:maxPolicyLinks]
		}
		for _, n := range other {
			protect(n, enclosing(n, rootP), "another name (hard link) of "+byName[n]+", a "+whyOf[byName[n]])
		}
	}
	all := append(append([]agentcfg.Target{}, guarded...), targets...)
	targets = append(targets, linkTargets("jail", links, roots, all)...)
	if len(said) > 0 {
		how := "read-only inside"
		if degraded {
			how = "put back if changed (degraded: no mounts)"
		}
		notes = append(notes, fmt.Sprintf("policy files: %s for this run, as the next run reads its policy from them too: %s", how, saidPolicyFiles(said)))
	}
	return masks, targets, notes, exposed, ways, nil
}

// maxSaidPolicyFiles bounds the files the "policy files:" line names.
const maxSaidPolicyFiles = 3

// saidPolicyFiles is the list of the "policy files:" line: every file up
// to maxSaidPolicyFiles, else their number and the first few. Why: with
// the record of earlier runs' files (up to maxPolicyNamed) the line named
// every one, hundreds of paths at each start (session 19); --dry-run
// lists each as a read-only mask (or, degraded, a guard).
func saidPolicyFiles(said []string) string {
	if len(said) <= maxSaidPolicyFiles {
		return strings.Join(said, ", ")
	}
	return fmt.Sprintf("%d files: %s (jail --dry-run lists each)", len(said), shortList(said, maxSaidPolicyFiles))
}

// keepsKeys says whether the guard keeps each of keys of target t (top-level
// key paths) as on the host.
func keepsKeys(t agentcfg.Target, keys ...string) bool {
	if t.File.Format == agentcfg.Whole {
		return true
	}
	for _, k := range keys {
		if !slices.ContainsFunc(t.File.Keys, func(g agentcfg.Key) bool { return g.Path == k && len(g.Except) == 0 }) {
			return false
		}
	}
	return true
}
