package agentcfg

import (
	"path/filepath"
	"strings"
	"unicode"
)

// NamedFile is a file that the host's version of a guarded file makes the
// agent run outside jail: a hook script, a status line script, an MCP
// server's program or script, a helper (apiKeyHelper), a file an env
// variable makes a program load (BASH_ENV, NODE_OPTIONS=--require).
type NamedFile struct {
	Path string `json:"path"`
	// Key is the protected key (display form) whose value names it.
	Key string `json:"key"`
}

// dataKeys are protected keys whose values are data (approvals, trust,
// sandbox settings, URL lists), not command lines: a path there
// ("Edit(src/main.go)") is a file the user lets the agent work on, which
// must stay writable.
func dataKey(k string) bool {
	switch k {
	case "permissions", "sandbox", "allowedHttpHookUrls", "httpHookAllowedEnvVars", "sshConfigs",
		"projects.*.allowedTools", "projects.*.hasTrustDialogAccepted",
		"sandbox_mode", "sandbox_workspace_write", "approval_policy", "default_permissions", "projects.*.trust_level",
		"tools.sandboxAllowedPaths", "tools.sandboxNetworkAccess", "tools.allowed", "tools.core", "tools.confirmationRequired",
		"security", "trustedFolders", "allowedUrls", "deniedUrls", "*":
		return true
	}
	return false
}

// maxNamed bounds what one file can name.
const maxNamed = 256

// Named returns the files that the command-valued protected keys of data
// (the host's version of t's file, at start) name by path: every word of a
// command line, an argument list or an environment value that is a path,
// with ~/, $HOME and ${HOME} made home, $CLAUDE_PROJECT_DIR the project
// (the workspace for a home-scoped file) and a relative path taken from the
// project. The guard keeps those keys as on the host, but the files they
// name lie in the same writable state directory (~/.claude/statusline.sh,
// ~/.claude/hooks/, .claude/hooks/ of the project): rewritten by the agent,
// the host's next run of the agent outside jail runs them. The caller makes
// the ones inside a writable tree read-only. A file jail cannot parse
// names nothing here (the guard puts the whole host version back anyway).
func Named(t Target, data []byte, ctx Context, home string) []NamedFile {
	project := ctx.Workspace
	if t.File.Scope == Project {
		project = strings.TrimSuffix(t.Path, "/"+t.File.Path)
	}
	var out []NamedFile
	seen := map[string]bool{}
	add := func(key string, v any) {
		walkStrings(v, func(s string) {
			for _, p := range commandPaths(s, home, project) {
				if len(out) < maxNamed && !seen[p] {
					seen[p] = true
					out = append(out, NamedFile{Path: p, Key: key})
				}
			}
		})
	}
	if t.File.Format == Whole {
		// Not merged key by key: every command in it counts.
		d, err := parse(JSON, data, nil)
		if err != nil {
			return nil
		}
		v, _ := d.lookup(nil)
		add(t.File.Path, v)
		return out
	}
	d, err := parse(t.File.Format, data, trieFor(t.File, ctx))
	if err != nil {
		return nil
	}
	for _, pp := range protectedPaths(t.File, ctx, d) {
		isData := false
		for _, k := range t.File.Keys {
			if dataKey(k.Path) && matches(splitPath(k.Path), pp.path) {
				isData = true
			}
		}
		if isData {
			continue
		}
		if v, ok := d.lookup(pp.path); ok {
			add(Display(pp.path), v)
		}
	}
	return out
}

// walkStrings calls f with every string in v (a decoded document value).
func walkStrings(v any, f func(string)) {
	switch x := v.(type) {
	case string:
		f(x)
	case []any:
		for _, e := range x {
			walkStrings(e, f)
		}
	case map[string]any:
		for _, e := range x {
			walkStrings(e, f)
		}
	case []map[string]any: // TOML arrays of tables
		for _, e := range x {
			walkStrings(e, f)
		}
	}
}

// commandPaths returns the words of a command line s that are paths, made
// absolute and clean. Quotes are dropped first (a shell joins `"$X"/a` into
// one word); a word with another variable, a glob or a URL is skipped.
func commandPaths(s, home, project string) []string {
	s = strings.NewReplacer(`"`, "", `'`, "", "${HOME}", "$HOME", "${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR").Replace(s)
	var out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(";&|()<>`=,:", r)
	}) {
		switch {
		case strings.HasPrefix(w, "~/"):
			w = join(home, w[2:])
		case strings.HasPrefix(w, "$HOME/"):
			w = join(home, w[len("$HOME/"):])
		case strings.HasPrefix(w, "$CLAUDE_PROJECT_DIR/"):
			w = join(project, w[len("$CLAUDE_PROJECT_DIR/"):])
		case filepath.IsAbs(w):
		case strings.Contains(w, "/"):
			w = join(project, w)
		default:
			continue // a program found on PATH, a flag, a word
		}
		if w == "" || strings.ContainsAny(w, "$*?[~") {
			continue
		}
		out = append(out, filepath.Clean(w))
	}
	return out
}

// join is filepath.Join for a base that may be unknown ("": no path).
func join(base, rel string) string {
	if base == "" {
		return ""
	}
	return filepath.Join(base, rel)
}
