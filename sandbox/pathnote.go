package sandbox

// This file: the note that names the PATH directories the sandbox hides.
// The command is shown where PATH finds it (expose.go), but what it runs
// is looked up on the same PATH in an empty home: an agent's `cargo
// build`, `uv run` or `ruff` under ~/.cargo/bin or ~/.local/bin is
// "command not found", and the agent, not jail, is the one to say so.

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jail-sandbox/jail/hostpath"
	"github.com/jail-sandbox/jail/ns"
)

// hiddenPathPrefix begins the note (shownNote).
const hiddenPathPrefix = "PATH: "

// hiddenPathMax bounds what the note names: directories, and programs in
// each (the first in order; "..." says there are more).
const (
	hiddenPathMaxDirs  = 4
	hiddenPathMaxNames = 2
	hiddenPathMaxRead  = 256 // entries read from one directory
)

// hiddenPathNote names the directories of pathEnv (the sandbox's PATH)
// in the user's home that hold programs and that mounts (the plan's)
// hide, with a few of their programs, or "". Only the home's: another
// user's (root's PATH naming /root/.cargo/bin under another HOME) is not
// the user's to show. A directory in a secret place or in jail's state
// directory sd is left out: no option shows it. The note is said once
// for its words: the same directories and programs make the same line.
func hiddenPathNote(pathEnv, home, sd string, mounts []ns.Mount) string {
	if home == "" {
		return ""
	}
	var dirs []string
	seen := map[string]bool{}
	more := 0
	for _, e := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(e) {
			continue // the working directory: visible
		}
		d, err := filepath.EvalSymlinks(e)
		if err != nil || seen[d] {
			continue
		}
		seen[d] = true
		if !strings.HasPrefix(d, home+"/") || visibleIn(d, mounts) || secretPlace(hostpath.File{Path: e, Final: d}, home) != "" ||
			(sd != "" && enclosing(d, []string{sd}) != "") {
			continue
		}
		names := programsIn(d, mounts)
		if len(names) == 0 {
			continue
		}
		if len(dirs) == hiddenPathMaxDirs {
			more++
			continue
		}
		shown := names
		if len(shown) > hiddenPathMaxNames {
			shown = append(shown[:hiddenPathMaxNames:hiddenPathMaxNames], "...")
		}
		dirs = append(dirs, tildePath(e, home)+" ("+strings.Join(shown, ", ")+")")
	}
	if len(dirs) == 0 {
		return ""
	}
	list, verb := dirs[0], "is"
	switch {
	case more > 0:
		list, verb = strings.Join(dirs, ", ")+" and more", "are"
	case len(dirs) > 1:
		list, verb = strings.Join(dirs[:len(dirs)-1], ", ")+" and "+dirs[len(dirs)-1], "are"
	}
	return hiddenPathPrefix + list + " " + verb + " hidden inside with your home: a program there runs as the command, but what the command runs is not found there; `runnable` NAME shows one read-only (the rust, node and python profiles do for their tools)"
}

// programsIn lists the executables in dir, sorted, that mounts do not
// show at their own path (a command's link recreated there is found).
func programsIn(dir string, mounts []ns.Mount) []string {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	ents, _ := f.ReadDir(hiddenPathMaxRead)
	var names []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, ".") {
			continue
		}
		p := filepath.Join(dir, n)
		if shownAt(p, mounts) {
			continue
		}
		fi, err := os.Stat(p) // a link: what it leads to
		if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// shownAt says whether a mount of mounts is at p itself.
func shownAt(p string, mounts []ns.Mount) bool {
	for i := range mounts {
		if mounts[i].Path == p && mounts[i].Kind != ns.KindTmpfs {
			return true
		}
	}
	return false
}

// tildePath writes p under home as ~/REST.
func tildePath(p, home string) string {
	if home != "" && strings.HasPrefix(p, home+"/") {
		return "~/" + strings.TrimPrefix(p, home+"/")
	}
	return p
}
