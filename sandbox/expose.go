package sandbox

// This file: the command, and the programs a profile names (`runnable`),
// made runnable where the host's PATH finds them in a hidden place ($HOME,
// a data place): each one's install tree read-only, the symlinks on the
// way, and what a version manager reads from outside that tree (rustup's
// RUSTUP_HOME, cargo's configuration). Nothing shown is writable, and
// nothing in a secret place is shown.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/hostpath"
	"github.com/jail-sandbox/jail/hosttool"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/statedir"
)

// exposure is what an exposer adds to the plan.
type exposure struct {
	binds []ns.Mount
	links []hostpath.Link
	notes []string
	// once are the notes (in notes too) said once, not at every start:
	// those of the programs a profile names, which are the same each run.
	once map[string]bool
	// env is what the programs need set inside (NAME=VALUE): the
	// RUSTUP_HOME the host's rustup uses, where the sandbox's would look
	// in its empty home instead.
	env []string
}

// secretPlaces are directories under $HOME that hold credentials whole and
// that no command is run from: a command found in one is refused, never
// shown (fsrules' unreadable names, .ssh/ .aws/ .gnupg/..., are checked too).
var secretPlaces = []string{
	".password-store", ".local/share/keyrings", ".config/gh", ".config/gcloud",
	".azure", ".docker", ".kube", ".pki", ".mozilla", ".config/google-chrome",
	".config/chromium", ".thunderbird", ".vault-token",
}

// credentialNames are files that hold tokens inside otherwise harmless
// install prefixes (~/.cargo/credentials.toml...): an install tree that has
// one at its top is narrowed to the command's own directory.
var credentialNames = []string{
	"credentials", "credentials.toml", "credentials.json", ".credentials.json",
	"auth.json", "hosts.yml", "token", ".token", "config.json",
}

// exposer finds commands on the host's PATH the way execvp will inside, and
// each #! interpreter after them. A file that lies in a place the plan
// hides gets its install tree bound read-only and the symlinks on the way
// recreated, with a note; one in a secret place is refused with a note
// instead. One exposer serves a plan's every command, so that a tree shown
// for one is neither shown nor said again for the next.
type exposer struct {
	pathEnv, cwd, home string
	env                []string // the host's environment
	inside             []string // the environment the commands get
	// mounts is the plan so far (hides and binds), and each tree shown.
	mounts []ns.Mount
	// caches are where caches of jail's own are mounted: a read-only tree
	// holding one would refuse it (its mount point cannot be made in a
	// read-only tree), so such a tree is narrowed to the command's own
	// directory (~/.cargo/bin, not ~/.cargo with ~/.cargo/registry).
	caches []string
	// canWrite says what a sandbox can write, now or in an earlier run
	// (hostWritable): a link there, or a script's #! line there, is the
	// sandbox's choice of what to show (chosen).
	canWrite        hosttool.Writable
	sd              string
	dataDirs, broad []string
	exposed         []string
	e               exposure
}

func newExposer(pathEnv, cwd, home string, env, inside []string, mounts []ns.Mount, caches []string, canWrite hosttool.Writable) *exposer {
	x := &exposer{pathEnv: pathEnv, cwd: cwd, home: home, env: env, inside: inside, caches: caches,
		mounts: append([]ns.Mount{}, mounts...), canWrite: canWrite}
	if d, err := statedir.From(func(k string) string { return lookupEnv(env, k) }); err == nil {
		x.sd = resolveExisting(d)
	}
	if home != "" {
		x.dataDirs = []string{filepath.Join(home, ".local/share"), filepath.Join(home, ".local/lib"), filepath.Join(home, ".local/opt")}
		x.broad = []string{home, filepath.Join(home, ".local"), filepath.Join(home, ".config"), filepath.Join(home, ".cache"), filepath.Join(home, ".local/state")}
		x.broad = append(x.broad, x.dataDirs...)
	}
	if d := lookupEnv(env, "XDG_DATA_HOME"); filepath.IsAbs(d) {
		d = resolveExisting(d)
		x.dataDirs = append(x.dataDirs, d)
		x.broad = append(x.broad, d)
	}
	if x.sd != "" {
		x.broad = append(x.broad, x.sd)
	}
	return x
}

// command exposes argv[0] (what names it in notes: "command", "runnable");
// once makes its notes said once.
func (x *exposer) command(argv []string, what string, once bool) {
	if len(argv) == 0 {
		return
	}
	cmd, err := hostpath.FindCommand(argv[0], x.pathEnv, x.cwd)
	if cmd == nil || (err != nil && len(cmd.Files) == 0) {
		if what == "runnable" {
			// For --dry-run and the trail only (shownNote): a profile's
			// runnable is often absent (python beside python3), and
			// saying so at a start would be noise.
			x.e.notes = append(x.e.notes, fmt.Sprintf("not on PATH: runnable %s (nothing shown)", argv[0]))
		}
		return
	}
	before := len(x.e.notes)
	defer func() {
		if once {
			for _, n := range x.e.notes[before:] {
				if x.e.once == nil {
					x.e.once = map[string]bool{}
				}
				x.e.once[n] = true
			}
		}
	}()
	chosen := false
	for i, f := range cmd.Files {
		label := what + " " + argv[0]
		if i > 0 {
			label = fmt.Sprintf("interpreter %s of %s", f.Path, cmd.Files[i-1].Final)
			// A script the sandbox can write names its interpreter.
			chosen = chosen || x.writable(cmd.Files[i-1].Final)
		}
		chosen = chosen || x.writable(f.Path)
		for _, l := range f.Links {
			chosen = chosen || x.writable(l.Path)
		}
		if !x.file(f, label, chosen) {
			return
		}
		x.companions(f, filepath.Base(f.Path), what+" "+argv[0])
	}
}

// file shows f's install tree where the plan hides it; false when f is
// refused (a secret place, jail's state directory, a place the sandbox
// chose) or cannot be shown. chosen: the sandbox could have made the way
// to f (a link in a tree it can write, now or in an earlier run: an
// activated venv's bin/python3, direnv's PATH_add; or the #! line of a
// script there).
func (x *exposer) file(f hostpath.File, what string, chosen bool) bool {
	if x.shown(f) {
		return true
	}
	chain := f.Path
	if f.Final != f.Path {
		chain += " -> " + f.Final
	}
	if why := secretPlace(f, x.home); why != "" {
		x.e.notes = append(x.e.notes, fmt.Sprintf("%s: %s is in %s: not made visible (jail never shows a secret place to run a command from it); install it elsewhere", what, chain, why))
		return false
	}
	tree := f.Final
	if !visibleIn(f.Final, x.mounts) {
		tree = hostpath.InstallTree(f, x.dataDirs, x.broad)
		if tree != f.Final && (hasCredential(tree) || x.holdsCache(tree)) {
			// Narrowed: a token beside the prefix (~/.cargo) stays hidden,
			// and a cache of jail's own there (the rust profile's
			// ~/.cargo/registry) is mounted in the hidden home instead
			// of being refused in a read-only tree.
			tree = filepath.Dir(f.Final)
			if hasCredential(tree) || x.holdsCache(tree) {
				tree = f.Final
			}
		}
		if x.sd != "" && (tree == x.sd || strings.HasPrefix(tree, x.sd+"/")) {
			x.e.notes = append(x.e.notes, fmt.Sprintf("%s: %s is in jail's state directory %s: not made visible", what, chain, x.sd))
			return false
		}
		fi, err := os.Stat(tree)
		if err != nil {
			return false
		}
		if enclosing(tree, x.exposed) != "" {
			// Inside the tree of a command or an interpreter before it.
			x.e.links = append(x.e.links, f.Links...)
			return true
		}
		if chosen {
			// Why: the sandbox chose where the way leads. A link
			// planted in the workspace's .venv/bin (python3 ->
			// ~/src/other/bin/tool) showed ~/src/other, another
			// private tree, read-only to the next run. It is followed
			// only into the tree the user's own PATH gives the same
			// name (a venv's python3 into pyenv's ~/.pyenv).
			name := filepath.Base(f.Path)
			own := x.ownTree(name)
			if own == "" || enclosing(tree, []string{own}) == "" {
				x.e.notes = append(x.e.notes, fmt.Sprintf("%s: %s is reached through a place the sandbox can write (or could in an earlier run), and %s on your PATH is not in %s: not made visible (`read` %s shows it, if you trust it)", what, chain, name, tree, tree))
				return false
			}
		}
		x.exposed = append(x.exposed, tree)
		// Read-only: the agent runs the install, it cannot change what
		// the user's next run outside jail executes. fsrules masks
		// secrets inside the tree like in any --read path.
		x.bind(ns.Mount{Kind: ns.KindROBind, Path: tree, Dir: fi.IsDir(), FD: -1, Why: "install tree of " + what})
	}
	x.e.links = append(x.e.links, f.Links...)
	x.e.notes = append(x.e.notes, fmt.Sprintf("%s: %s is in a place hidden inside; made visible read-only: %s%s (`read` PATH to choose yourself)", what, chain, tree, linksNote(f.Links)))
	return true
}

// shown says whether f works inside as it is: the file visible, and each
// link on the way visible or recreated for an earlier file.
func (x *exposer) shown(f hostpath.File) bool {
	for _, l := range f.Links {
		if !visibleIn(l.Path, x.mounts) && !x.recreated(l) {
			return false
		}
	}
	return visibleIn(f.Final, x.mounts)
}

// recreated says whether the link l is recreated for an earlier file
// (a shim that is both a runnable and an interpreter's): said once.
func (x *exposer) recreated(l hostpath.Link) bool {
	for _, r := range x.e.links {
		if r == l {
			return true
		}
	}
	return false
}

// writable says whether a sandbox can write p, now or in an earlier run.
func (x *exposer) writable(p string) bool { return x.canWrite != nil && x.canWrite(p) }

// ownTree is the install tree of name as the user's own PATH finds it,
// past every directory a sandbox can write (hosttool.LookPath), where the
// plan hides it; "" when that is nowhere hidden.
func (x *exposer) ownTree(name string) string {
	if x.canWrite == nil {
		return ""
	}
	p, err := hosttool.LookPath(name, []string{"PATH=" + x.pathEnv}, x.canWrite)
	if err != nil {
		return ""
	}
	final, links, err := hostpath.Resolve(p)
	if err != nil || visibleIn(final, x.mounts) {
		return ""
	}
	return hostpath.InstallTree(hostpath.File{Path: p, Final: final, Links: links}, x.dataDirs, x.broad)
}

func (x *exposer) bind(m ns.Mount) {
	x.e.binds = append(x.e.binds, m)
	x.mounts = append(x.mounts, m)
}

// holdsCache says whether a cache of jail's own is tree or lies in it.
func (x *exposer) holdsCache(tree string) bool {
	for _, c := range x.caches {
		if c == tree || strings.HasPrefix(c, tree+"/") {
			return true
		}
	}
	return false
}

// companions shows what the program f runs reads from outside its install
// tree and cannot run without. name is the name PATH found it by.
//   - rustup (cargo, rustc... in ~/.cargo/bin are rustup, which runs the
//     toolchain it picks from RUSTUP_HOME): RUSTUP_HOME, read-only (a
//     toolchain cannot be installed or updated inside; `rustup` on the
//     host does it), and RUSTUP_HOME itself set inside when the host sets
//     it, since the sandbox's rustup would look in the empty home;
//   - cargo (rustup's or another): its configuration files in CARGO_HOME
//     (source replacement, registries, build settings), read-only, which
//     are outside the install tree once that is narrowed to ~/.cargo/bin
//     or when cargo is the system's. credentials.toml stays hidden.
//   - mise (a shim in ~/.local/share/mise/shims is a link to mise, which
//     runs the version its configuration names from its installs): its
//     data directory (installs, shims) and its configuration directory,
//     read-only, MISE_DATA_DIR and MISE_CONFIG_DIR set inside where the
//     host's are not the sandbox's defaults, and ~/.tool-versions (the
//     versions asdf and mise take for the whole home), read-only.
func (x *exposer) companions(f hostpath.File, name, what string) {
	rustup := hostpath.Rustup(f)
	if rustup && x.home != "" {
		x.toolDir("RUSTUP_HOME", "", filepath.Join(x.home, ".rustup"), what, "rustup's toolchains")
	}
	if filepath.Base(f.Final) == "mise" && x.home != "" {
		x.toolDir("MISE_DATA_DIR", "XDG_DATA_HOME", filepath.Join(x.home, ".local/share/mise"), what, "mise's installs")
		x.toolDir("MISE_CONFIG_DIR", "XDG_CONFIG_HOME", filepath.Join(x.home, ".config/mise"), what, "mise's configuration")
		x.show(filepath.Join(x.home, ".tool-versions"), what, "the home's tool versions")
	}
	if rustup || name == "cargo" {
		cargo := x.envInside("CARGO_HOME")
		if cargo == "" && x.home != "" {
			cargo = filepath.Join(x.home, ".cargo")
		}
		if cargo != "" {
			x.show(filepath.Join(cargo, "config.toml"), what, "cargo's configuration")
			x.show(filepath.Join(cargo, "config"), what, "cargo's configuration")
		}
	}
}

// toolDir shows the directory a version manager runs from, where the
// host's runs it from: the variable name on the host, else base/<the
// default's last element> when the host sets the XDG base directory base
// (the sandbox sets neither), else def. Where that is not the sandbox's
// default, name is set inside to it: the sandbox's manager would look in
// the empty home.
func (x *exposer) toolDir(name, base, def, what, why string) {
	d := x.envInside(name)
	if d == "" {
		d = def
		if h := lookupEnv(x.env, name); filepath.IsAbs(h) {
			d = filepath.Clean(h)
		} else if b := lookupEnv(x.env, base); base != "" && filepath.IsAbs(b) {
			d = filepath.Join(b, filepath.Base(def))
		}
		if d != def {
			x.e.env = append(x.e.env, name+"="+d)
		}
	}
	x.show(d, what, why)
}

// envInside is the absolute path name holds inside (set by the user or by
// this exposer), or "".
func (x *exposer) envInside(name string) string {
	for _, env := range [][]string{x.e.env, x.inside} {
		if v := lookupEnv(env, name); filepath.IsAbs(v) {
			return filepath.Clean(v)
		}
	}
	return ""
}

// show binds p read-only, with the symlinks on its way, where the plan
// hides it; an absent p, and one in a secret place or jail's state
// directory, is left as it is.
func (x *exposer) show(p, what, why string) {
	final, links, err := hostpath.Resolve(p)
	if err != nil {
		return
	}
	fi, err := os.Stat(final)
	if err != nil {
		return
	}
	f := hostpath.File{Path: p, Final: final, Links: links}
	if x.shown(f) {
		return
	}
	if secretPlace(f, x.home) != "" || (x.sd != "" && enclosing(final, []string{x.sd}) != "") {
		return // said nowhere: the command runs, and says what it misses
	}
	if !visibleIn(final, x.mounts) {
		x.bind(ns.Mount{Kind: ns.KindROBind, Path: final, Dir: fi.IsDir(), FD: -1, Why: why + " (" + what + ")"})
	}
	x.e.links = append(x.e.links, links...)
	x.e.notes = append(x.e.notes, fmt.Sprintf("%s: %s, %s, made visible read-only%s", what, why, p, linksNote(links)))
}

func linksNote(links []hostpath.Link) string {
	if len(links) == 0 {
		return ""
	}
	var s []string
	for _, l := range links {
		s = append(s, l.Path)
	}
	return ", with the symlinks " + strings.Join(s, " ")
}

// secretPlace says why f (the file or a link on the way) lies in a place
// that holds secrets, or "".
func secretPlace(f hostpath.File, home string) string {
	paths := []string{f.Path, f.Final}
	for _, l := range f.Links {
		paths = append(paths, l.Path)
	}
	for _, p := range paths {
		for _, b := range fsrules.Builtins {
			if b.Kind != fsrules.Hide {
				continue
			}
			name := strings.TrimSuffix(b.Name, "/")
			if strings.Contains(name, "/") { // .docker/config.json, .config/jail
				if strings.Contains(p+"/", "/"+name+"/") {
					return fmt.Sprintf("%s (%s)", b.Name, b.Why)
				}
				continue
			}
			for _, c := range strings.Split(p, "/") {
				if ok, _ := fsrules.Match(name, c); ok && c != "" {
					return fmt.Sprintf("%s (%s)", b.Name, b.Why)
				}
			}
		}
		if home == "" {
			continue
		}
		for _, s := range secretPlaces {
			d := filepath.Join(home, s)
			if p == d || strings.HasPrefix(p, d+"/") {
				return "~/" + s + " (credentials)"
			}
		}
	}
	return ""
}

func hasCredential(dir string) bool {
	for _, n := range credentialNames {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// cacheTargets are where p's caches are mounted (their paths as the tool
// sees them); a malformed one is cacheMounts' to refuse.
func cacheTargets(p *policy.Policy, home string) []string {
	var out []string
	for _, c := range p.Cache {
		_, path, err := policy.ParseCache(c)
		if err != nil {
			continue
		}
		if t, ok := cacheTarget(path, home); ok {
			out = append(out, t)
		}
	}
	return out
}
