package gitguard

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// UserConfigFiles returns the config files git reads before a repository's
// own, lowest priority first, for the user whose environment env is: the
// system file (unless GIT_CONFIG_NOSYSTEM) and the global ones
// (GIT_CONFIG_GLOBAL, or $XDG_CONFIG_HOME/git/config and ~/.gitconfig).
// Their core.hooksPath, includes and program-valued keys apply to every
// repository, including the ones in the sandbox's trees.
//
// A variable set twice in env is read both ways (envReadings): git run
// directly takes the first, git run from a shell the last.
func UserConfigFiles(env []string) []string {
	var out []string
	for _, vars := range envReadings(env, func(k string) bool {
		return k == "HOME" || k == "XDG_CONFIG_HOME" || strings.HasPrefix(k, "GIT_CONFIG_")
	}) {
		for _, f := range userConfigFiles(func(k string) string { return vars[k] }) {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

func userConfigFiles(get func(string) string) []string {
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

// EnvConfig returns the configuration git takes from env, above every
// file: GIT_CONFIG_COUNT's GIT_CONFIG_KEY_n/GIT_CONFIG_VALUE_n pairs and
// GIT_CONFIG_PARAMETERS (`git -c`'s, exported by some users). Set in the
// environment jail and the user's later shell share, a core.hooksPath,
// include or program-valued key there applies to every repository as the
// global config's do (session 18). Malformed entries git itself dies on are
// read as far as they parse (reading more only protects more). A variable
// set twice is read both ways (envReadings).
func EnvConfig(env []string) []Entry {
	var out []Entry
	for _, vars := range envReadings(env, func(k string) bool { return strings.HasPrefix(k, "GIT_CONFIG_") }) {
		out = append(out, envConfig(vars)...)
	}
	return out
}

// envReadings returns env's variables that want names, as the programs
// that may run the user's git later read them: one map when no wanted
// variable is set twice, else two. git run directly reads environ with
// getenv, which takes a variable's FIRST value (real git 2.39: a repeated
// GIT_CONFIG_KEY_0, GIT_CONFIG_VALUE_0, GIT_CONFIG_COUNT,
// GIT_CONFIG_PARAMETERS, HOME or GIT_CONFIG_GLOBAL: the first applies);
// bash, dash and zsh import environ in order, so git run from the user's
// shell gets the LAST. Reading only one let the other's core.hooksPath
// apply unread (session 19); every value read only protects more.
func envReadings(env []string, want func(string) bool) []map[string]string {
	first, last := map[string]string{}, map[string]string{}
	twice := false
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !want(k) {
			continue
		}
		if old, seen := first[k]; !seen {
			first[k] = v
		} else if old != v {
			twice = true
		}
		last[k] = v
	}
	if !twice {
		return []map[string]string{first}
	}
	return []map[string]string{first, last}
}

// envConfig reads the configuration from one reading of the environment.
func envConfig(vars map[string]string) []Entry {
	var out []Entry
	add := func(name, value string, noValue bool) {
		// git_config_parse_key: the section before the first dot and the
		// key after the last are case-insensitive, the subsection between
		// them is not; a name without a section or a key is refused (git
		// dies on it).
		sec, sub, hasSub, key := splitName(name)
		if key == "" || sec == "" && !hasSub {
			return
		}
		out = append(out, Entry{Section: strings.ToLower(sec), HasSub: hasSub, Subsection: sub, Key: strings.ToLower(key), Value: value, NoValue: noValue})
	}
	if n, err := strconv.Atoi(strings.TrimSpace(vars["GIT_CONFIG_COUNT"])); err == nil {
		// No fixed cap: git reads every pair up to INT_MAX, so a
		// core.hooksPath past a cap would apply unread (review18f). The
		// loop is bounded by env all the same: git stops at the first
		// missing pair (it dies there), and each pair is two variables.
		for i := 0; i < n && i <= len(vars)/2; i++ {
			k, okk := vars["GIT_CONFIG_KEY_"+strconv.Itoa(i)]
			v, okv := vars["GIT_CONFIG_VALUE_"+strconv.Itoa(i)]
			if !okk || !okv {
				break
			}
			add(k, v, false)
		}
	}
	// GIT_CONFIG_PARAMETERS: shell-single-quoted words separated by
	// spaces, each 'key'='value', 'key' (no value) or, before git 2.31,
	// 'key=value' (parse_config_env_list).
	rest := vars["GIT_CONFIG_PARAMETERS"]
	for {
		rest = strings.TrimLeft(rest, " \t\n\r\v\f")
		if rest == "" {
			break
		}
		word, r, ok := sqWord(rest)
		if !ok {
			break
		}
		rest = r
		if strings.HasPrefix(rest, "=") {
			rest = rest[1:]
			if strings.HasPrefix(rest, "'") {
				v, r, ok := sqWord(rest)
				if !ok {
					break
				}
				rest = r
				add(word, v, false)
			} else {
				add(word, "", true)
			}
			continue
		}
		if k, v, ok := strings.Cut(word, "="); ok {
			add(k, v, false)
		} else {
			add(word, "", true)
		}
	}
	return out
}

// sqWord reads one word git's sq_quote wrote at the start of s ('...',
// with '\” and '\!' for a quote and a bang): the word and what follows.
func sqWord(s string) (word, rest string, ok bool) {
	if !strings.HasPrefix(s, "'") {
		return "", s, false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			b.WriteByte(s[i])
			continue
		}
		if i+3 < len(s) && s[i+1] == '\\' && (s[i+2] == '\'' || s[i+2] == '!') && s[i+3] == '\'' {
			b.WriteByte(s[i+2])
			i += 3
			continue
		}
		return b.String(), s[i+1:], true
	}
	return "", s, false
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
