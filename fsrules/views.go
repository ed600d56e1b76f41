package fsrules

import (
	"path"
	"strings"
)

// View is a place where a target (the HOME) can be reached through
// another mount: the whole target, or (Part) a part of it.
type View struct {
	Path string
	Part bool
}

// Views returns the other places in the mount tree mounts (ParseMountinfo of
// /proc/self/mountinfo, in its order) through which target, or a part of it,
// can be reached: a bind mount of the home directory at /var/lib/v shows
// $HOME/.ssh at /var/lib/v/.ssh, whatever the sandbox puts at $HOME. target
// must be absolute and free of symlinks.
//
// The file system holding target is the mount with the longest point that
// contains it (the last such line: a later mount on the same point covers
// the earlier), and target's path in that file system is its Root plus the
// rest. Every other mount of the same file system (Dev) is then a view
// when its Root is that path or an ancestor of it (target appears at its
// Point plus the rest), or lies inside it (part of target appears at its
// Point). Points inside a pseudo file system are not listed. The result is
// in mounts' order, without target itself and without duplicates.
//
// A view is found only through the mount table: a hard link or a second
// name that is no mount is not (the walk's hard-link protection is for
// files; a directory cannot be hard-linked).
func Views(mounts []Mount, target string) []View { return views(mounts, target, true) }

// TreeViews is Views without the file systems mounted inside target: the
// other places that show target's own tree (the directory of its file
// system at target's path), or a part of it. For a place whose inner
// mounts are often second mounts of the host's own file systems (WSLg's
// /mnt/wslg/distro is the distro's root; Timeshift mounts a btrfs top
// level in /run), whose other mounts (/var or /home as subvolumes) Views
// would all count as parts of target, though they show what is at their
// own paths anyway.
func TreeViews(mounts []Mount, target string) []View { return views(mounts, target, false) }

// views is Views, with the file systems mounted inside target when inner.
func views(mounts []Mount, target string, inner bool) []View {
	host := -1
	for i, m := range mounts {
		if under(target, m.Point) && (host < 0 || len(m.Point) >= len(mounts[host].Point)) {
			host = i
		}
	}
	if host < 0 {
		return nil
	}
	var out []View
	add := func(p string, part bool) {
		p = path.Clean(p)
		if p == target {
			return
		}
		for _, o := range out {
			if o.Path == p {
				return
			}
		}
		out = append(out, View{Path: p, Part: part})
	}
	hm := mounts[host]
	// target's path inside its file system.
	viewsOf(mounts, host, path.Join(hm.Root, strings.TrimPrefix(target, hm.Point)), target, add, false)
	if !inner {
		return out
	}
	// A file system mounted inside target (a second disk at $HOME/data) is
	// part of it too: its other mounts are views as well.
	for i, m := range mounts {
		if i != host && strings.HasPrefix(m.Point, strings.TrimSuffix(target, "/")+"/") && strings.HasPrefix(m.Root, "/") {
			viewsOf(mounts, i, m.Root, m.Point, add, true)
		}
	}
	return out
}

// viewsOf calls add with the place of every mount other than mounts[host]
// of its file system that shows inFS (a path in that file system, seen at
// at) or a part of it (all parts of target when part). A mount that shows
// inFS or a part of it at the very place it has below at (a directory
// bound onto itself, as /run/netns is) is no other place: left out.
func viewsOf(mounts []Mount, host int, inFS, at string, add func(string, bool), part bool) {
	dev := mounts[host].Dev
	for i, m := range mounts {
		if i == host || m.Dev != dev || !strings.HasPrefix(m.Root, "/") || pseudoFS(m.FSType) {
			continue
		}
		switch {
		case under(inFS, m.Root):
			// The mount shows an ancestor of inFS (or inFS itself):
			// inFS is at Point plus the rest.
			if p := path.Join(m.Point, strings.TrimPrefix(inFS, m.Root)); p != at {
				add(p, part)
			}
		case under(m.Root, inFS):
			// The mount shows a part of inFS at its Point.
			if m.Point != path.Join(at, strings.TrimPrefix(m.Root, inFS)) {
				add(m.Point, true)
			}
		}
	}
}
