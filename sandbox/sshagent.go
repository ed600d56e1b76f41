package sandbox

// This file: --ssh-agent, git over ssh inside. The user's ssh keys stay
// hidden (~/.ssh is a built-in protection); ssh inside signs with the
// host's agent instead, through its socket bound at a place of the
// sandbox's own (agentSocket, named by SSH_AUTH_SOCK: the host's socket
// lies under /tmp, /run or even ~/.ssh, places hidden whole, where a
// --read of it is refused), and checks the server's host key against a
// read-only copy of ~/.ssh/known_hosts (Files), without which ssh in an
// agent's shell (no terminal to ask on) refuses every host, and knows the
// user's Host aliases from a copy of ~/.ssh/config (package sshconfig).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/plainfile"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/sshconfig"
)

// sshAuthSock is the variable ssh finds its agent by.
const sshAuthSock = "SSH_AUTH_SOCK"

// whyKnownHosts is the reason of the known_hosts copy (policy.File.Why).
const whyKnownHosts = "a copy of ~/.ssh/known_hosts (ssh-agent): ssh inside checks host keys as yours does"

var errNotPlainSSHFile = errors.New("not a regular file")

// agentSocket is where the host agent's socket is bound inside: in the
// private /run, whatever the host's path (which may name the user, or lie
// in a place a protection hides).
const agentSocket = "/run/ssh-agent.sock"

// agentSocketOf returns the host agent's socket (symlink-free) from the
// host environment env, or the error that fails a start asking for it:
// the agent the user's ssh uses for every host, the IdentityAgent of
// ~/.ssh/config's global part or `Host *` (1Password's and other
// agents' setup, which beats SSH_AUTH_SOCK in ssh), else SSH_AUTH_SOCK's.
// An agent that is not there fails the start: the user asked for signing,
// and a run without it would fail later in the agent's shell, unsaid.
func agentSocketOf(env []string) (string, error) {
	sock, from := lookupEnv(env, sshAuthSock), sshAuthSock
	if home := sshHome(env); home != "" {
		b, err := plainfile.ReadNamed(filepath.Join(home, ".ssh", "config"), policy.MaxFileContent, errNotPlainSSHFile)
		if a := sshconfig.GlobalIdentityAgent(b, home); err == nil && a != "" {
			sock, from = a, "IdentityAgent in ~/.ssh/config"
		}
	}
	fail := func(reason string) error {
		return &policy.FieldError{Key: "ssh-agent", Value: sock, Reason: reason}
	}
	if sock == "" {
		return "", fail("SSH_AUTH_SOCK is not set: start an agent and add your key (eval \"$(ssh-agent)\"; ssh-add), or drop the option")
	}
	if !filepath.IsAbs(sock) {
		return "", fail(from + " is not an absolute path")
	}
	if fi, err := os.Stat(sock); err != nil || fi.Mode()&os.ModeSocket == 0 {
		return "", fail(from + " names no socket (is the agent still running? ssh-add -l asks it)")
	}
	r, err := filepath.EvalSymlinks(sock)
	if err != nil {
		return "", fail(err.Error())
	}
	return r, nil
}

// sshHome is the home whose ~/.ssh jail reads for ssh, from the host
// environment env: HOME, symlinks resolved where it can; "" when HOME
// is unset or relative.
func sshHome(env []string) string {
	home := lookupEnv(env, "HOME")
	if !filepath.IsAbs(home) {
		return ""
	}
	if h, err := filepath.EvalSymlinks(home); err == nil {
		home = h
	}
	return home
}

// expandSSHAgent checks the agent p.SSHAgent asks for and adds to p.Files,
// from the host environment env, what ssh inside reads from ~/.ssh
// beside the agent: a copy of known_hosts; the user's ssh config as
// package sshconfig copies it (Host aliases: git@gh-work:org/repo.git
// names no host without it), with the files it includes from under
// ~/.ssh and the known-hosts files they name in ~/.ssh; and the public
// half of each IdentityFile they name there, at
// that file's path (IdentitiesOnly picks the agent's key by it; the
// private key stays hidden). It is idempotent (the check and the plan
// both call it); the socket's mount and SSH_AUTH_SOCK are the plan's
// (sshAgentMount).
func expandSSHAgent(p *policy.Policy, env []string) error {
	if !p.SSHAgent {
		return nil
	}
	if _, err := agentSocketOf(env); err != nil {
		return err
	}
	home := sshHome(env)
	if home == "" {
		return nil
	}
	say := func(n string) {
		if !slices.Contains(p.Notices, n) { // said once however often expanded
			p.Notices = append(p.Notices, n)
		}
	}
	full := false
	add := func(f policy.File) {
		switch {
		case slices.ContainsFunc(p.Files, func(g policy.File) bool { return g.Path == f.Path }):
		case len(p.Files) >= policy.MaxFiles:
			full = true
		default:
			p.Files = append(p.Files, f)
		}
	}
	// ReadNamed: a dotfiles manager's link is followed, to a regular file
	// only (no FIFO opened, no device).
	copyKnownHosts := func(kh string) {
		b, err := plainfile.ReadNamed(kh, policy.MaxFileContent, errNotPlainSSHFile)
		switch {
		case errors.Is(err, os.ErrNotExist):
			// No known hosts: ssh inside asks, or refuses, as ssh does on
			// a new machine.
		case err != nil:
			say(fmt.Sprintf("%s is not copied (%v): ssh inside does not know your hosts' keys; /etc/ssh/ssh_known_hosts is read as on the host", tildePath(kh, home), err))
		default:
			add(policy.File{Path: kh, Content: string(b), Why: whyKnownHosts})
		}
	}
	copyKnownHosts(filepath.Join(home, ".ssh", "known_hosts"))
	walkSSHConfig(home, func(cfg string, b []byte, err error, depth int) []string {
		switch {
		case errors.Is(err, os.ErrNotExist):
			return nil
		case err != nil && depth == 0:
			say(fmt.Sprintf("%s is not copied (%v): ssh inside does not know your Host aliases", tildePath(cfg, home), err))
			return nil
		case err != nil:
			return nil // an included file that is no regular file: ssh inside skips it, as a missing one
		}
		c := sshconfig.Read(b, home)
		why := whySSHConfig
		if depth > 0 {
			why = fmt.Sprintf("a copy of %s, included by ~/.ssh/config (ssh-agent): your Host aliases, without IdentityAgent and ControlMaster", tildePath(cfg, home))
		}
		add(policy.File{Path: cfg, Content: string(c.Content), Why: why})
		for _, kh := range c.KnownHosts {
			copyKnownHosts(kh)
		}
		for _, id := range c.IdentityFiles {
			// Never the private key: the file itself only when its name
			// says it is the public half, else NAME.pub beside it, and
			// either only when it reads as one public key.
			pub := id
			if !strings.HasSuffix(id, ".pub") {
				pub = id + ".pub"
			}
			b, err := plainfile.ReadNamed(pub, maxPublicKey, errNotPlainSSHFile)
			if err != nil || !sshconfig.PublicKey(b) {
				continue // ssh inside says the identity is not accessible, as it would on the host
			}
			add(policy.File{Path: id, Content: string(b), Why: fmt.Sprintf("the public half of %s (ssh-agent): ssh inside picks the agent's key by it; the private key stays hidden", tildePath(id, home))})
		}
		return c.Includes
	})
	if full {
		say(fmt.Sprintf("not every file ~/.ssh/config names is shown inside (at most %d files are placed): ssh may not find a key or host it names", policy.MaxFiles))
	}
	return nil
}

// walkSSHConfig reads home's ~/.ssh/config and the files it includes
// from under ~/.ssh (sshconfig: Includes), each once, the matches of a
// pattern sorted as ssh reads them, nested Includes to maxIncludeDepth
// (an Include loop ends), calling visit with each file's path, content
// (a regular file of at most MaxFileContent, a dotfiles manager's link
// followed) or the error reading it, and its depth; visit returns the
// file's Include patterns.
func walkSSHConfig(home string, visit func(path string, b []byte, err error, depth int) []string) {
	seen := map[string]bool{}
	var walk func(path string, depth int)
	walk = func(path string, depth int) {
		if depth > maxIncludeDepth || seen[path] {
			return
		}
		seen[path] = true
		b, err := plainfile.ReadNamed(path, policy.MaxFileContent, errNotPlainSSHFile)
		for _, pattern := range visit(path, b, err, depth) {
			matches, _ := filepath.Glob(pattern)
			for _, m := range matches {
				walk(m, depth+1)
			}
		}
	}
	walk(filepath.Join(home, ".ssh", "config"), 0)
}

// sshHostNames maps the Host aliases of home's ssh configuration (and
// what it includes) to their HostName (sshconfig.HostNames; the first
// file to name an alias counts): for the refusal of an alias's port 22.
func sshHostNames(home string) map[string]string {
	out := map[string]string{}
	walkSSHConfig(home, func(_ string, b []byte, err error, _ int) []string {
		if err != nil {
			return nil
		}
		for a, h := range sshconfig.HostNames(b) {
			if _, ok := out[a]; !ok {
				out[a] = h
			}
		}
		return sshconfig.Read(b, home).Includes
	})
	return out
}

// maxIncludeDepth bounds nested Includes (ssh's own bound is 16; a
// sandbox's copies stop sooner, and MaxFiles sooner still).
const maxIncludeDepth = 4

// maxPublicKey bounds an IdentityFile's public half (an RSA 16384-bit key
// is under 3 KiB).
const maxPublicKey = 16 << 10

// whySSHConfig is the reason of the ssh config copy (policy.File.Why).
const whySSHConfig = "a copy of ~/.ssh/config (ssh-agent): your Host aliases, without IdentityAgent and ControlMaster (ssh signs through jail's relay)"

// sshAgentMount is the bind of the host agent's socket at agentSocket,
// for a plan whose mounts make /run the sandbox's own tmpfs. Degraded
// mode builds no mounts: there the option fails the start rather than
// pass a path the command cannot reach, or show the host's /run.
func sshAgentMount(env []string, mounts []ns.Mount, degraded bool) (ns.Mount, error) {
	sock, err := agentSocketOf(env)
	if err != nil {
		return ns.Mount{}, err
	}
	if d := deepestMount(agentSocket, mounts); degraded || d == nil || d.Kind != ns.KindTmpfs {
		return ns.Mount{}, &policy.FieldError{Key: "ssh-agent", Value: sock, Reason: "needs the sandbox's own /run to bind the agent's socket in, which this run does not have (degraded mode, or a read or write path at /run)"}
	}
	// Why a bind of the socket and not of its directory: the directory
	// may hold other sockets (/run/user/UID has D-Bus, the keyring's).
	return ns.Mount{Kind: ns.KindROBind, Path: agentSocket, Source: sock, FD: -1, Why: "your ssh agent's socket (ssh-agent): the command can sign with its keys"}, nil
}
