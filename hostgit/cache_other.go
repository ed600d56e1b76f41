//go:build !linux

package hostgit

// ReadIdentityCached is ReadIdentity: the cache is Linux-only.
func ReadIdentityCached(dir string, env []string, file string) Identity {
	return ReadIdentity(dir, env)
}
