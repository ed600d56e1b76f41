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
	"github.com/jail-sandbox/jail/gitguard"
	"github.com/jail-sandbox/jail/hostpath"
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
//
// A symlink on the way to a script (the script itself, ~/.claude/statusline.sh
// -> scripts/real.sh, or a directory, ~/.claude/hooks -> ../dotfiles/hooks)
// is not what a mount protects: the mount lands on the link's target, and
// the link, an entry of a writable directory, can be replaced by a file or
// a directory of the agent's. Each such link inside a writable tree is
// returned as a guarded target of its own (format Whole): the guard keeps
// it a symlink to the same place, as it keeps a guarded file that is a
// symlink at start. The mask goes on the resolved path (a mount on a path
// through a symlink would pin the link's name, which the sandbox may not
// resolve).
func agentNamed(ts []agentcfg.Target, home, ws string, writable []string, roots []agentcfg.Root, fm []fsrules.Mask) ([]fsrules.Mask, []fsrules.Absent, []agentcfg.Target) {
	if len(ts) == 0 {
		return nil, nil, nil
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
	var links []agentcfg.Target
	for _, t := range ts {
		data, err := readAtMost(t.Path, maxNamedSource)
		if err != nil {
			continue // absent or unreadable: it names nothing the host runs
		}
		for _, n := range agentcfg.Named(t, data, agentcfg.Context{Workspace: ws}, home) {
			why := fmt.Sprintf("agent config: %s (%s) runs it", t.Path, n.Key)
			p, via, err := resolveNamed(n.Path)
			for _, l := range via {
				if guarded[l] {
					continue
				}
				r := enclosing(l, rootPaths(roots))
				if r == "" || r == l {
					continue // not writable inside, or the user's own -w of the link
				}
				guarded[l] = true
				links = append(links, agentcfg.Target{
					File: agentcfg.File{Agent: t.File.Agent, Scope: agentcfg.Home, Path: l, Format: agentcfg.Whole,
						Why: "a symlink on the way to " + n.Path + ", which " + why[len("agent config: "):]},
					Path: l, Root: r,
				})
			}
			if err != nil {
				continue // a link loop, or too deep: nothing there runs
			}
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
	return masks, absent, links
}

// resolveNamed resolves the symlinks on the way to p (and p's own) as the
// kernel does (a ".." after a link is taken from the link's target); via
// are the symlinks met, in order. Where a component is missing, the rest
// is joined as named (p is absent: watched there). A loop or more than 40
// links is an error.
func resolveNamed(p string) (real string, via []string, err error) {
	if !filepath.IsAbs(p) {
		p = "/" + p
	}
	real, links, err := hostpath.ResolveAsNamed(p)
	for _, l := range links {
		via = append(via, l.Path)
	}
	return real, via, err
}

// gitLinks returns guarded targets (format Whole: kept a symlink to the
// same place) for the symlinks gitguard met on the way to what it
// protects (gitguard.Plan.Links: a global core.hooksPath of ws/hl ->
// hooks). The mount protects the target; the link, an entry of a writable
// directory, would otherwise be replaced by a directory of the agent's,
// whose hooks every repository of the host then runs. have are the
// targets guarded already.
func gitLinks(links []gitguard.Protect, roots []agentcfg.Root, have []agentcfg.Target) []agentcfg.Target {
	var out []agentcfg.Target
	seen := make(map[string]bool, len(have))
	for _, t := range have {
		seen[t.Path] = true
	}
	for _, l := range links {
		r := enclosing(l.Path, rootPaths(roots))
		if r == "" || r == l.Path || seen[l.Path] {
			continue // not writable inside, the user's own -w of the link, or guarded
		}
		seen[l.Path] = true
		out = append(out, agentcfg.Target{
			File: agentcfg.File{Agent: "git", Scope: agentcfg.Home, Path: l.Path, Format: agentcfg.Whole, Why: l.Why},
			Path: l.Path, Root: r,
		})
	}
	return out
}

// rootPaths are the paths of roots (for enclosing).
func rootPaths(roots []agentcfg.Root) []string {
	out := make([]string, len(roots))
	for i, r := range roots {
		out[i] = r.Path
	}
	return out
}

// readAtMost reads p when it is a regular file of at most max bytes, or a
// symlink to one (a settings file kept in a dotfiles repository: the
// agent's loader follows the link, so what it names counts). A FIFO or a
// device in its place (left by an earlier run) is refused before it is
// opened, the open cannot block (O_NONBLOCK), and what was opened is
// checked again (a swap between the stat and the open).
func readAtMost(p string, max int64) ([]byte, error) {
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", p)
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
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
