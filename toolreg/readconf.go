package toolreg

import (
	"errors"

	"github.com/jail-sandbox/jail/plainfile"
)

// maxConfigFile bounds a tool's configuration file: a huge file the agent
// wrote in the workspace is not read into memory.
const maxConfigFile = 1 << 20

var errNotPlain = errors.New("not a regular file (a FIFO, a device?)")

// readConfig reads a tool's configuration file (.npmrc, pip.conf, cargo's
// config.toml), which may lie in the workspace the agent writes: it is
// read before the Writable check says whether it counts, so a FIFO the
// agent made there blocked os.ReadFile for ever (every later start with
// registries hung) and a link to /dev/zero was read into memory.
// plainfile.ReadNamed reads a regular file only (a symlink followed to
// one), without blocking, at most maxConfigFile bytes; anything else is
// an error, and the file is skipped as an unreadable one is.
func readConfig(path string) ([]byte, error) {
	return plainfile.ReadNamed(path, maxConfigFile, errNotPlain)
}
