package hostgit

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/jail-sandbox/jail/gitguard"
	"github.com/jail-sandbox/jail/plainfile"
)

// Remote is a remote of the workspace's repository that git reads as a
// repository on this machine: a bare repository beside the project, a
// sibling clone, a mirror under /srv.
type Remote struct {
	// Name is the remote's name (origin).
	Name string
	// URL is the url or pushurl as configured.
	URL string
	// Path is the repository git opens for it: absolute, symlinks resolved,
	// as the URL names it (a work tree's top, not its .git).
	Path string
}

// maxRemoteConfig bounds the repository config read for its remotes.
const maxRemoteConfig = 1 << 20

// LocalRemotes returns the remotes of the repository whose work tree's top
// level is top (its config, or its common dir's for a linked worktree)
// whose url or pushurl is a local path (localPath) naming a repository
// that exists, each path once. home is the user's home ("~/x" is a path
// in it, as git's enter_repo reads it). What git may read besides (an
// include, a url.*.insteadOf in the user's config) is not followed: the
// answer is for a note, and a remote it misses is one the note does not
// name.
func LocalRemotes(top, home string) []Remote {
	gitDir := filepath.Join(top, ".git")
	if fi, err := os.Lstat(gitDir); err != nil {
		return nil
	} else if fi.Mode().IsRegular() {
		b, err := plainfile.Read(gitDir, 4096, errNotPlain)
		if err != nil {
			return nil
		}
		t, err := gitguard.ParseGitFile(b)
		if err != nil {
			return nil
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(top, t)
		}
		gitDir = t
	}
	common, ok := gitguard.CommonDir(gitDir)
	if !ok {
		return nil
	}
	b, err := plainfile.Read(filepath.Join(common, "config"), maxRemoteConfig, errNotPlain)
	if err != nil {
		return nil
	}
	entries, _ := gitguard.ParseConfig(b) // the entries before a bad line: git dies there, the note is moot
	var out []Remote
	seen := map[string]bool{}
	for _, e := range entries {
		if e.Section != "remote" || (e.Key != "url" && e.Key != "pushurl") || e.NoValue {
			continue
		}
		p := localPath(e.Value, top, home)
		if p == "" {
			continue
		}
		repo := existingRepo(p)
		if repo == "" || seen[repo] {
			continue
		}
		seen[repo] = true
		out = append(out, Remote{Name: e.Subsection, URL: e.Value, Path: repo})
	}
	return out
}

// localPath returns the path git opens for a remote URL u that names a
// repository on this machine, or "" for one on another (gitglossary's
// "URLS" in git-fetch(1)): a "scheme://" URL other than file://, a
// "<transport>::<address>" remote helper, and scp-like "host:path" (a
// colon with no slash before it) are not local. A relative path is taken
// from the work tree's top, where git runs its transport; "~/" is home.
// file:// URLs are percent-decoded, as git's parse_connect_url decodes
// every URL.
func localPath(u, top, home string) string {
	if u == "" || strings.ContainsRune(u, 0) {
		return ""
	}
	if rest, ok := strings.CutPrefix(u, "file://"); ok {
		p, err := url.PathUnescape(rest)
		if err != nil || !strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
			return "" // file://host/path: not a path git opens here
		}
		return filepath.Clean(p)
	}
	if strings.Contains(u, "://") || strings.Contains(u, "::") {
		return ""
	}
	if c := strings.IndexByte(u, ':'); c >= 0 && !strings.Contains(u[:c], "/") {
		return "" // [user@]host:path, git's ssh
	}
	switch {
	case u == "~" || strings.HasPrefix(u, "~/"):
		if home == "" {
			return ""
		}
		return filepath.Join(home, strings.TrimPrefix(u, "~"))
	case strings.HasPrefix(u, "~"):
		return "" // ~user/path: another user's home
	case filepath.IsAbs(u):
		return filepath.Clean(u)
	}
	return filepath.Join(top, u)
}

// existingRepo returns the repository git's enter_repo opens for path p
// (p with "/.git", p, p.git with "/.git", p.git, the first a git directory),
// as the directory to name: p or p.git, symlinks resolved, a clone's work
// tree for its .git; "" when none.
func existingRepo(p string) string {
	for _, name := range []string{p, p + ".git"} {
		for _, g := range []string{filepath.Join(name, ".git"), name} {
			if fi, err := os.Stat(g); err == nil && fi.IsDir() && gitguard.IsGitDir(g) {
				r, err := filepath.EvalSymlinks(name)
				if err != nil {
					return ""
				}
				if filepath.Base(r) == ".git" {
					r = filepath.Dir(r) // a clone's .git named: its work tree, once
				}
				return r
			}
		}
	}
	return ""
}
