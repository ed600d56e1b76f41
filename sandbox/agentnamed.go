package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/jail-sandbox/jail/agentcfg"
	"github.com/jail-sandbox/jail/fsrules"
)

// maxNamedSource bounds what agentNamed reads of one guarded file (Claude
// Code's ~/.claude.json can hold megabytes of per-project state; past this,
// nothing in it is looked for).
const maxNamedSource = 32 << 20

// agentNamed returns the read-only masks and the watched absent paths for
// the files that the host's agent configuration runs by path (hook scripts,
// status line scripts, MCP servers' scripts, helpers; agentcfg.Named) and
// that lie inside a writable tree. The guard keeps the keys that name them
// as on the host, but the scripts themselves sit in the same writable state
// directory (~/.claude/statusline.sh, ~/.claude/hooks/, a project's
// .claude/hooks/): written by the agent, they would run on the host at the
// agent's next start outside jail. Read-only by mount, they cannot be
// written, replaced or removed (their directories are pinned like those of
// every mask); absent, they are watched and leave the tree if they appear.
// fm are fsrules' masks: a path masked already keeps its mask (a hidden
// file stays hidden).
func agentNamed(ts []agentcfg.Target, home, ws string, writable []string, fm []fsrules.Mask) ([]fsrules.Mask, []fsrules.Absent) {
	if len(ts) == 0 {
		return nil, nil
	}
	have := make(map[string]bool, len(fm))
	for _, m := range fm {
		have[m.Path] = true
	}
	guarded := make(map[string]bool, len(ts))
	for _, t := range ts {
		guarded[t.Path] = true
	}
	var masks []fsrules.Mask
	var absent []fsrules.Absent
	for _, t := range ts {
		data, err := readAtMost(t.Path, maxNamedSource)
		if err != nil {
			continue // absent or unreadable: it names nothing the host runs
		}
		for _, n := range agentcfg.Named(t, data, agentcfg.Context{Workspace: ws}, home) {
			p := n.Path
			why := fmt.Sprintf("agent config: %s (%s) runs it", t.Path, n.Key)
			fi, err := os.Lstat(p)
			if errors.Is(err, fs.ErrNotExist) {
				// Written during the run, it would run on the host next
				// time: watched, it leaves the tree.
				if r := enclosing(p, writable); r != "" && r != p && !guarded[p] && !have[p] {
					have[p] = true
					absent = append(absent, fsrules.Absent{Path: p, Kind: fsrules.ReadOnly, Rule: why})
				}
				continue
			}
			if err != nil {
				continue
			}
			if fi.Mode()&os.ModeSymlink != 0 {
				// A mount lands on the link's target: protect that.
				if p, err = filepath.EvalSymlinks(p); err != nil {
					continue
				}
				if fi, err = os.Stat(p); err != nil {
					continue
				}
			}
			// A directory (a PATH entry, a working directory) is not made
			// read-only: the agent may need to write there.
			if !fi.Mode().IsRegular() {
				continue
			}
			// A -w FILE root is the user's explicit choice; a guarded file
			// is merged key by key, not frozen.
			if r := enclosing(p, writable); r == "" || r == p || guarded[p] || have[p] {
				continue
			}
			have[p] = true
			masks = append(masks, fsrules.Mask{Path: p, Kind: fsrules.ReadOnly, Rule: why})
		}
	}
	return masks, absent
}

// readAtMost reads p when it is a regular file of at most max bytes. A
// FIFO or a device in its place (left by an earlier run) is refused before
// it is opened, and the open cannot block or follow a link.
func readAtMost(p string, max int64) ([]byte, error) {
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", p)
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > max {
		return nil, fmt.Errorf("%s: not a regular file of at most %d bytes", p, max)
	}
	return io.ReadAll(io.LimitReader(f, max))
}
