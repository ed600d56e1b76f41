package hostpath

// Resolver resolves many paths in one pass (a start's policy files: up to
// 256 paths an earlier run named, most under the same few directories):
// each directory on their ways is looked up and opened once, not once a
// path (a full record cost 9,000 system calls, 12-16 ms of CPU, every
// start; namedcost, session 20). A Resolver answers as Walk and
// ResolveAsNamed would at the moment it first looked each name up: what a
// pass saw of a name it sees again, so two walks of one pass agree. It is
// for one pass (a plan), not to keep: a later pass must see what changed.
// A nil *Resolver looks every name up afresh (Walk). Not safe for
// concurrent use.
type Resolver struct{ c *dirCache }

// NewResolver returns a Resolver; Close releases what it holds.
func NewResolver() *Resolver { return &Resolver{c: newDirCache()} }

// Close releases the directories the Resolver holds open.
func (r *Resolver) Close() {
	if r != nil {
		r.c.close()
	}
}

// Walk is Walk, its lookups shared with the Resolver's other walks.
func (r *Resolver) Walk(p string, visit func(Step) error) (string, error) {
	if r == nil {
		return Walk(p, visit)
	}
	return walk(p, r.c.lookup, visit)
}

// Resolve is Resolve, its lookups shared with the Resolver's other walks.
func (r *Resolver) Resolve(p string) (string, []Link, error) {
	if r == nil {
		return Resolve(p)
	}
	return resolveBy(p, false, r.c.lookup)
}

// ResolveAsNamed is ResolveAsNamed, its lookups shared with the
// Resolver's other walks.
func (r *Resolver) ResolveAsNamed(p string) (string, []Link, error) {
	if r == nil {
		return ResolveAsNamed(p)
	}
	return resolveBy(p, true, r.c.lookup)
}
