package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/jail-sandbox/jail/statedir"
)

// This file: where the running sandboxes' registry lives (records, control
// sockets, name claims, background logs): jail's runtime directory,
// $XDG_RUNTIME_DIR/jail, when XDG_RUNTIME_DIR is a directory of the user's
// that only they can enter (the XDG spec's promise: 0700, owned by the
// user, on a tmpfs gone at logout). Otherwise (unset, as for root in CI or
// under su; or another user's, as after sudo) the state directory's run/,
// with the same checks: a registry another user could write to could hand
// jail a socket to send a command's stdio to.

// registryDir returns the registry's directory. It may not exist yet.
func registryDir() (string, error) {
	if d, ok := statedir.RuntimeFrom(os.Getenv); ok && privateDir(filepath.Dir(d)) == nil {
		return d, nil
	}
	return statedir.Path(statedir.Run)
}

// ensureRegistry returns the registry's directory, created 0700 if need
// be, once it is checked to be the user's own and closed to others.
func ensureRegistry() (string, error) {
	d, err := registryDir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(d, 0o700); err != nil {
		return "", fmt.Errorf("create jail's runtime directory %s: %w (set XDG_RUNTIME_DIR)", d, err)
	}
	if err := privateDir(d); err != nil {
		return "", err
	}
	return d, nil
}

// checkRegistry is ensureRegistry for readers: a registry that does not
// exist is empty ("", nil).
func checkRegistry() (string, error) {
	d, err := registryDir()
	if err != nil {
		return "", err
	}
	if err := privateDir(d); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", nil
		}
		return "", err
	}
	return d, nil
}

// privateDir checks that d is a directory (not a symlink) of this user's
// that no one else may enter or change.
func privateDir(d string) error {
	fi, err := os.Lstat(d)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("jail's runtime directory %s is not a directory (a symlink?): remove it, or set XDG_RUNTIME_DIR", d)
	case !ok || int(st.Uid) != os.Getuid():
		return fmt.Errorf("jail's runtime directory %s is not yours: remove it, or set XDG_RUNTIME_DIR to a directory of yours", d)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("jail's runtime directory %s is open to others (mode %04o): chmod 700 %s", d, fi.Mode().Perm(), d)
	}
	return nil
}
