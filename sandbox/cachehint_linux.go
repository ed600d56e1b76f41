package sandbox

import (
	"github.com/jail-sandbox/jail/cachehint"
	"github.com/jail-sandbox/jail/ns"
)

// This file: the end of a run says, once for each workspace, that its Go
// builds went to a cache that ended with it (package cachehint).

// sayCacheHints says cachehint's note when the run compiled Go packages (or,
// its execs unseen, was a go build) into a build cache on one of the
// sandbox's own tmpfs: the next run in the same place compiles them all
// again, and nothing else tells the user why it is slow. Said once for
// each workspace (saidBefore's record, in jail's state directory, which no
// sandbox reaches); never under --dry-run, or where there are no mounts of
// the sandbox's own (degraded: go's cache is the host's). Nor under
// --quiet: the line would be silenced and yet taken as said, and a later
// run without --quiet would never say it.
func (r *runner) sayCacheHints() {
	if r.plan == nil || r.pol.DryRun || r.pol.Quiet || r.degraded {
		return
	}
	n := int(r.goCompiles.Load())
	if n == 0 && (r.execsSeen.Load() || !cachehint.GoBuilds(r.pol.Command)) {
		return
	}
	dir, ok := cachehint.GoBuildCache(r.plan.Env)
	if !ok || !cachehint.Fleeting(dir, places(r.plan.Mounts)) {
		return
	}
	if saidBefore(r.plan.StateDir, "go build cache\x00"+r.plan.Workspace, true, false) {
		return
	}
	r.notef("%s", cachehint.GoNote(dir, lookupEnv(r.plan.Env, "HOME"), n))
}

// places is the plan's mounts as cachehint sees them: an empty tmpfs is
// written and ends with the run; a bind is a host directory, written; a
// read-only bind or remount, or a mask, is not written. The other kinds
// (pins, files, links, records) leave the place they are in as it is.
func places(ms []ns.Mount) []cachehint.Place {
	var out []cachehint.Place
	for _, m := range ms {
		switch m.Kind {
		case ns.KindTmpfs:
			out = append(out, cachehint.Place{Path: m.Path, Writable: true})
		case ns.KindBind:
			out = append(out, cachehint.Place{Path: m.Path, Writable: true, Lasts: true})
		case ns.KindROBind, ns.KindReadOnly, ns.KindMask:
			out = append(out, cachehint.Place{Path: m.Path})
		}
	}
	return out
}
