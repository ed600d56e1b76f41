package sandbox

// This file: the note about a variable passed with --env whose value is a
// path the sandbox hides. `--env SSH_AUTH_SOCK` passes the name of the ssh
// agent's socket, which lives under /tmp or /run, both the sandbox's own:
// ssh inside says "Error connecting to agent: No such file or directory",
// and only the agent sees it. The same holds for a key file named by
// GOOGLE_APPLICATION_CREDENTIALS, a DOCKER_HOST socket, a KUBECONFIG.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jail-sandbox/jail/hostpath"
	"github.com/jail-sandbox/jail/ns"
)

// envPathPrefix begins the note (shownNote).
const envPathPrefix = "`env` "

// envPath returns the path a variable's value names: an absolute path, a
// unix:// URL (DOCKER_HOST) or a D-Bus unix:path= address; "" for
// anything else (a list of paths, a word, a URL of another scheme).
func envPath(v string) string {
	switch {
	case strings.HasPrefix(v, "unix://"):
		v = strings.TrimPrefix(v, "unix://")
	case strings.HasPrefix(v, "unix:path="):
		v, _, _ = strings.Cut(strings.TrimPrefix(v, "unix:path="), ",")
	}
	if !filepath.IsAbs(v) || strings.ContainsAny(v, ":\x00\n") {
		return ""
	}
	return filepath.Clean(v)
}

// envPathNotes returns a note for each variable of names (the policy's
// --env) whose value in the host environment env names a path that exists
// on the host and that mounts (the plan's) hide: with the `read` that
// shows it (`write` too for a directory; `ssh-agent` for SSH_AUTH_SOCK's
// socket), or, where a protection hides it (a key under ~/.ssh, a
// --deny), saying that it stays hidden. A variable whose path is visible
// gets none.
func envPathNotes(names, env []string, home, sd string, mounts []ns.Mount) []string {
	var notes []string
	for _, name := range names {
		p := envPath(lookupEnv(env, name))
		if p == "" {
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		p = resolveExisting(p)
		if sd != "" && enclosing(p, []string{sd}) != "" {
			continue // jail's own state: never shown
		}
		m := deepestMount(p, mounts)
		if m == nil || (m.Kind != ns.KindTmpfs && m.Kind != ns.KindMask) {
			continue
		}
		shown := tildePath(p, home)
		if name == sshAuthSock && fi.Mode()&os.ModeSocket != 0 {
			// The agent's own option: a --read of its socket is refused
			// under ~/.ssh, reaches no OpenSSH agent when root started
			// jail, and lets the command add, remove and lock keys.
			notes = append(notes, fmt.Sprintf("%s%s passes %s, which is hidden inside: `ssh-agent` lets ssh inside sign with your agent (through jail's relay: listing and signing only, each request in the trail)", envPathPrefix, name, shown))
			continue
		}
		if why := secretPlace(hostpath.File{Path: p, Final: p}, home); why != "" || m.Kind == ns.KindMask {
			if why == "" {
				why = m.Why
			}
			notes = append(notes, fmt.Sprintf("%s%s passes %s, which stays hidden inside (%s): the command cannot use it", envPathPrefix, name, shown, why))
			continue
		}
		what := "shows it read-only"
		switch {
		case fi.IsDir():
			// A build's output directory (CARGO_TARGET_DIR) is written:
			// a read path alone would fail it at its first write.
			what = "shows it read-only, `write` " + shown + " writable"
		case fi.Mode()&os.ModeSocket != 0:
			// Why say it: a socket is not data but a service; reading it
			// is asking what listens there (an ssh agent signs with every
			// key it holds, a docker socket is root on the host).
			what = "shows it (a socket: the command can then ask anything of what listens there)"
		}
		notes = append(notes, fmt.Sprintf("%s%s passes %s, which is hidden inside: `read` %s %s", envPathPrefix, name, shown, shown, what))
	}
	return notes
}
