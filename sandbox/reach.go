package sandbox

// This file: what everyday tools need to work inside as they do on the host
// (issue 11), decided at plan time from the host's file system: the git top
// level as the workspace, the git identity, symlinks at their own paths,
// and the note about Go's module cache (the command where the host's PATH
// finds it: expose.go). None of it makes a secret visible or a hidden path writable.

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/hostgit"
	"github.com/jail-sandbox/jail/hostpath"
	"github.com/jail-sandbox/jail/hosttool"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/pastwrite"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/statedir"
)

// shownNote picks the plan's notes said on stderr at start (the others are
// for --dry-run and the trail).
func shownNote(n string) bool {
	for _, pre := range []string{"deny ", fsrules.LiftNotePrefix, fixtureNotePrefix, dotenvNotePrefix, "read-only: ", "unreadable directory", "workspace: ", "command ", "runnable ", argNotePrefix, hiddenPathPrefix, gitRemotePrefix, envPathPrefix, "interpreter ", "go: ", "agent script: ", unguardedNote, "policy file", hostSocketsNote, notKeptNote} {
		if strings.HasPrefix(n, pre) {
			return true
		}
	}
	return false
}

// workspaceOf decides the workspace and where the command starts. Without
// --workspace, a start in a subfolder of a git work tree makes its top level
// the workspace, so that git finds the repository (it stops at the mount
// point of a subfolder workspace). The top level then gets exactly what a
// start there would: fsrules protects its .git/config, hooks and modules.
func workspaceOf(p *policy.Policy, home string) (ws, cwd, note string, err error) {
	if p.Cwd != "" {
		if cwd, err = policy.ResolvePath("the current directory", "/", p.Cwd); err != nil {
			return "", "", "", err
		}
	}
	if p.Workspace != "" {
		if ws, err = policy.ResolvePath("workspace", "/", p.Workspace); err != nil {
			return "", "", "", err
		}
		if cwd == "" || enclosing(cwd, []string{ws}) == "" {
			cwd = ws
		}
		return ws, cwd, "", nil
	}
	if cwd == "" {
		return "", "", "", fmt.Errorf("%w: no workspace and no current directory", policy.ErrInvalid)
	}
	top, why := hostgit.TopLevel(cwd, home)
	switch {
	case top != "" && top != cwd:
		return top, cwd, fmt.Sprintf("workspace: %s, the top level of the git work tree you started in (%s starts there; `workspace` %s for the subfolder alone)", top, cwd, cwd), nil
	case why != "":
		// Said by --dry-run and the trail only: a home kept in git (dotfiles)
		// would hear it at every start.
		return cwd, cwd, fmt.Sprintf("git: the workspace stays %s: %s, which is never made writable whole (`workspace` DIR to choose)", cwd, why), nil
	}
	return cwd, cwd, "", nil
}

// cwdLinks refuses a workspace that jail chose from the current directory
// (no --workspace) when the directory was named through a symlink that lies
// in a tree a command run in a sandbox could write, and the workspace it
// leads to lies outside that tree: the top level of a git work tree (an
// earlier run's workspace, or one that could be) or one of this run's write
// paths (cwdlink). raw is the directory as the user named it (the shell's
// $PWD, which os.Getwd returns when it names the current directory; the
// Go API's Cwd), cwd and ws are workspaceOf's answers, binds resolveRoots'.
//
// The shell keeps $PWD as typed: after `cd P/out`, with P/out pointed at
// another project by a command run in P, the kernel's current directory is
// that project, and it would become the writable workspace. A link that
// leads within its own tree (the workspace is that tree, or inside it)
// widens nothing; a link outside every such tree (~/proj -> /data/proj) is
// the user's. $PWD unset or stale never reaches here: os.Getwd then gives
// the real path, with no link on it.
func cwdLinks(raw, cwd, ws, home string, binds []ns.Mount, past *pastwrite.Set) error {
	if raw == "" || filepath.Clean(raw) == cwd {
		// Resolved to the same text: no link on the way (a final path
		// has none), and nothing more to read at the usual start.
		return nil
	}
	abs, err := policy.AbsPath("the current directory", "/", raw)
	if err != nil {
		return err
	}
	final, links, err := hostpath.Resolve(abs)
	if err == nil && final != cwd {
		err = fmt.Errorf("now leads to %s", final)
	}
	if err != nil {
		// Why: the links checked must be those of the directory the
		// workspace was chosen from; one retargeted while jail starts is
		// refused, not guessed at.
		return &policy.FieldError{Key: "the current directory", Value: raw, Reason: fmt.Sprintf(
			"resolved to %s, then changed while jail started (%v): a command running in a sandbox may be changing it; cd to the real path", cwd, err)}
	}
	// This run's write paths; the workspace itself is what the links
	// lead to, not a tree they lie in.
	var trees []string
	for _, b := range binds {
		if b.Kind == ns.KindBind && b.Path != ws {
			trees = append(trees, b.Path)
		}
	}
	for _, l := range links {
		var in []string // "the writable D", "the git work tree T"
		if t := enclosing(l.Path, trees); t != "" && t != l.Path && enclosing(ws, []string{t}) == "" {
			in = append(in, "the writable "+t)
		}
		// Why MarkedTop: a work tree whose .git/HEAD the sandbox deleted
		// still counts. A work tree whose top level holds the home is no
		// workspace jail makes (MarkedTop says ""): links in a dotfiles
		// repository stay the user's.
		if t, _ := hostgit.MarkedTop(filepath.Dir(l.Path), home); t != "" && enclosing(ws, []string{t}) == "" {
			in = append(in, "the git work tree "+t)
		}
		// Why past: a tree an earlier run made writable (a -w path, a
		// workspace that is no work tree) held the sandbox as long as
		// this run's write paths do; its links are as much the agent's.
		if t, ok := past.Holds(l.Path); ok && enclosing(ws, []string{t}) == "" {
			in = append(in, "the tree "+t+" (writable in an earlier run)")
		}
		if len(in) == 0 {
			continue // the user's link, or one that leads within its tree
		}
		// Why: a link a sandbox could have retargeted must not choose the
		// tree this run makes writable.
		return &policy.FieldError{Key: "the current directory", Value: raw, Reason: fmt.Sprintf(
			"leads through the symlink %s (-> %s) in %s, which a command run in a sandbox can point elsewhere; the workspace would be %s: `cd %s` (the real path), or `--workspace %s` if you mean it",
			l.Path, l.Target, in[0], ws, cwd, ws)}
	}
	return nil
}

// withGitIdentity adds the host's git identity (user.name, user.email, read
// by the host's git in the workspace) as GIT_AUTHOR_*/GIT_COMMITTER_*,
// unless the user passes or sets any of those. ~/.gitconfig itself stays
// hidden: it may hold credential helpers, tokens in url rewrites and
// includes, none of which passes.
//
// The git asked is the host's, run by jail outside the sandbox: w says
// what a sandbox can write, so that git is not one planted on the PATH
// (package hosttool).
func withGitIdentity(penv []string, ws string, hostEnv []string, w hosttool.Writable) []string {
	for _, n := range hostgit.EnvNames {
		if lookupEnv(penv, n) != "" {
			return penv
		}
	}
	add := readGitIdentity(ws, hostEnv, w).Env()
	if len(add) == 0 {
		return penv
	}
	out := append(append([]string{}, penv...), add...)
	sort.Strings(out)
	return out
}

// readGitIdentity is a test seam. The answer is cached in jail's state
// directory (never visible to the sandbox: plan.go masks it), keyed by
// every file git would read.
var readGitIdentity = func(dir string, env []string, w hosttool.Writable) hostgit.Identity {
	cache := ""
	if sd, err := statedir.From(func(k string) string { return lookupEnv(env, k) }); err == nil {
		cache = filepath.Join(sd, statedir.GitIdentity)
	}
	// Why: git runs on the host, as the user (or root), at every start
	// whose cache misses. The first git on the user's PATH may be one a
	// sandbox wrote (an activated venv's bin in the workspace, direnv's
	// PATH_add): a git planted there ran outside jail at the next start.
	// Only a git outside every writable tree runs, with an environment
	// that loads nothing from one.
	git, err := hosttool.LookPath("git", env, w)
	if err != nil {
		return hostgit.Identity{}
	}
	return hostgit.ReadIdentityCached(git, dir, hosttool.Env(env, w), cache)
}

// hostWritable says what a sandbox can write, for the host programs jail
// runs itself (package hosttool): this run's writable binds, and the trees
// earlier runs made writable (past: a venv in another project's workspace
// may be on the same PATH).
func hostWritable(mounts []ns.Mount, past *pastwrite.Set) hosttool.Writable {
	var roots []string
	for _, m := range mounts {
		if m.Kind == ns.KindBind {
			roots = append(roots, filepath.Clean(m.Path))
		}
	}
	return func(p string) bool {
		p = filepath.Clean(p)
		for _, r := range roots {
			if p == r || strings.HasPrefix(p, r+"/") || r == "/" {
				return true
			}
		}
		return past.Covers(p)
	}
}

// userLinks returns the symlinks on the way to each write and read path
// as the user named it (the binds are of the resolved targets).
func userLinks(p *policy.Policy, ws string) ([]hostpath.Link, error) {
	var links []hostpath.Link
	for _, set := range []struct {
		flag  string
		paths []string
	}{{"write", p.Write}, {"read", p.Read}} {
		for _, raw := range set.paths {
			abs, err := policy.AbsPath(set.flag, ws, raw)
			if err != nil {
				return nil, err
			}
			_, l, err := hostpath.Resolve(abs)
			if err != nil {
				continue // the bind has said what is wrong with it
			}
			links = append(links, l...)
		}
	}
	return links, nil
}

// linkMounts turns links into KindSymlink steps where the plan hides their
// place (in the view of the host root or of a bind, the host's own link is
// there already).
func linkMounts(links []hostpath.Link, mounts []ns.Mount) []ns.Mount {
	var out []ns.Mount
	seen := map[string]bool{}
	for _, l := range links {
		if seen[l.Path] || visibleIn(l.Path, mounts) {
			continue
		}
		seen[l.Path] = true
		out = append(out, ns.Mount{Kind: ns.KindSymlink, Path: l.Path, Link: l.Target, FD: -1, Why: "the host's symlink, on the way to a visible path"})
	}
	return out
}

// goCacheNote: `go test` and `go build` of a module need its dependencies
// from the module cache, which is in the hidden $HOME by default; under
// --net none nothing can download them, and the failure does not say why.
// Not said for a module the cache cannot help (goModNeedsCache): one of
// no dependencies, or one that vendors them; that was noise before every
// run of a test.
func goCacheNote(argv, penv []string, home, cwd string, mounts []ns.Mount) string {
	if len(argv) == 0 || filepath.Base(argv[0]) != "go" {
		return ""
	}
	if !goModNeedsCache(cwd) {
		return ""
	}
	mod := lookupEnv(penv, "GOMODCACHE")
	if mod == "" {
		gopath := lookupEnv(penv, "GOPATH")
		if gopath == "" && home != "" {
			gopath = filepath.Join(home, "go")
		}
		if first := filepath.SplitList(gopath); len(first) > 0 && first[0] != "" {
			mod = filepath.Join(first[0], "pkg", "mod")
		}
	}
	if mod == "" || !filepath.IsAbs(mod) {
		return ""
	}
	if _, err := os.Stat(mod); err != nil {
		return ""
	}
	mod = resolveExisting(mod)
	if visibleIn(mod, mounts) {
		return ""
	}
	return fmt.Sprintf("go: the module cache %s is hidden inside, so modules that are not vendored cannot be found (and `net` none cannot download them): add `read` %s to use it read-only (the build cache inside is the run's own)", mod, mod)
}

// goModNeedsCache tells whether the go command started in dir may need the
// module cache: false only for a main module (the go.mod found from dir
// upwards) that requires nothing or vendors what it requires, and no
// go.work beside it; true wherever that cannot be told (no go.mod found:
// `go run pkg@version`, GOPATH mode).
func goModNeedsCache(dir string) bool {
	for d := filepath.Clean(dir); filepath.IsAbs(d); d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err != nil {
			if d == "/" {
				return true
			}
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return true
		}
		if _, err := os.Stat(filepath.Join(d, "vendor", "modules.txt")); err == nil {
			return false // -mod=vendor is the go command's default then
		}
		return goModRequires(b)
	}
	return true
}

// goModRequires tells whether a go.mod has a require directive with at
// least one module in it (a line `require m v`, or a block of them).
func goModRequires(b []byte) bool {
	block := false
	for _, l := range strings.Split(string(b), "\n") {
		if i := strings.Index(l, "//"); i >= 0 {
			l = l[:i]
		}
		l = strings.NewReplacer("(", " ( ", ")", " ) ").Replace(l)
		f := strings.Fields(l)
		switch {
		case len(f) == 0:
		case block && f[0] == ")":
			block = false
		case block:
			return true
		case f[0] == "require" && len(f) >= 2 && f[1] == "(":
			if len(f) > 2 && f[2] != ")" {
				return true // require ( m v ) on one line
			}
			block = len(f) == 2
		case f[0] == "require" && len(f) >= 2:
			return true
		}
	}
	return false
}
