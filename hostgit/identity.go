package hostgit

import (
	"bytes"
	"context"
	"os/exec"
	"time"
)

// Identity is the user's git identity as the host's git sees it.
type Identity struct {
	Name, Email string
}

// Env returns the variables that give git inside the sandbox this identity
// for commits (author and committer), skipping empty values.
func (id Identity) Env() []string {
	var env []string
	if id.Name != "" {
		env = append(env, "GIT_AUTHOR_NAME="+id.Name, "GIT_COMMITTER_NAME="+id.Name)
	}
	if id.Email != "" {
		env = append(env, "GIT_AUTHOR_EMAIL="+id.Email, "GIT_COMMITTER_EMAIL="+id.Email)
	}
	return env
}

// EnvNames are the variables Env may set.
var EnvNames = []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"}

// ReadIdentity runs the host's git (the program at path git) to ask for
// user.name and user.email, as a commit made in dir would use them: every
// config file git reads (a symlinked ~/.gitconfig, ~/.config/git/config, the system's,
// includes, includeIf for dir's repository). Only those two values are
// taken. env is git's environment (the host's: HOME, XDG_CONFIG_HOME,
// GIT_CONFIG_*). The caller finds git and makes env (package hosttool:
// nothing a sandbox wrote may be the git that runs, or be loaded into it).
// Without git (""), or without an identity, the result is empty.
func ReadIdentity(git, dir string, env []string) Identity {
	if git == "" {
		return Identity{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	// One git run for both keys (jail's start pays for it). git config
	// runs no hook, filter or fsmonitor: it only reads config files.
	cmd := exec.CommandContext(ctx, git, "config", "--null", "--get-regexp", `^user\.(name|email)$`)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	if cmd.Run() != nil {
		return Identity{}
	}
	return parseIdentity(out.Bytes())
}

// parseIdentity reads `git config --null --get-regexp` output: entries of
// "key\nvalue\x00". The last value of a key wins, as for git config --get.
func parseIdentity(b []byte) Identity {
	var id Identity
	for _, e := range bytes.Split(b, []byte{0}) {
		k, v, ok := bytes.Cut(e, []byte{'\n'})
		if !ok || bytes.ContainsAny(v, "\n\x00") {
			continue
		}
		switch string(k) {
		case "user.name":
			id.Name = string(v)
		case "user.email":
			id.Email = string(v)
		}
	}
	return id
}
