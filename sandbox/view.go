package sandbox

// This file: what the default view shows besides the system's own directories
// (issue 10, class 5), and the home directory as a writable path (class 3).

import (
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/policy"
)

// dataPlaces hold data, services and add-on software rather than the
// system's programs: deployed apps with their .env (/opt/app, /var/www),
// TLS keys of services (/srv), other disks (/mnt, /media). The built-in
// protections cannot search them at every start (they may be whole disks),
// so they are empty inside: only the workspace, --read/--write paths and the
// program directories on PATH reappear there, and those are searched.
var dataPlaces = []string{"/opt", "/srv", "/mnt", "/media", "/var/www", "/var/opt"}

// systemTop are the top-level directories a program may need (read-only):
// every other top-level directory (/data, /backup, /app, /lost+found) is a
// data place too. /tmp, /run, /home and /root are replaced by empty tmpfs
// anyway (see hidden).
var systemTop = map[string]bool{
	"bin": true, "sbin": true, "lib": true, "lib32": true, "lib64": true, "libx32": true,
	"usr": true, "etc": true, "var": true, "boot": true, "dev": true, "proc": true, "sys": true,
	"snap": true, "nix": true, "gnu": true,
	"tmp": true, "run": true, "home": true, "root": true,
}

// dataDirs returns the data places present on this host, shallow first:
// dataPlaces and the unknown top-level directories. Symlinks are left
// alone: what they point to is hidden or a system place.
func dataDirs() []string {
	var out []string
	ents, _ := os.ReadDir("/")
	for _, e := range ents {
		if e.IsDir() && !systemTop[e.Name()] {
			out = append(out, "/"+e.Name())
		}
	}
	for _, p := range dataPlaces {
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return depth(out[i]) < depth(out[j]) })
	return out
}

// programRoots returns what must stay visible in the data places for the
// programs the agent will run: the installation directory of every PATH
// entry there (/opt/tool for /opt/tool/bin), of every program a PATH
// directory links there (/usr/bin/chrome -> /opt/google/chrome/chrome),
// and of the command itself when it is named by path. The installation
// directory of a program under node_modules is the project holding it
// (/opt/agents for /opt/agents/node_modules/.bin/claude); of one in a bin/ or
// sbin/, that directory's parent; otherwise its own directory. A data place itself
// is never shown whole by this (PATH=/opt shows /opt, since PATH says so).
//
// Symlinks the sandbox can have made are not followed: those in a PATH
// directory inside a writable root (an absolute PATH entry in the
// workspace, as direnv's PATH_add makes), and any link whose chain passes
// through one. Otherwise one run could plant bin/x -> /srv/other/... and
// have the next run show that data place's directory.
//
// links lists the PATH directories' symlinks (nil: each is read): package
// dircache's cache in jail's state directory, which answers for a directory
// unchanged since an earlier start (see linkReader).
func programRoots(places, hidden, writable []string, path string, command []string, ws string, links linkReader) []string {
	var out []string
	add := func(dir string) {
		place := enclosing(dir, places)
		if place == "" {
			return
		}
		if i := strings.Index(dir+"/", "/node_modules/"); i >= len(place) {
			// npm's layout (/opt/agents/node_modules/.bin/claude ->
			// ../@anthropic-ai/claude-code/...): a package loads its
			// dependencies from the whole node_modules tree, so the project
			// holding it is the installation directory.
			if dir = dir[:i]; dir == place {
				dir = place + "/node_modules"
			}
		} else if b := filepath.Base(dir); (b == "bin" || b == "sbin") && filepath.Dir(dir) != place && dir != place {
			dir = filepath.Dir(dir)
		}
		if !slices.Contains(out, dir) {
			out = append(out, dir)
		}
	}
	var seen []string
	src := newSymlinkSource(links)
	// What a PATH directory's symlinks lead to, kept across starts (see
	// progroots_memo.go); nil without a cache.
	memo := loadRootsMemo(links, places, writable)
	for _, e := range filepath.SplitList(path) {
		if !filepath.IsAbs(e) {
			continue // "" and "." are the working directory: visible anyway
		}
		d, err := filepath.EvalSymlinks(e)
		if err != nil || slices.Contains(seen, d) {
			continue
		}
		seen = append(seen, d)
		if wslDrive(d) {
			// WSL puts Windows' PATH after Linux's (/mnt/c/Windows/system32):
			// Windows programs cannot run inside (interop needs the sockets
			// under /run), and searching those trees over 9p at every start
			// would take seconds.
			continue
		}
		if enclosing(d, places) != "" {
			add(d) // and its symlinks elsewhere in data places, below
		} else if enclosing(d, hidden) != "" {
			continue // ~/.local/bin: empty inside anyway
		}
		if enclosing(d, writable) != "" {
			continue // its symlinks are the sandbox's to make: never followed
		}
		// A PATH directory's symlinks into data places (/usr/bin/google-chrome
		// -> /opt/google/chrome/chrome, /opt/bin/x -> ../x/bin/x). Unsorted:
		// /usr/bin holds a thousand names, and every start reads them
		// (symlinksIn: one getdents and one readlinkat per symlink).
		// The common case decided without a string: a name in the same
		// directory (python3 -> python3.12) of a system directory with no
		// data place in or under it.
		resolve := func(t string) {
			if r, err := filepath.EvalSymlinks(t); err == nil && enclosing(r, writable) == "" {
				add(filepath.Dir(r))
			}
		}
		if cands, ok := memo.lookup(d); ok {
			// d and the directories of its chains unchanged since a start
			// recorded them: the same candidates, resolved afresh.
			for _, t := range cands {
				resolve(t)
			}
			continue
		}
		sameDirSystem := systemTop[topDir(d)] && enclosing(d, places) == "" && !placeUnder(d, places)
		rec := memo.recorder(d)
		src := src
		src.rec = rec
		src.each(d, func(name, l string) {
			if sameDirSystem && !strings.ContainsRune(l, '/') {
				return
			}
			t, ok := followLink(filepath.Join(d, name), l, writable, src)
			if !ok {
				return // through a writable root: where it leads is the sandbox's choice
			}
			if top := topDir(t); systemTop[top] && enclosing(t, places) == "" {
				return // /usr/bin/python3 -> python3.12: the common case, no more syscalls
			}
			rec.cand(t)
			resolve(t)
		})
		memo.keep(rec)
	}
	memo.save()
	if len(command) > 0 && strings.ContainsRune(command[0], '/') {
		c := command[0]
		if !filepath.IsAbs(c) {
			c = filepath.Join(ws, c)
		}
		if t, err := filepath.EvalSymlinks(c); err == nil {
			add(filepath.Dir(t))
		}
		// The name itself, when it is a symlink elsewhere (/opt/x/run ->
		// /srv/y/bin/run): exec looks it up by that path.
		if d, err := filepath.EvalSymlinks(filepath.Dir(c)); err == nil {
			add(d)
		}
	}
	sort.Strings(out)
	// One inside another is shown by it (/opt/tool/lib by /opt/tool).
	kept := out[:0]
	for _, d := range out {
		if enclosing(d, kept) == "" {
			kept = append(kept, d)
		}
	}
	return kept
}

// wslDrive reports whether p is on a Windows drive as WSL mounts them
// (/mnt/c/...).
func wslDrive(p string) bool {
	rest, ok := strings.CutPrefix(p, "/mnt/")
	return ok && len(rest) >= 1 && rest[0] >= 'a' && rest[0] <= 'z' && (len(rest) == 1 || rest[1] == '/')
}

// followLink follows the symlink p, whose text l is read already, by the
// text of its links, without resolving the directories on the way: where a
// PATH symlink leads, in as few syscalls as possible (/usr/bin holds
// hundreds of symlinks), at most eight links in all. The chain is followed
// only through /etc (alternatives) and data places; a link to a name in the
// same directory or into another system directory ends it. ok is false when
// a link of the chain lies in one of the writable roots (the sandbox could
// have made it).
func followLink(p, l string, writable []string, src symlinkSource) (t string, ok bool) {
	for i := 1; ; i++ {
		if !strings.ContainsRune(l, '/') {
			// python3 -> python3.12: a name in the same directory, which
			// is scanned itself.
			return filepath.Join(filepath.Dir(p), l), true
		}
		if !filepath.IsAbs(l) {
			l = filepath.Join(filepath.Dir(p), l)
		}
		p = filepath.Clean(l)
		if enclosing(p, writable) != "" {
			return p, false
		}
		if top := topDir(p); systemTop[top] && top != "etc" {
			return p, true // ../lib/llvm-14/bin/clang: decided by its directory
		}
		if i == 8 {
			return p, true
		}
		var err error
		if l, err = src.readlink(p); err != nil {
			return p, true // not a symlink (or gone): the end of the chain
		}
	}
}

// placeUnder reports whether a data place lies below d.
func placeUnder(d string, places []string) bool {
	for _, p := range places {
		if d == "/" || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// linkReader lists a directory's symlinks with their texts and reads one
// symlink, answering from a cache across starts where the directory has
// not changed (*dircache.Cache, kept in jail's state directory, which no
// sandbox sees; see the package doc of dircache for why its key, the
// directory's device, inode and ctime, covers every retargeted link).
type linkReader interface {
	Links(view, dir string, each func(name, target string)) error
	Readlink(view, p string) (string, error)
}

// linksView names the program roots' records in the cache: their texts are
// what getdents and readlink(2) gave these credentials.
func linksView() string { return "program-roots 1\x00" + fsrules.Creds() }

// symlinkSource reads symlinks for programRoots: through a linkReader in
// its view, else from the directories themselves.
type symlinkSource struct {
	r    linkReader
	view string
	rec  *rootsRec // notes the directories read (nil: none)
}

func newSymlinkSource(r linkReader) symlinkSource {
	if r == nil {
		return symlinkSource{}
	}
	return symlinkSource{r: r, view: linksView()}
}

// each calls fn for every symlink in dir, with its text (symlinksIn
// without a cache).
func (s symlinkSource) each(dir string, fn func(name, target string)) {
	s.rec.dep(dir) // keyed before it is read
	if s.r == nil {
		symlinksIn(dir, fn)
		return
	}
	s.r.Links(s.view, dir, fn) // an unreadable directory has none
}

// readlink is os.Readlink, through the cache when there is one.
func (s symlinkSource) readlink(p string) (string, error) {
	s.rec.dep(filepath.Dir(p)) // keyed before it is read
	if s.r == nil {
		return os.Readlink(p)
	}
	return s.r.Readlink(s.view, p)
}

// topDir is the first element of the absolute path p ("usr" for
// /usr/bin/x), without allocating.
func topDir(p string) string {
	p = strings.TrimPrefix(p, "/")
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return p
}

// symlinksPortable calls each for every symlink directly in dir, with its
// text: os.ReadDir and os.Readlink (what symlinksIn does with fewer
// system calls and allocations on Linux).
func symlinksPortable(dir string, each func(name, target string)) {
	f, err := os.Open(dir)
	if err != nil {
		return
	}
	ents, _ := f.ReadDir(-1)
	f.Close()
	for _, ent := range ents {
		if ent.Type()&os.ModeSymlink == 0 {
			continue
		}
		if l, err := os.Readlink(filepath.Join(dir, ent.Name())); err == nil {
			each(ent.Name(), l)
		}
	}
}

// userHomes returns the invoking user's home directories, resolved: $HOME
// and the passwd entry's (login shells read startup files there even when
// $HOME points elsewhere).
func userHomes(envHome string) []string {
	var out []string
	cands := []string{envHome}
	if u, err := user.Current(); err == nil {
		cands = append(cands, u.HomeDir)
	}
	for _, h := range cands {
		if h == "" || !filepath.IsAbs(h) {
			continue
		}
		if r, err := filepath.EvalSymlinks(h); err == nil {
			h = r
		}
		h = filepath.Clean(h)
		if h != "/" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// checkHome refuses a writable path (key "workspace" or "write", raw as the
// user gave it) that is a home directory or holds one, unless asked for with
// allow-writable-home: every shell, editor, git and the desktop session load
// files from there, so one of them the protections miss (or one that does
// not exist yet) runs the agent's code outside the sandbox later.
func checkHome(key, raw, path string, homes []string, allow bool) error {
	if allow {
		return nil
	}
	for _, h := range homes {
		if path != h && !strings.HasPrefix(h, strings.TrimSuffix(path, "/")+"/") {
			continue
		}
		rel := "is your home directory"
		if raw != "" && raw != path {
			rel += " " + h // given through a symlink or relative
		}
		if path != h {
			rel = "holds your home directory " + h
		}
		if raw == "" {
			raw = path
		}
		return &policy.FieldError{Key: key, Value: raw, Reason: rel + ": the agent could plant code in startup files your shells and tools run later, outside the sandbox; use a project directory, or add `allow-writable-home` (existing startup files stay read-only)"}
	}
	return nil
}
