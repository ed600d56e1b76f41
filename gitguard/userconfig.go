package gitguard

import (
	"path/filepath"
	"strings"
)

// UserConfigFiles returns the config files git reads before a repository's
// own, lowest priority first, for the user whose environment env is: the
// system file (unless GIT_CONFIG_NOSYSTEM) and the global ones
// (GIT_CONFIG_GLOBAL, or $XDG_CONFIG_HOME/git/config and ~/.gitconfig).
// Their core.hooksPath, includes and program-valued keys apply to every
// repository, including the ones in the sandbox's trees.
func UserConfigFiles(env []string) []string {
	get := func(name string) string {
		v := ""
		for _, kv := range env {
			if k, val, ok := strings.Cut(kv, "="); ok && k == name {
				v = val // the last one wins, as for exec
			}
		}
		return v
	}
	var out []string
	if !gitBool(get("GIT_CONFIG_NOSYSTEM")) {
		if v := get("GIT_CONFIG_SYSTEM"); v != "" {
			out = append(out, v)
		} else {
			out = append(out, "/etc/gitconfig")
		}
	}
	if v := get("GIT_CONFIG_GLOBAL"); v != "" {
		return append(out, v)
	}
	home := get("HOME")
	xdg := get("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	if xdg != "" {
		out = append(out, filepath.Join(xdg, "git", "config"))
	}
	if home != "" {
		out = append(out, filepath.Join(home, ".gitconfig"))
	}
	return out
}

// gitBool is git_parse_maybe_bool for environment values.
func gitBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// programKey reports whether e names a program git runs (its value is a
// command line).
func programKey(e Entry) bool {
	k := e.Key
	switch e.Section {
	case "core":
		return !e.HasSub && (k == "fsmonitor" || k == "editor" || k == "pager" || k == "sshcommand" ||
			k == "askpass" || k == "gitproxy" || k == "alternaterefscommand")
	case "sequence":
		return k == "editor"
	case "diff":
		return (!e.HasSub && k == "external") || (e.HasSub && (k == "command" || k == "textconv"))
	case "filter":
		return e.HasSub && (k == "clean" || k == "smudge" || k == "process")
	case "merge":
		return e.HasSub && k == "driver"
	case "credential":
		return k == "helper"
	case "gpg":
		// gpg.program, gpg.<format>.program; gpg.ssh.defaultKeyCommand
		// runs to find the signing key.
		return k == "program" || k == "defaultkeycommand"
	case "alias":
		return strings.HasPrefix(strings.TrimSpace(e.Value), "!")
	case "pager":
		return true
	case "interactive":
		return k == "difffilter"
	case "remote":
		return e.HasSub && (k == "uploadpack" || k == "receivepack")
	case "difftool", "mergetool", "man", "browser":
		return e.HasSub && (k == "cmd" || k == "path")
	case "web":
		return k == "browser"
	case "sendemail":
		return k == "sendmailcmd" || k == "smtpserver"
	case "uploadpack":
		return k == "packobjectshook"
	}
	return false
}

// pathTokens returns the words of a command line that look like paths
// (contain a '/'), the program first when it is one. first reports whether
// the first token is among them.
func pathTokens(cmd string) (toks []string, first bool) {
	cmd = strings.TrimPrefix(strings.TrimSpace(cmd), "!")
	f := strings.FieldsFunc(cmd, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || strings.ContainsRune(";&|()<>'\"`=", r)
	})
	for i, w := range f {
		if len(toks) >= 64 {
			break
		}
		if strings.Contains(w, "/") && !strings.Contains(w, "://") && !strings.ContainsAny(w, "$*?[") {
			toks = append(toks, w)
			if i == 0 {
				first = true
			}
		}
	}
	return toks, first
}
