// Package sshconfig reads the user's ssh client configuration
// (~/.ssh/config, ssh_config(5)) for jail's --ssh-agent: the copy a
// sandbox is shown, so that ssh inside knows the user's Host aliases
// (git@gh-work:org/repo.git), and the files that copy names in ~/.ssh
// which ssh inside needs beside the agent.
//
// The copy is the user's file with the lines that would take ssh away
// from jail's agent relay, or fail inside, turned into comments that say
// why: IdentityAgent (a socket of the host's, which ssh would use instead
// of SSH_AUTH_SOCK), ControlMaster and ControlPersist (a control socket
// in a directory the sandbox lacks: ssh exits when it cannot make one).
// Nothing else is changed or evaluated; Include and Match stay as written
// (an included file the sandbox lacks is skipped by ssh). The files an
// Include names under ~/.ssh (config.d/*) are named too, for their own
// copies.
//
// Nothing here reads a private key: an IdentityFile's public half (the
// file itself when its name ends in .pub, else NAME.pub beside it) is
// what Files names, to be placed at the IdentityFile's path, where ssh
// with IdentitiesOnly picks the agent's key by it.
package sshconfig

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
)

// Dropped is the comment that replaces a line the copy drops, before the
// line itself.
const Dropped = "# jail --ssh-agent: "

// dropWhy says why each dropped keyword goes (lowercase keywords).
var dropWhy = map[string]string{
	"identityagent":  "ssh signs through jail's relay (SSH_AUTH_SOCK) inside: ",
	"controlmaster":  "no control socket inside (its directory is the host's): ",
	"controlpersist": "no control socket inside (its directory is the host's): ",
}

// Copy is what Read makes of a configuration.
type Copy struct {
	// Content is the configuration as the sandbox is shown it.
	Content []byte
	// Dropped are the keywords of the lines turned into comments, in order.
	Dropped []string
	// IdentityFiles are the IdentityFile paths, as absolute paths with ~
	// and %d expanded, that lie in the home's .ssh; others (a %-token
	// other than %d, a relative path, a path elsewhere) are left out.
	IdentityFiles []string
	// KnownHosts are the UserKnownHostsFile paths in the home's .ssh, as
	// IdentityFiles.
	KnownHosts []string
	// Includes are the Include patterns that lie under the home's .ssh
	// (config.d/*), as absolute glob patterns: a relative one is taken
	// there, as ssh takes a user configuration's. Others are left out.
	Includes []string
}

// Read makes the sandbox's copy of config, home being the user's home
// (absolute, symlink-free).
func Read(config []byte, home string) Copy {
	var c Copy
	var out bytes.Buffer
	for len(config) > 0 {
		line := config
		if i := bytes.IndexByte(config, '\n'); i >= 0 {
			line, config = config[:i+1], config[i+1:]
		} else {
			config = nil
		}
		key, args := split(strings.TrimRight(string(line), "\r\n"))
		lk := strings.ToLower(key)
		if why, ok := dropWhy[lk]; ok && !(lk == "identityagent" && len(args) == 1 && strings.EqualFold(args[0], "none")) {
			// IdentityAgent none (no agent for a host) stays: it asks
			// for less.
			c.Dropped = append(c.Dropped, key)
			out.WriteString(Dropped + why)
			out.Write(line)
			if !bytes.HasSuffix(line, []byte("\n")) {
				out.WriteByte('\n')
			}
			continue
		}
		out.Write(line)
		switch lk {
		case "identityfile":
			if len(args) == 1 {
				if p, ok := inSSHDir(args[0], home); ok && !slices.Contains(c.IdentityFiles, p) {
					c.IdentityFiles = append(c.IdentityFiles, p)
				}
			}
		case "include":
			for _, a := range args {
				if p, ok := underSSHDir(a, home); ok && !slices.Contains(c.Includes, p) {
					c.Includes = append(c.Includes, p)
				}
			}
		case "userknownhostsfile":
			for _, a := range args {
				if p, ok := inSSHDir(a, home); ok && !slices.Contains(c.KnownHosts, p) {
					c.KnownHosts = append(c.KnownHosts, p)
				}
			}
		}
	}
	c.Content = out.Bytes()
	return c
}

// split reads one line as ssh does: leading blanks, a keyword, then
// blanks and at most one '=', then arguments separated by blanks, each
// possibly in double quotes. A comment or blank line has no keyword.
func split(line string) (key string, args []string) {
	s := strings.TrimLeft(line, " \t")
	if s == "" || s[0] == '#' {
		return "", nil
	}
	i := strings.IndexAny(s, " \t=")
	if i < 0 {
		return s, nil
	}
	key, s = s[:i], strings.TrimLeft(s[i:], " \t")
	if strings.HasPrefix(s, "=") {
		s = strings.TrimLeft(s[1:], " \t")
	}
	for s != "" {
		var a string
		if s[0] == '"' {
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				return key, nil // unbalanced quotes: ssh refuses the line
			}
			a, s = s[1:end+1], s[end+2:]
		} else {
			end := strings.IndexAny(s, " \t")
			if end < 0 {
				end = len(s)
			}
			a, s = s[:end], s[end:]
		}
		if strings.HasPrefix(a, "#") && len(args) > 0 {
			break // a trailing comment
		}
		args = append(args, a)
		s = strings.TrimLeft(s, " \t")
	}
	return key, args
}

// inSSHDir expands a leading ~/ or %d/ of a path argument and reports the
// clean absolute path when it lies directly in home/.ssh; a path with
// any other token (%h, ${VAR}) is not known without ssh.
func inSSHDir(a, home string) (string, bool) {
	a, ok := expand(a, home)
	if !ok || filepath.Dir(a) != filepath.Join(home, ".ssh") {
		return "", false
	}
	return a, true
}

// underSSHDir is inSSHDir for an Include pattern: relative to home/.ssh
// when not absolute, anywhere below it.
func underSSHDir(a, home string) (string, bool) {
	if !strings.HasPrefix(a, "~/") && !strings.HasPrefix(a, "%d/") && !filepath.IsAbs(a) {
		a = filepath.Join(home, ".ssh", a)
	}
	a, ok := expand(a, home)
	if !ok || !strings.HasPrefix(a, filepath.Join(home, ".ssh")+"/") {
		return "", false
	}
	return a, true
}

// expand expands a leading ~/ or %d/ and returns the clean absolute
// path; false for a relative path or one with another token.
func expand(a, home string) (string, bool) {
	switch {
	case strings.HasPrefix(a, "~/"):
		a = home + a[1:]
	case strings.HasPrefix(a, "%d/"):
		a = home + a[2:]
	}
	if !filepath.IsAbs(a) || strings.ContainsAny(a, "%$") {
		return "", false
	}
	return filepath.Clean(a), true
}

// PublicKey reports whether b is one public key as ssh writes it (a
// NAME.pub file: "TYPE BASE64 [COMMENT]"), and nothing that could be a
// private one: what may be placed at an IdentityFile's path.
func PublicKey(b []byte) bool {
	s := strings.TrimSpace(string(b))
	if s == "" || strings.ContainsAny(s, "\n\r") || strings.Contains(s, "PRIVATE") {
		return false
	}
	f := strings.Fields(s)
	if len(f) < 2 {
		return false
	}
	t := f[0]
	if !strings.HasPrefix(t, "ssh-") && !strings.HasPrefix(t, "ecdsa-") && !strings.HasPrefix(t, "sk-") {
		return false
	}
	for _, r := range f[1] {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '/' || r == '=') {
			return false
		}
	}
	return len(f[1]) >= 16
}

// HostNames maps each Host alias of config to the HostName its block
// sets: an alias is a Host line's pattern without wildcards or negation,
// and the first HostName of its block counts (ssh takes the first value
// it obtains). A Match block ends a Host block; aliases whose block sets
// no HostName, or one with a %-token, are left out. What ssh would do
// with it is not evaluated further: this names a host, it decides
// nothing.
func HostNames(config []byte) map[string]string {
	out := map[string]string{}
	var block []string
	for _, line := range strings.Split(string(config), "\n") {
		key, args := split(strings.TrimRight(line, "\r"))
		switch strings.ToLower(key) {
		case "host":
			block = block[:0]
			for _, a := range args {
				if a != "" && !strings.ContainsAny(a, "*?!%") {
					block = append(block, strings.ToLower(a))
				}
			}
		case "match":
			block = block[:0]
		case "hostname":
			if len(args) != 1 || strings.Contains(args[0], "%") {
				continue
			}
			for _, a := range block {
				if _, ok := out[a]; !ok {
					out[a] = strings.ToLower(args[0])
				}
			}
			block = block[:0] // the block's first HostName counts
		}
	}
	return out
}

// GlobalIdentityAgent is the IdentityAgent config sets for every host:
// one before the first Host or Match line, or in a `Host *` block, the
// first of them (ssh takes the first value it obtains). It is "" where
// there is none, and where the value leaves the agent to SSH_AUTH_SOCK
// ("SSH_AUTH_SOCK", "$SSH_AUTH_SOCK", "${SSH_AUTH_SOCK}"), turns it off
// ("none"), or holds a token only ssh can expand (%d and ~/ are
// expanded with home).
func GlobalIdentityAgent(config []byte, home string) string {
	global := true
	for _, line := range strings.Split(string(config), "\n") {
		key, args := split(strings.TrimRight(line, "\r"))
		switch strings.ToLower(key) {
		case "host":
			global = len(args) == 1 && args[0] == "*"
		case "match":
			global = len(args) == 1 && strings.EqualFold(args[0], "all")
		case "identityagent":
			if !global || len(args) != 1 {
				continue
			}
			switch a := args[0]; {
			case strings.EqualFold(a, "none"), a == "SSH_AUTH_SOCK", a == "$SSH_AUTH_SOCK", a == "${SSH_AUTH_SOCK}":
				return ""
			default:
				p, ok := expand(a, home)
				if !ok {
					return ""
				}
				return p
			}
		}
	}
	return ""
}
