package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/maskwatch"
	"github.com/jail-sandbox/jail/notice"
	"github.com/jail-sandbox/jail/ns"
)

// This file: the host taking one of the sandbox's mounts away (package
// maskwatch). A mask, a read-only bind or a pin is a mount on a host
// dentry; when a host process deletes that path or renames something over
// it while the sandbox runs, the kernel detaches the mount in every
// namespace and the sandbox sees the new file. The agent cannot do it (a
// mountpoint in its namespace: EBUSY), and nothing can mount the mask
// again: init dropped every capability before the agent started, and the
// supervisor, a multithreaded Go process, cannot join the sandbox's mount
// namespace. Ending the run would not close the window either (the new
// file is readable from the rename on, before any kill): it is said at
// once, on stderr and in the trail, for the user to decide.

// watchedMasks is every mount of the plan the host can take away and the
// sandbox would miss: masks, read-only binds and pins in a writable tree
// (the workspace's secrets, git's files, what holds them), and the masks
// over host sockets wherever they are (a daemon binding again). Elsewhere
// the view is the host's read-only root, whose files the agent could not
// write anyway, or a tmpfs of the sandbox's own, which no host process
// reaches.
func watchedMasks(pl *Plan) []maskwatch.Path {
	var out []maskwatch.Path
	for _, m := range pl.Mounts {
		switch m.Kind {
		case ns.KindMask, ns.KindReadOnly, ns.KindPin:
		default:
			continue
		}
		if m.Source != "" || (enclosing(m.Path, pl.Writable) == "" && m.Why != whyHostSocket) {
			continue
		}
		if m.Why == whyHistory {
			// A pack the host deletes (a gc on the host) is gone for the
			// agent too: the fallen bind hands it nothing to read or
			// write, and saying it would warn of every host gc.
			continue
		}
		out = append(out, maskwatch.Path{Path: m.Path, Kind: m.Kind, Rule: m.Why, Hides: m.Kind == ns.KindMask})
	}
	return out
}

// identifyMasks takes the watched paths' identities before init has its
// spec (it mounts over them once it has): the watch is armed later, while
// init mounts, and a file the host put at a masked path in between (after
// init's mount took the mask off it) would otherwise be taken for the
// masked one, the fall unsaid. The watch compares with these once armed
// (maskwatch.Config.Before).
func (r *runner) identifyMasks() {
	if r.degraded {
		return
	}
	if paths := watchedMasks(r.plan); len(paths) > 0 {
		r.maskBefore = maskwatch.Identify(paths)
	}
}

// startMaskWatch watches the plan's masks from before the go until the
// run's end (stopMaskWatch). Degraded mode has no mounts. A watch that
// cannot start is said; with --end-if-unmasked it refuses the run.
func (r *runner) startMaskWatch() error {
	if r.degraded {
		return nil
	}
	paths := watchedMasks(r.plan)
	if len(paths) == 0 {
		return nil
	}
	w, err := startMasks(maskwatch.Config{Paths: paths, Before: r.maskBefore, Fell: r.unmasked})
	if err != nil {
		if r.pol.EndIfUnmasked {
			// Fail closed, as asked: without the watch no fall could end
			// the run. The inotify instances are the user's, shared with
			// the user's other programs and other runs (each sandbox may
			// hold a share of them: package ucount), so they can run out.
			return fmt.Errorf("--end-if-unmasked: the sandbox's masks cannot be watched (%w): not starting; close some inotify users (fs.inotify.max_user_instances, max_user_watches) or run without --end-if-unmasked", err)
		}
		r.notef("the sandbox's masks are not watched (%v): a file the host replaces at a masked path during the run is visible inside, unannounced", err)
		return nil
	}
	if un := w.Unwatched(); len(un) > 0 {
		names := make([]string, 0, len(un))
		for _, u := range un {
			names = append(names, u.Path.Path)
		}
		list := strings.Join(names, ", ")
		if len(names) > 5 {
			list = strings.Join(names[:5], ", ") + fmt.Sprintf(" and %d more", len(names)-5)
		}
		if r.pol.EndIfUnmasked {
			// Fail closed, as asked: a fall at these paths could not end
			// the run.
			w.CloseLater()()
			return fmt.Errorf("--end-if-unmasked: %s cannot be watched (%v): not starting; run without --end-if-unmasked, or make the directory readable to you", list, un[0].Err)
		}
		r.notef("%s not watched (%v): a file the host replaces there during the run is visible inside, unannounced; the other masks are watched", list, un[0].Err)
	}
	r.masks = w
	return nil
}

// startMasks is maskwatch.Start (a test makes it fail).
var startMasks = maskwatch.Start

// unmasked says one fallen mount: a trail event and a notice at once;
// with --end-if-unmasked the run ends first (the kill's own event follows
// the unmasked one).
func (r *runner) unmasked(f maskwatch.Fall) {
	head := fmt.Sprintf("%s was %s on the host during the run: the kernel took the sandbox's", f.Path.Path, f.How)
	end := r.pol.EndIfUnmasked
	var what string
	sock := f.Kind == ns.KindMask && f.Rule == whyHostSocket
	switch {
	case sock:
		// A socket holds no secret to read: what fell is the wall
		// between the sandbox and the process listening there now.
		what = "mask off it (%s), so the sandbox can connect to the socket there now"
	case f.Kind == ns.KindMask:
		what = "mask off it (%s), so the sandbox can read the new file"
	case f.Kind == ns.KindReadOnly:
		what = "read-only bind off it (%s), so the sandbox can write the new file"
	default:
		what = "pin off it (%s), so the protected paths below it are not held there"
	}
	what = fmt.Sprintf(what, f.Rule)
	// Why: any local user can bind a socket of theirs again where it was
	// masked (that is how their daemons restart), so a fall of another
	// user's socket ending the run let every local user end the user's
	// run at will. What the sandbox reaches there is that user's own
	// process (the new file is the binder's: no other user can make one
	// of root's or the user's), as with their sockets past the caps:
	// said, not acted on. Root's, the user's and (started by root) the
	// agent's own uid's still end the run.
	// Why only where the masked socket was another user's at the start
	// (review15d): maskwatch says each path once, so the file there when
	// it is said is not the last word -- the path found empty (a daemon
	// that binds, fails and unlinks; a file another user with write access
	// to the directory put there and took away) or holding another user's
	// file, root's or the user's daemon binds there next, unsaid, and the
	// sandbox connected to it with the run going on. Root's and the user's
	// sockets can only be taken away by them or by a writer of their
	// directory, so ending there is no lever for other users.
	foreign := ""
	if end && sock && r.plan != nil && r.plan.otherSockets[f.Path.Path] {
		if owner, ok := foreignSocket(f.Path.Path); ok {
			end, foreign = false, owner
		}
	}
	ev := audit.Unmasked{Path: f.Path.Path, Kind: f.Kind, Rule: f.Rule, How: f.How, Action: "reported"}
	var text string
	switch {
	case foreign != "":
		text = fmt.Sprintf("%s %s; not ending the run: the file there now is %s, not root's or yours, and --end-if-unmasked acts on root's and your sockets only (any local user can bind theirs again)", head, what, foreign)
	case end:
		ev.Action = "ended"
		text = fmt.Sprintf("%s %s: ending the run (--end-if-unmasked)", head, what)
	case sock:
		text = fmt.Sprintf("%s %s until the run ends; end it (jail kill, Ctrl-C) if the service listening there must not be reached from the sandbox, or run with --end-if-unmasked", head, what)
	case f.Kind == ns.KindMask:
		text = fmt.Sprintf("%s %s until the run ends; end it (jail kill, Ctrl-C) if that file holds a secret, or run with --end-if-unmasked", head, what)
	case f.Kind == ns.KindReadOnly:
		text = fmt.Sprintf("%s %s until the run ends (the exit check still puts back git's and agents' protected files)", head, what)
	default:
		text = fmt.Sprintf("%s %s until the run ends", head, what)
	}
	r.recordAfterStart(ev)
	if end {
		// The run's first error is this notice: a starter waiting for the
		// sandbox to be ready (the Go API's Start) hears why it ended in
		// the ready line itself, not only in a log that may not have the
		// line yet (its copier runs behind) or is removed at the end.
		why := Spell(text)
		r.firstError.CompareAndSwap(nil, &why)
		// Fail closed, as asked: the new file was readable (or writable)
		// from the host's rename until this kill lands. Before the notice:
		// saying it may wait for the user's terminal (a stalled one holds
		// the screen's lock), the kill must not.
		r.kill("unmasked", "the host replaced "+f.Path.Path+" ("+f.Kind+", "+f.How+"): --end-if-unmasked")
	}
	// Urgent: a protection fell while the agent runs; the user must hear
	// it now, with --quiet and on a relayed agent's screen too (not only
	// in the summary after the agent's exit), to end the run in time.
	n := notice.Notice{Kind: "jail", Severity: notice.Warning, Text: Spell(text), Urgent: true}
	if f.Rule == whyHostSocket {
		// Why: host sockets are masked wherever any local user binds
		// them, and that user may bind hundreds and bind them again (a
		// daemon's restart, or on purpose): one urgent line, with a bell,
		// each, even with --quiet, would flood the user's screen. The
		// falls of one owner's sockets (the new file's: another user
		// cannot make root's or the user's) are one notice, counted in
		// the summary; the trail has each.
		n.Group = "unmasked socket of " + socketOwner(f.Path.Path)
	}
	r.say(n)
}

// foreignSocket reports whether the file at a fallen host socket mask's
// path is another user's now (not alwaysMasked), and names its owner;
// asked only where another user's socket was masked (runner.unmasked).
// Unreadable: not foreign (fail closed: the run ends). Gone: foreign (the
// path leads nowhere; at that path the socket was another user's).
// Followed, not lstat'd: connect(2) follows a link
// another user puts there to whatever it names (a hard link to root's
// socket is root's inode either way).
func foreignSocket(p string) (owner string, foreign bool) {
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "no one's (gone again)", true
	}
	if err != nil {
		return "", false
	}
	uid := socketUID(fi)
	// The user's subordinate uids' are the user's own (owners.of): no
	// other user can make one, so ending there is no lever for them.
	own := owners{self: uint32(hostUID())}
	return fmt.Sprintf("uid %d's", uid), !own.of(uid)
}

// socketOwner names the owner of the file at p now ("uid N"), or "?".
func socketOwner(p string) string {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return "?"
	}
	return fmt.Sprintf("uid %d", st.Uid)
}

// stopMaskWatch ends the watch; its descriptor is closed last, off the
// run's end (closeWatches).
func (r *runner) stopMaskWatch() {
	if r.masks == nil {
		return
	}
	r.closeLater(r.masks.CloseLater())
	r.masks = nil
}
