package sandbox

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/jail-sandbox/jail/hostpath"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/pastwrite"
	"github.com/jail-sandbox/jail/policy"
)

// This file: where --no-default-deny-at lifts the built-in protections
// (package fsrules, Input.Lifted). The walk matches the lifts against
// the paths it meets, which are symlink-free; a lift is resolved here to
// the path it names now.

const liftKey = "no-default-deny-at"

// resolveLifts resolves each --no-default-deny-at path (relative ones to
// the workspace, as write and read paths) and adds it to raws. A lift
// must exist and lie in the workspace or a write or read path (binds),
// where the walk applies the built-ins: one elsewhere would lift nothing,
// and the user would not see that.
func resolveLifts(p *policy.Policy, ws string, binds []ns.Mount, raws map[string]string, past *pastwrite.Set) ([]string, error) {
	if len(p.NoDefaultDenyAt) == 0 {
		return nil, nil
	}
	var roots []string
	trees := []string{ws}
	for _, b := range binds {
		roots = append(roots, b.Path)
		if b.Kind == ns.KindBind {
			trees = append(trees, b.Path)
		}
	}
	var out []string
	for _, raw := range p.NoDefaultDenyAt {
		abs, err := policy.AbsPath(liftKey, ws, raw)
		if err != nil {
			return nil, err
		}
		final, links, err := hostpath.Resolve(abs)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &policy.FieldError{Key: liftKey, Value: raw, Reason: fmt.Sprintf("%s: no such file or directory: name one that exists", abs)}
		}
		if err != nil {
			return nil, &policy.FieldError{Key: liftKey, Value: raw, Reason: err.Error()}
		}
		if l, what, ok := retargetable(links, trees, ws, past); ok {
			// Why: the walk lifts what the path leads to; a link a
			// command in the sandbox could have pointed elsewhere
			// (testdata -> ~/.ssh, in a run that shows both) must not
			// choose what this run stops protecting.
			return nil, linkRefused(liftKey, raw, l, what, final)
		}
		if enclosing(final, roots) == "" {
			return nil, &policy.FieldError{Key: liftKey, Value: raw, Reason: fmt.Sprintf(
				"%s is not in the workspace or a write or read path, the only places the built-in protections apply: there is nothing to lift (add `read` %s if it is hidden inside)", final, final)}
		}
		if _, ok := raws[final]; !ok {
			raws[final] = raw
		}
		out = append(out, final)
	}
	return out, nil
}
