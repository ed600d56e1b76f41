package sandbox

// This file: --ssh-agent, git over ssh inside. The user's ssh keys stay
// hidden (~/.ssh is a built-in protection); ssh inside signs with the
// host's agent instead, through its socket bound at a place of the
// sandbox's own (agentSocket, named by SSH_AUTH_SOCK: the host's socket
// lies under /tmp, /run or even ~/.ssh, places hidden whole, where a
// --read of it is refused), and checks the server's host key against a
// read-only copy of ~/.ssh/known_hosts (Files), without which ssh in an
// agent's shell (no terminal to ask on) refuses every host.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/plainfile"
	"github.com/jail-sandbox/jail/policy"
)

// sshAuthSock is the variable ssh finds its agent by.
const sshAuthSock = "SSH_AUTH_SOCK"

// whyKnownHosts is the reason of the known_hosts copy (policy.File.Why).
const whyKnownHosts = "a copy of ~/.ssh/known_hosts (ssh-agent): ssh inside checks host keys as yours does"

var errNotPlainKnownHosts = errors.New("not a regular file")

// agentSocket is where the host agent's socket is bound inside: in the
// private /run, whatever the host's path (which may name the user, or lie
// in a place a protection hides).
const agentSocket = "/run/ssh-agent.sock"

// agentSocketOf returns the host agent's socket (symlink-free) from the
// host environment env, or the error that fails a start asking for it.
// An agent that is not there fails the start: the user asked for signing,
// and a run without it would fail later in the agent's shell, unsaid.
func agentSocketOf(env []string) (string, error) {
	sock := lookupEnv(env, sshAuthSock)
	fail := func(reason string) error {
		return &policy.FieldError{Key: "ssh-agent", Value: sock, Reason: reason}
	}
	if sock == "" {
		return "", fail("SSH_AUTH_SOCK is not set: start an agent and add your key (eval \"$(ssh-agent)\"; ssh-add), or drop the option")
	}
	if !filepath.IsAbs(sock) {
		return "", fail("SSH_AUTH_SOCK is not an absolute path")
	}
	if fi, err := os.Stat(sock); err != nil || fi.Mode()&os.ModeSocket == 0 {
		return "", fail("SSH_AUTH_SOCK names no socket (is the agent still running? ssh-add -l asks it)")
	}
	r, err := filepath.EvalSymlinks(sock)
	if err != nil {
		return "", fail(err.Error())
	}
	return r, nil
}

// expandSSHAgent checks the agent p.SSHAgent asks for and adds the
// known_hosts copy to p.Files, from the host environment env. It is
// idempotent (the check and the plan both call it); the socket's mount
// and SSH_AUTH_SOCK are the plan's (sshAgentMount).
func expandSSHAgent(p *policy.Policy, env []string) error {
	if !p.SSHAgent {
		return nil
	}
	if _, err := agentSocketOf(env); err != nil {
		return err
	}
	home := lookupEnv(env, "HOME")
	if home == "" || !filepath.IsAbs(home) {
		return nil
	}
	if h, err := filepath.EvalSymlinks(home); err == nil {
		home = h
	}
	kh := filepath.Join(home, ".ssh", "known_hosts")
	if slices.ContainsFunc(p.Files, func(f policy.File) bool { return f.Path == kh }) {
		return nil
	}
	// ReadNamed: a dotfiles manager's link is followed, to a regular file
	// only (no FIFO opened, no device).
	b, err := plainfile.ReadNamed(kh, policy.MaxFileContent, errNotPlainKnownHosts)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil // no known hosts: ssh inside asks, or refuses, as ssh does on a new machine
	case err != nil:
		n := fmt.Sprintf("%s is not copied (%v): ssh inside does not know your hosts' keys; /etc/ssh/ssh_known_hosts is read as on the host", tildePath(kh, home), err)
		if !slices.Contains(p.Notices, n) { // said once however often expanded
			p.Notices = append(p.Notices, n)
		}
		return nil
	}
	p.Files = append(p.Files, policy.File{Path: kh, Content: string(b), Why: whyKnownHosts})
	return nil
}

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
