package config

import (
	"errors"

	"github.com/jail-sandbox/jail/plainfile"
)

// maxProjectFile bounds a project file's size (and a settings or --config
// file's): a few lines of TOML or JSON; the bound keeps a huge file the
// agent wrote from being read into memory.
const maxProjectFile = 1 << 20

// errNotPlain is a project file that is no regular file.
var errNotPlain = errors.New("not a regular file (a symlink, a FIFO, a device?): jail reads a project file only as a plain file")

// errNotPlainConfig is a settings or --config file that is no regular file.
var errNotPlainConfig = errors.New("not a regular file (a FIFO, a device?): jail reads a settings or config file only as a plain file, or as a pipe passed as /dev/fd/N (--settings <(cmd))")

// readProjectFile reads a project file (.jail.toml), which lies in a
// workspace the agent writes. Why not os.ReadFile: the agent can make it a
// FIFO (the open blocks until a writer comes: every later start in the
// project, jail trust and jail config show hung), a link to /dev/zero
// (read forever into memory) or a huge sparse file (read whole into
// memory: jail died out of memory). plainfile.Read reads only a regular
// file, not through a final symlink, of at most maxProjectFile bytes. A
// dangling symlink is no file, as it was: the caller's fs.ErrNotExist
// (CheckAbsent still applies).
func readProjectFile(path string) ([]byte, error) {
	return plainfile.Read(path, maxProjectFile, errNotPlain)
}

// readConfigFile reads a file a user names: a settings file (the settings
// key, --settings) or --config. Such a path may lie in a tree the agent
// writes (the workspace's .claude/settings.json, named in the user's
// config): os.ReadFile blocked for ever on a FIFO the agent put there and
// read /dev/zero or a huge sparse file into memory. plainfile.ReadNamed
// follows a symlink to a regular file only, and reads a pipe only when
// passed as /dev/fd/N (`--settings <(cmd)`).
func readConfigFile(path string) ([]byte, error) {
	return plainfile.ReadNamed(path, maxProjectFile, errNotPlainConfig)
}
