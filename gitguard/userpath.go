package gitguard

import (
	"os/user"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jail-sandbox/jail/hostpath"
)

// lookupHome is the home directory of the user named name in the password
// database, "" for none (a test replaces it). Without cgo, os/user reads
// /etc/passwd only: a name only NSS knows (LDAP) is not found, and its
// paths are not protected (git would find them).
var lookupHome = func(name string) string {
	u, err := user.Lookup(name)
	if err != nil {
		return ""
	}
	return u.HomeDir
}

// userPath is the absolute path a path-valued key of the user's git config
// (core.hooksPath, init.templateDir, include.path, a program's path) names,
// as git's interpolate_path reads it: "~" and "~/..." under the user's
// HOME, "~name" and "~name/..." under name's home directory, an absolute
// path as it is; "" for a relative path (the caller's to place) or a home
// not known. Never cleaned: git hands the text to the kernel, which walks
// a ".." from where a symlink before it led (WS/l/../hooks with l ->
// sub/dir is WS/sub/hooks), where filepath.Clean named WS/hooks, and the
// directory git ran hooks from stayed writable (review20a). Why "~name": git expands it (git 2.39, tried by hand: -c
// include.path=~root/x.cfg applied x.cfg), so a user config naming the
// user's own workspace as ~alice/proj/hooks was read as a relative path
// and the agent's hooks there ran in every repository of the host
// (review19a).
func (s *scanner) userPath(v string) string {
	if filepath.IsAbs(v) {
		return v
	}
	rest, ok := strings.CutPrefix(v, "~")
	if !ok {
		return ""
	}
	name, tail, slash := strings.Cut(rest, "/")
	home := s.in.Home
	if name != "" {
		home = lookupHome(name)
	}
	if home == "" || !filepath.IsAbs(home) {
		return ""
	}
	if !slash {
		return home
	}
	return strings.TrimSuffix(home, "/") + "/" + tail
}

// asGit is the path git reaches for p, a path as a key names it (a user's
// path, or a work tree joined with a relative one, never cleaned): p
// itself unless a ".." in it follows a name that may be a symlink, then
// where the kernel's walk leads (as far as it exists, the rest as named).
// Why: protect cleans its path, and a ".." after a link named the wrong
// directory (review20a).
func asGit(p string) string {
	if !slices.Contains(strings.Split(p, "/"), "..") {
		return p
	}
	if real, _, err := hostpath.ResolveAsNamed(p); err == nil {
		return real
	}
	return p
}
