package sandbox

// This file: what a command that init could not find is on the host. Init
// looks a command up in the sandbox's view only (ns: "NAME: command not
// found inside the sandbox", exit 127); the user's next step depends on
// what the host has: nothing jail can show (sudo on a machine without it:
// init's old advice, to make a hidden directory visible, sent the user
// looking for one), or a file the sandbox hides (a secret place's, which
// the plan has already said it never shows; a program under the home that
// jail exec was asked to run, which the sandbox's start did not show).

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/jail-sandbox/jail/hostpath"
	"github.com/jail-sandbox/jail/ns"
)

// notFoundLine is the user's line for init's "command not found" (msg,
// exit 127) of the command name, looked up on the host as init looked it
// up inside (pathEnv, cwd): where the host has no such command either, it
// says so; where the host has one, it names the file the sandbox hides and
// how to show it: `read` its directory, or, for a command jail exec runs
// (exec: a sandbox already started), a new sandbox with `runnable` NAME.
// A file in a secret place gets no advice (the plan said why jail never
// shows one). "" keeps msg: not init's message, or the host has the file
// in a place init should have found (a race with the host's changes).
func notFoundLine(msg, name, pathEnv, cwd, home string, exec bool) string {
	if name == "" || !strings.HasSuffix(msg, ns.NotFoundInside) {
		return ""
	}
	cmd, err := hostpath.FindCommand(name, pathEnv, cwd)
	if cmd == nil || len(cmd.Files) == 0 {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return ""
		}
		if strings.Contains(name, "/") {
			return fmt.Sprintf("%s: no such file, inside the sandbox or on the host", name)
		}
		return fmt.Sprintf("%s: command not found, inside the sandbox or on the host (the same PATH)", name)
	}
	f := cmd.Files[0]
	if fi, err := os.Stat(f.Path); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	line := fmt.Sprintf("%s: command not found inside the sandbox: the host's is %s, which the sandbox hides", name, tildePath(f.Path, home))
	switch {
	case secretPlace(f, home) != "":
		return line
	case exec && !strings.Contains(name, "/"):
		return line + fmt.Sprintf("; start the sandbox with `runnable` %s to run it (or `read` %s)", name, tildePath(filepath.Dir(f.Path), home))
	default:
		return line + fmt.Sprintf("; `read` %s shows it", tildePath(filepath.Dir(f.Path), home))
	}
}
