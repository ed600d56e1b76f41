//go:build !linux

package hostgit

// ReadIdentityCached is ReadIdentity: the cache is Linux-only.
func ReadIdentityCached(git, dir string, env []string, file string) Identity {
	return ReadIdentity(git, dir, env)
}
