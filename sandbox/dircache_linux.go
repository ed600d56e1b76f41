package sandbox

import (
	"path/filepath"

	"github.com/jail-sandbox/jail/dircache"
	"github.com/jail-sandbox/jail/notice"
	"github.com/jail-sandbox/jail/statedir"
)

// openDirCache opens the directory cache in jail's state directory (which
// the plan masks from the sandbox: the cache decides what the walks see,
// so nothing inside may write it). Off (every directory read) without a
// state directory, or when its directory is not the user's own.
func openDirCache() *dircache.Cache {
	dir := ""
	if sd, err := statedir.Dir(); err == nil {
		dir = filepath.Join(sd, statedir.DirCache)
	}
	c, _ := dircache.Open(dir) // off when err: every directory is read
	return c
}

// saveDirCache keeps what this run's walks read, for the next start; with
// JAIL_TRACE=1 it says how many directories the step (the plan's walk, the
// exit check) answered from the cache and how many it read.
func (r *runner) saveDirCache(step string) {
	if r.dirs == nil {
		return
	}
	if err := r.dirs.Save(); err != nil {
		r.debugf("directory cache not saved (%v): the next start reads every directory", err)
	}
	hits, reads := r.dirs.Stats()
	if r.trace {
		r.notes.Notef("trace", notice.Trace, "directory cache (%s): %d unchanged, %d read", step, hits-r.dirHits, reads-r.dirReads)
	}
	r.dirHits, r.dirReads = hits, reads
}
