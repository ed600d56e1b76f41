package sandbox

import (
	"fmt"
	"os"
	"strings"

	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
)

// homeViews sorts the places where another mount shows the HOME (views,
// fsrules.Views) by how the plan hides them, given the binds bl (the
// workspace, the read/write paths, programs, caches): placeViews, after
// refusing a writable bind that is a view of the whole HOME, as a
// writable HOME is refused (checkHome).
func homeViews(views []fsrules.View, bl []ns.Mount, raws map[string]string, allowWritableHome bool) (early, late, notes []string, err error) {
	for _, v := range views {
		for _, b := range bl {
			// A bind that is a second mount of the whole HOME is the
			// HOME: writable only with allow-writable-home. (One that
			// holds it masks it, below.)
			if !v.Part && b.Path == v.Path && b.Kind == ns.KindBind && b.Source == "" {
				if err := checkHome(b.Why, raws[b.Path], b.Path, []string{v.Path}, allowWritableHome); err != nil {
					return nil, nil, nil, err
				}
			}
		}
	}
	return placeViews(views, bl, raws, "your home directory")
}

// placeViews sorts the views of a place the plan hides (what names it:
// the HOME, /var/tmp, a data place) by how the plan hides them, given the
// binds bl:
//
//   - a view that a bind is (the workspace is /workspace, a bind of
//     ~/proj on the host): shown, as asked; a note says so;
//   - a view inside no bind (early): hidden like the place, by an empty
//     tmpfs mounted before the binds, so that a bind named inside it
//     reappears;
//   - a view inside a bind (late: a workspace holding a bind of the
//     place): masked after the binds. A bind inside such a view would be
//     covered by the mask: refused, naming its flag.
func placeViews(views []fsrules.View, bl []ns.Mount, raws map[string]string, what string) (early, late, notes []string, err error) {
	for _, v := range views {
		var named, inside, holder *ns.Mount
		for i := range bl {
			b := &bl[i]
			switch {
			case b.Path == v.Path:
				named = b
			case strings.HasPrefix(b.Path, strings.TrimSuffix(v.Path, "/")+"/"):
				inside = b
			case strings.HasPrefix(v.Path, strings.TrimSuffix(b.Path, "/")+"/"):
				holder = b
			}
		}
		switch {
		case named != nil:
			notes = append(notes, fmt.Sprintf("%s %s is another mount of (part of) %s: shown as asked", named.Why, v.Path, what))
		case holder == nil:
			early = append(early, v.Path)
		case inside != nil:
			val := inside.Path
			if r := raws[inside.Path]; r != "" {
				val = r
			}
			return nil, nil, nil, &policy.FieldError{Key: inside.Why, Value: val, Reason: fmt.Sprintf(
				"it lies in %s, another mount of %s inside %s, which the sandbox hides; name the path in %s instead, or the mount itself", v.Path, what, holder.Path, what)}
		default:
			late = append(late, v.Path)
		}
	}
	return early, late, notes, nil
}

// mountPaths lists the paths of ms.
func mountPaths(ms []ns.Mount) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.Path)
	}
	return out
}

// jailDirViews adds to late a mask for each visible place where another
// mount shows jail's directory dir (its state or runtime directory, when
// it is outside the HOME: inside, the HOME's views hide it), and refuses
// a bind that is, or lies in, such a place, as a bind of dir itself is.
func jailDirViews(late []ns.Mount, hostMounts []fsrules.Mount, dir, what string, bl, mounts []ns.Mount) ([]ns.Mount, error) {
	for _, v := range fsrules.Views(hostMounts, dir) {
		if err := inJailDir(bl, v.Path, what+" seen through another mount", nil); err != nil {
			return nil, err
		}
		if !visibleIn(v.Path, mounts) {
			continue
		}
		if m, ok := viewMask(v.Path, "jail's "+what+", another mount"); ok {
			late = append(late, m)
		}
	}
	return late, nil
}

// viewMask is the mask of the view at p, masked after the binds: empty,
// read-only, of the kind p is. Nothing there, or a link (which shows
// nothing of the directory at p itself), needs none: false.
func viewMask(p, why string) (ns.Mount, bool) {
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&os.ModeSymlink != 0 {
		return ns.Mount{}, false
	}
	return ns.Mount{Kind: ns.KindMask, Path: p, Dir: fi.IsDir(), FD: -1, Why: why}, true
}
