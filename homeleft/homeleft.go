// Package homeleft says what a run wrote into the sandbox's own home, the
// empty tmpfs that hides the user's home and ends with the run.
//
// Everything written there is gone at the end, which is the point: the
// agent cannot leave anything in the user's home. But what goes with it
// can be what the user meant to keep. An agent CLI jail has no profile
// for (Amp, a new one; Qwen Code before session 56 gave it one) signs in
// and saves its settings and its sessions in ~/.config/amp or ~/.qwen;
// the next run finds none of
// it, asks for the sign-in again, and nothing said why (session 56). A
// `gh auth login`, a `git config --global` made inside went the same way.
//
// List names, after the run, the entries of that home that the run made:
// the home's own entries and those one level into the directories that
// only hold others' (.config, .local, .local/share, .local/state). It
// leaves out what jail put there (the mount points of the workspace, of
// the --write paths and a profile's state, and the directories on their
// way) and what ends as a matter of course: caches and downloads that
// come back by themselves (.cache, .npm, ~/go, .cargo...) and the history
// files of shells and REPLs. Note says it in one line with the flag that
// keeps a directory.
//
// The home is read through a directory descriptor opened when the sandbox
// started (Open, on Linux), so that it can still be read once every
// process of the sandbox is gone; nothing is followed through a symlink,
// and what one directory yields is bounded.
package homeleft

import (
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Dir is a directory List reads.
type Dir interface {
	// Entries returns up to max of its entries, in no order.
	Entries(max int) ([]fs.DirEntry, error)
	// Sub opens the directory name inside it: a directory, never
	// through a symlink; false when it is none.
	Sub(name string) (Dir, bool)
	Close() error
}

// maxEntries bounds the names read from one directory.
const maxEntries = 256

// containers are the directories whose entries List names in their
// place (XDG's directories, where each program keeps its own).
func container(rel string) bool {
	switch rel {
	case ".config", ".local", ".local/share", ".local/state",
		".config/go": // the go command's: its telemetry, and go env -w's env
		return true
	}
	return false
}

// quiet: an entry that ends with the run as a matter of course.
func quiet(rel string) bool {
	switch rel {
	// Caches and downloads, which the tools fetch or build again (the
	// refusals of their registries and cachehint say what concerns
	// them).
	case ".cache", ".npm", ".node-gyp", ".yarn", ".pnpm-store", ".bun", ".deno",
		"go", ".cargo", ".rustup", ".m2", ".gradle", ".nuget", ".pub-cache", ".cpan", ".cpanm",
		".local/share/pnpm", ".local/share/virtualenv", ".local/state/pnpm",
		// The go command's counters, written by every go run.
		".config/go/telemetry",
		// A jail run inside: its trails and records, of a sandbox
		// inside this one.
		".local/state/jail",
		// update-notifier's last check, which npm-installed CLIs (Qwen
		// Code) keep there.
		".config/configstore",
		// Desktop entries: Claude Code registers its URL handler there
		// at every start (2.1.332); on the host they are yours to add.
		".local/share/applications",
		// Files a program leaves in any home it finds (bash's
		// history's kin below; less's, vim's and wget's state).
		".lesshst", ".viminfo", ".wget-hsts", ".sudo_as_admin_successful", ".local/state/vim":
		return true
	}
	base := path.Base(rel)
	return strings.HasSuffix(base, "history") || strings.HasSuffix(base, "_history.txt")
}

// Entry is one entry List names.
type Entry struct {
	Rel string // relative to the home
	Dir bool
}

// List returns the entries of home (sorted) that the run made and that
// matter: not a mount point named in mounts (paths relative to home) nor a
// directory on the way to one, not quiet. A container's entries are
// listed in its place; a container that holds nothing listed is not.
func List(home Dir, mounts []string) []Entry {
	var out []Entry
	var walk func(d Dir, rel string)
	walk = func(d Dir, rel string) {
		ents, _ := d.Entries(maxEntries)
		for _, e := range ents {
			n := e.Name()
			r := n
			if rel != "" {
				r = rel + "/" + n
			}
			if quiet(r) || slices.Contains(mounts, r) {
				continue
			}
			if container(r) {
				if sub, ok := d.Sub(n); ok {
					walk(sub, r)
					sub.Close()
				}
				continue
			}
			if onTheWay(r, mounts) {
				continue // jail made it, for the mount inside
			}
			out = append(out, Entry{r, e.IsDir()})
		}
	}
	walk(home, "")
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Rel, b.Rel) })
	return out
}

// onTheWay: rel is a directory above one of mounts.
func onTheWay(rel string, mounts []string) bool {
	for _, m := range mounts {
		if strings.HasPrefix(m, rel+"/") {
			return true
		}
	}
	return false
}

// maxSaid bounds the names Note spells out.
const maxSaid = 6

// Note is the line for ents (List's): what went, and how to keep one.
// profile names the profile a run of the same command would apply ("" for
// none known), which keeps that agent's own state. keepable reports
// whether --write could give an entry (jail refuses it where a built-in
// protection keeps the path read-only: ~/.gitconfig, ~/.bashrc); nil:
// every one.
func Note(ents []Entry, profile string, keepable func(Entry) bool) string {
	if len(ents) == 0 {
		return ""
	}
	shown, more := ents, ""
	if len(shown) > maxSaid {
		shown, more = shown[:maxSaid], " and "+strconv.Itoa(len(ents)-maxSaid)+" more"
	}
	var b strings.Builder
	b.WriteString("the sandbox's home ended with the run, and what the run wrote there with it: ")
	for i, e := range shown {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("~/" + clip(e.Rel))
		if e.Dir {
			b.WriteString("/")
		}
	}
	b.WriteString(more)
	b.WriteString(" (a sign-in or settings saved there are gone)")
	// The example: a directory where there is one (an agent's state),
	// and one that --write may give.
	var ex *Entry
	for _, dir := range []bool{true, false} {
		for i, e := range shown {
			if ex == nil && e.Dir == dir && (keepable == nil || keepable(e)) {
				ex = &shown[i]
			}
		}
	}
	switch {
	case profile != "" && ex != nil:
		b.WriteString("; to keep one, run with --profile " + profile + " (it keeps " + profile + "'s own state), or ")
	case profile != "":
		b.WriteString("; --profile " + profile + " keeps " + profile + "'s own state")
	case ex != nil:
		b.WriteString("; to keep one, ")
	default:
		b.WriteString("; jail keeps these read-only in your home: make such a change outside jail")
	}
	if ex != nil {
		make := "touch"
		if ex.Dir {
			make = "mkdir -p"
		}
		b.WriteString("make it in your home and give it: " + make + " ~/" + clip(ex.Rel) + ", then --write ~/" + clip(ex.Rel))
		// What a written directory holds, the host's own next run of
		// that program reads: an agent's settings can name commands.
		b.WriteString(" (what the agent writes there, your runs outside jail read too)")
	}
	return b.String()
}

// clip shortens a name the agent chose.
func clip(s string) string {
	const max = 60
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "..."
}
