package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/jail-sandbox/jail/agenthome"
	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/hostpath"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
)

// notKeptNote begins the note for a command line's directory that holds a
// writable tree (said at start).
const notKeptNote = "not kept read-only: "

// movedAgentHomes keeps the agents' state directories that the user's
// environment moves (CODEX_HOME, CLAUDE_CONFIG_DIR, GEMINI_CLI_HOME:
// package agenthome) read-only wherever the sandbox could write them: the
// host's agent runs what their config names (Codex's notify and MCP
// servers, Claude Code's and Gemini's hooks), and jail's finer guards of
// that state (config.toml key by key, the read-only names, the watch for
// new databases) are anchored at ~/.codex, ~/.claude and ~/.gemini only
// (confighome: a notify appended to $CODEX_HOME/config.toml in the
// workspace stayed). A state directory there at start is a read-only mask,
// one missing is watched (made in the run, it leaves for the quarantine).
//
// Refused rather than half kept: a writable root at or inside the state
// directory (a read-only mask over it would take the grant back
// silently), and a symbolic link in a writable tree on the way to it (the
// agent could point it elsewhere, and the host's agent would follow). A
// jail-owned cache (a bind with a Source) is no host directory: the host's
// agent never reads what is written there. A directory a command line
// names (CLAUDE_CODE_SHELL_PREFIX="env -C ~/proj sh") that holds a
// writable root is said instead of refused: what its program is given, not
// the agent's state.
func movedAgentHomes(env []string, home, cwd string, binds []ns.Mount, raws map[string]string) (masks []fsrules.Mask, absent []fsrules.Absent, notes []string, err error) {
	moved := agenthome.Moved(env, home, cwd)
	if len(moved) == 0 {
		return nil, nil, nil, nil
	}
	var roots []ns.Mount
	var paths []string
	for _, b := range binds {
		if b.Kind == ns.KindBind && b.Source == "" {
			roots = append(roots, b)
			paths = append(paths, b.Path)
		}
	}
	if len(roots) == 0 {
		return nil, nil, nil, nil
	}
moved:
	for _, d := range moved {
		set := d.Var + "=" + d.Value
		final, links, rerr := hostpath.ResolveAsNamed(d.Path)
		if rerr != nil {
			// A loop of links: no directory the host's agent could use
			// either, but not one jail can say is outside the trees.
			return nil, nil, nil, invalid(fmt.Errorf("%s: %w: set %s to a directory, or unset it for this run", set, rerr, d.Var))
		}
		for _, l := range links {
			if enclosing(l.Path, paths) != "" {
				return nil, nil, nil, invalid(fmt.Errorf("%s reaches %s's state through the symbolic link %s, which the sandbox can write (and point elsewhere for your next run): set %s to the directory itself, or unset it for this run",
					set, d.Agent, l.Path, d.Var))
			}
		}
		if enclosing(final, paths) == "" {
			continue // read-only or hidden in the sandbox already
		}
		if d.IfExists {
			// A bare word of a command line ("python3 wrap.py"): the
			// script in the working directory where there is one; any
			// other word ("-n", "5", "sh") names nothing to keep.
			if fi, err := os.Stat(final); err != nil || !fi.Mode().IsRegular() {
				continue
			}
		}
		for _, r := range roots {
			if r.Path == final || strings.HasPrefix(r.Path, final+"/") {
				if d.Word {
					// A directory a command line gives its program (its
					// working tree: "env -C ~/proj sh"), not a place of the
					// agent's state: said, and left as the policy grants it,
					// rather than refusing every start in that tree.
					tree := "is a tree"
					if r.Path != final {
						tree = "holds " + r.Path + ", a tree"
					}
					notes = append(notes, fmt.Sprintf("%s%s, a directory %s names, %s the sandbox may write (%s)", notKeptNote, final, d.Var, tree, d.What))
					continue moved
				}
				v := r.Path
				if raw := raws[r.Path]; raw != "" {
					v = raw
				}
				return nil, nil, nil, &policy.FieldError{Key: r.Why, Value: v, Reason: fmt.Sprintf(
					"it is, or lies in, %s's state (%s), which jail keeps read-only: %s; unset %s for this run (the agent's profile keeps its state in the usual place) or choose another path",
					d.Agent, set, d.What, d.Var)}
			}
		}
		rule := fmt.Sprintf("%s's state (%s): %s", d.Agent, set, d.What)
		fi, serr := os.Lstat(final)
		switch {
		case serr == nil:
			masks = append(masks, fsrules.Mask{Path: final, Kind: fsrules.ReadOnly, Dir: fi.IsDir(), Rule: rule})
			notes = append(notes, fmt.Sprintf("read-only: %s, %s's state (%s), lies in a tree the sandbox may write: %s", final, d.Agent, d.Var, d.What))
		case errors.Is(serr, os.ErrNotExist) || errors.Is(serr, syscall.ENOTDIR):
			// Whatever appears there (a directory, a file, a link to one
			// of the agent's) leaves for the quarantine: the host's agent
			// would take it for its state.
			absent = append(absent, fsrules.Absent{Path: final, Dir: !d.File, Kind: fsrules.ReadOnly, Rule: rule})
			notes = append(notes, fmt.Sprintf("watched: %s, %s's state (%s), missing in a tree the sandbox may write: made in the run, it leaves for the quarantine (%s)", final, d.Agent, d.Var, d.What))
		default:
			return nil, nil, nil, fmt.Errorf("look at %s's state %s (%s): %w", d.Agent, final, set, serr)
		}
	}
	return masks, absent, notes, nil
}
