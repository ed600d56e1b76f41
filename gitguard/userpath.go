package gitguard

import (
	"os/user"
	"path/filepath"
	"strings"
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
// not known. Why "~name": git expands it (git 2.39, tried by hand: -c
// include.path=~root/x.cfg applied x.cfg), so a user config naming the
// user's own workspace as ~alice/proj/hooks was read as a relative path
// and the agent's hooks there ran in every repository of the host
// (review19a).
func (s *scanner) userPath(v string) string {
	if filepath.IsAbs(v) {
		return filepath.Clean(v)
	}
	rest, ok := strings.CutPrefix(v, "~")
	if !ok {
		return ""
	}
	name, tail, _ := strings.Cut(rest, "/")
	home := s.in.Home
	if name != "" {
		home = lookupHome(name)
	}
	if home == "" || !filepath.IsAbs(home) {
		return ""
	}
	return filepath.Join(home, tail)
}
