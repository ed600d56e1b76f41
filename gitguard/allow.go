package gitguard

import (
	"strings"
	"sync"
)

// The allowlist for config the agent writes itself (a repository it made
// with git init or git clone, a worktree's config.worktree): keys that select
// data, never a program, a hook, another file to read, or another repository.
// What git init, git clone, git remote add, git branch --set-upstream-to,
// git submodule add, git sparse-checkout and git config user.* write is in
// it, so those keep working; everything else is dropped from the file.
//
// Not in it, on purpose (each runs code or redirects git): core.fsmonitor,
// core.hooksPath, core.editor, core.pager, core.sshCommand, core.askPass,
// core.gitProxy, core.alternateRefsCommand, core.attributesFile,
// core.worktree (outside a submodule), include.* and includeIf.* (a whole
// other config), alias.* ("!cmd"), filter.*, diff.*, merge.*, credential.*,
// gpg.*, sequence.editor, pager.*, interactive.diffFilter, remote.*.uploadpack
// and .receivepack (run locally for local and ssh remotes), remote.*.vcs and
// remote.*.proxy, protocol.* (protocol.ext.allow), http.*, lfs.*,
// uploadpack.*, receive.*, init.templateDir, submodule.*.update = !cmd.

type keyRule func(sub string, hasSub bool, value string, noValue bool) bool

func plain(sub string, hasSub bool, _ string, _ bool) bool { return !hasSub }
func named(sub string, hasSub bool, _ string, _ bool) bool { return hasSub }

// url refuses every "<transport>::<address>" URL: git runs the helper
// git-remote-<transport> with it (ext:: runs the address as a command, and
// git refuses only ext:: by default; an installed helper such as gcrypt::
// runs programs of its own). Other URLs (https, ssh, paths) run nothing
// the repository's config chooses.
func url(sub string, hasSub bool, v string, noValue bool) bool {
	return hasSub && !noValue && !transportHelper(strings.TrimLeft(v, " \t"))
}

// transportHelper is transport_get's test (git 2.39 transport.c): the URL
// starts with [A-Za-z0-9][A-Za-z0-9+.-]* followed by "::".
func transportHelper(u string) bool {
	i := 0
	for i < len(u) {
		c := u[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '+' && c != '-' && c != '.') {
			break
		}
		i++
	}
	return i > 0 && strings.HasPrefix(u[i:], "::")
}

// allowedOnce builds allowedKeys at the first Safe: as a package-level map
// literal it was built in the package init of every jail process (issue 16).
var (
	allowedOnce sync.Once
	allowedKeys map[string]map[string]keyRule
)

// allowed is the table of config keys an agent may write, by section.
func allowed() map[string]map[string]keyRule {
	allowedOnce.Do(func() {
		allowedKeys = map[string]map[string]keyRule{
			"core": {
				"repositoryformatversion": plain, "filemode": plain, "bare": plain,
				"logallrefupdates": plain, "ignorecase": plain, "precomposeunicode": plain,
				"symlinks": plain, "autocrlf": plain, "eol": plain, "safecrlf": plain,
				"quotepath": plain, "sharedrepository": plain, "checkstat": plain,
				"trustctime": plain, "abbrev": plain, "compression": plain,
				"loosecompression": plain, "sparsecheckout": plain, "sparsecheckoutcone": plain,
				"untrackedcache": plain, "splitindex": plain, "commitgraph": plain,
				"multipackindex": plain,
			},
			// Repository format extensions: data formats, no program.
			// worktreeConfig makes git read config.worktree, which is judged too.
			"extensions": {
				"objectformat": plain, "worktreeconfig": plain, "partialclone": plain,
				"preciousobjects": plain, "noop": plain, "refstorage": plain,
			},
			"remote": {
				"url": url, "pushurl": url, "fetch": named, "push": named, "mirror": named,
				"tagopt": named, "prune": named, "prunetags": named, "promisor": named,
				"partialclonefilter": named, "skipdefaultupdate": named, "skipfetchall": named,
			},
			"branch": {
				"remote": named, "pushremote": named, "merge": named, "rebase": named,
				"description": named,
			},
			"user":  {"name": plain, "email": plain},
			"init":  {"defaultbranch": plain},
			"pull":  {"rebase": plain, "ff": plain},
			"push":  {"default": plain, "autosetupremote": plain, "followtags": plain},
			"fetch": {"prune": plain, "prunetags": plain},
			"gc":    {"auto": plain, "autodetach": plain, "autopacklimit": plain},
			"color": {"ui": plain},
			"submodule": {
				"url": url, "active": named, "branch": named, "ignore": named,
				"shallow": named, "fetchrecursesubmodules": named,
				// submodule.NAME.update = !command runs the command.
				"update": func(sub string, hasSub bool, v string, noValue bool) bool {
					switch strings.ToLower(v) {
					case "checkout", "rebase", "merge", "none":
						return hasSub
					}
					return false
				},
			},
		}
	})
	return allowedKeys
}

// Safe reports whether a config entry the agent wrote may stay: it cannot
// make git run a program, read another file, or use another repository.
// submodule: the git dir is a submodule's, whose core.worktree points back
// at its checkout (git submodule add writes it).
func Safe(e Entry, submodule bool) bool {
	// advice.*: booleans that silence hints.
	if e.Section == "advice" && !e.HasSub && validName(e.Key) {
		return true
	}
	if submodule && e.Section == "core" && !e.HasSub && e.Key == "worktree" && !e.NoValue {
		return true
	}
	keys, ok := allowed()[e.Section]
	if !ok {
		return false
	}
	rule, ok := keys[e.Key]
	return ok && rule(e.Subsection, e.HasSub, e.Value, e.NoValue)
}

// Sanitize judges a config file the agent wrote. ok: the file may stay as it
// is (strict syntax, every key Safe). Otherwise out is what may replace it:
// the Safe entries, written in git's plain form (so that git reads exactly
// them, whatever the original's syntax), and dropped names the others.
func Sanitize(data []byte, submodule bool) (out []byte, dropped []string, ok bool) {
	if es, err := ParseConfigStrict(data); err == nil {
		all := true
		for _, e := range es {
			if !Safe(e, submodule) {
				all = false
				break
			}
		}
		if all {
			return data, nil, true
		}
	}
	es, err := ParseConfig(data)
	var keep []Entry
	for _, e := range es {
		if Safe(e, submodule) {
			keep = append(keep, e)
		} else {
			dropped = append(dropped, e.Name())
		}
	}
	if err != nil {
		dropped = append(dropped, "(the rest: "+err.Error()+")")
	}
	out, bad := FormatConfig(keep)
	for _, e := range bad {
		dropped = append(dropped, e.Name())
	}
	return out, dropped, false
}
