package sandbox

import (
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/pastwrite"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/statedir"
)

// resolved is what the check and the plan both resolve of the policy's
// paths on the host, before anything else: HOME, the workspace (and the
// current directory, and the note about a git work tree's top), the
// workspace and the write and read paths as binds (resolveRoots), and
// jail's state and runtime directories. The check resolves them first and
// keeps them (checked.roots); the plan takes them only for the very same
// inputs (rootsInput), else resolves its own. Taken, they are what the
// plan would have resolved a millisecond earlier, before anything of the
// sandbox exists: every check the plan makes of them (checkHome, the
// state directory's, the walk's) still runs on them. A start resolved
// each twice (~60 system calls, 6% of the plan's CPU; issue 16).
type resolved struct {
	in rootsInput

	home            string // HOME, symlink-free ("": unset or unresolvable)
	ws, cwd, wsNote string // workspaceOf's answer
	binds           []ns.Mount
	raws            map[string]string // resolveRoots' answer (and resolveLifts')
	lifts           []string          // resolveLifts' answer
	// past is the trees earlier runs made writable (package pastwrite),
	// read from the state directory; nil when there is none.
	past *pastwrite.Set
	// existing maps a path given to resolveExisting (the state and
	// runtime directories) to its answer.
	existing map[string]string
}

// rootsInput is everything resolved reads but the file system: the
// policy's path values and the environment's HOME, and the process's own
// HOME, by which policy.AbsPath expands "~".
type rootsInput struct {
	home, procHome string
	cwd, workspace string
	fromCwd        bool // p.WorkspaceFromCwd: the links on the way to cwd are checked
	readOnly       bool
	write, read    []string
	lift           []string // p.NoDefaultDenyAt
}

func rootsInputOf(p *policy.Policy, env []string) rootsInput {
	return rootsInput{
		home: lookupEnv(env, "HOME"), procHome: os.Getenv("HOME"),
		cwd: p.Cwd, workspace: p.Workspace, fromCwd: p.WorkspaceFromCwd, readOnly: p.ReadOnly,
		write: slices.Clone(p.Write), read: slices.Clone(p.Read), lift: slices.Clone(p.NoDefaultDenyAt),
	}
}

func (a rootsInput) equal(b rootsInput) bool {
	return a.home == b.home && a.procHome == b.procHome && a.cwd == b.cwd && a.workspace == b.workspace && a.fromCwd == b.fromCwd &&
		a.readOnly == b.readOnly && slices.Equal(a.write, b.write) && slices.Equal(a.read, b.read) && slices.Equal(a.lift, b.lift)
}

// resolvePolicy resolves p's paths in env (see resolved).
func resolvePolicy(p *policy.Policy, env []string) (*resolved, error) {
	r := &resolved{in: rootsInputOf(p, env)}
	if h := r.in.home; h != "" {
		if e, err := filepath.EvalSymlinks(h); err == nil {
			r.home = e
		}
	}
	var err error
	getenv := func(k string) string { return lookupEnv(env, k) }
	sd, sdErr := statedir.From(getenv)
	if sdErr == nil {
		// Why: a record jail cannot read whole is refused, not skipped:
		// a tree it lost would let that tree's links pass for the
		// user's (pastwrite.Load says which file and what to do).
		// Before workspaceOf: a link on the way to the current
		// directory is such a link too (r.past.Holds).
		if r.past, err = pastwrite.Load(filepath.Join(sd, statedir.Written)); err != nil {
			return nil, err
		}
	}
	if r.ws, r.cwd, r.wsNote, err = workspaceOf(p, r.home); err != nil {
		return nil, err
	}
	if r.binds, r.raws, err = resolveRoots(p, r.ws, r.past); err != nil {
		return nil, err
	}
	if r.lifts, err = resolveLifts(p, r.ws, r.binds, r.raws, r.past); err != nil {
		return nil, err
	}
	if p.Workspace == "" || p.WorkspaceFromCwd {
		// A workspace the user named is the user's choice (resolveRoots
		// checks its links against the write paths); one chosen from the
		// current directory is checked for the links on the way to it,
		// also when jail's readers chose it (a trusted project holding
		// the current directory: review15b).
		if err := cwdLinks(p.Cwd, r.cwd, r.ws, r.home, r.binds, r.past); err != nil {
			return nil, err
		}
	}
	// Keyed by the raw path: an answer holds for that path whatever the
	// environment that named it.
	r.existing = map[string]string{}
	if sdErr == nil {
		r.existing[sd] = resolveExisting(sd)
	}
	if rd, ok := statedir.RuntimeFrom(getenv); ok {
		r.existing[rd] = resolveExisting(rd)
	}
	if cd, ok := statedir.ConfigFrom(getenv); ok {
		r.existing[cd] = resolveExisting(cd)
	}
	return r, nil
}

// resolvedFor returns the check's resolution when it was made from the
// inputs p and env give now (a copy: the plan extends and sorts the
// binds), else a new one.
func (c *checked) resolvedFor(p *policy.Policy, env []string) (*resolved, error) {
	if c != nil && c.roots != nil && c.roots.in.equal(rootsInputOf(p, env)) {
		r := *c.roots
		r.binds = slices.Clone(r.binds)
		r.raws = maps.Clone(r.raws)
		return &r, nil
	}
	return resolvePolicy(p, env)
}

// existingPath is resolveExisting(d), from r when it resolved d.
func (r *resolved) existingPath(d string) string {
	if e, ok := r.existing[d]; ok {
		return e
	}
	return resolveExisting(d)
}

// forgetRoots drops the check's resolution: the plan resolves the paths
// again (a repair of killed runs changed the trees since). Safe on nil.
func (c *checked) forgetRoots() {
	if c != nil {
		c.roots = nil
	}
}
