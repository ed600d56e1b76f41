package agentcfg

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
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
	// Dir: a directory that programs load code from because the
	// configuration puts it on a load path (PATH, PYTHONPATH, NODE_PATH:
	// loadPathVars), in an env map or an assignment in a command line.
	// Everything in it counts, not one file: the caller protects it whole.
	Dir bool `json:"dir,omitempty"`
	// Interp is the interpreter (its base name: python3, node, bash, npx)
	// whose script the path is, when the line names it as one: the first
	// word after the interpreter and its flags. It runs whatever the name
	// (`python3 ~/.claude/noext` is python without a .py or a #! line),
	// and a directory too (`node ~/.claude/mcp/srv` runs its package.json
	// "main" or index.js, `python3 DIR` its __main__.py, `npx DIR` its
	// bin): the caller judges the script by it.
	Interp string `json:"interp,omitempty"`
	// Cwd: a directory the line moves to (cd, pushd, uv's --directory)
	// before what it runs: `cd ~/.claude/hooks && make` runs the
	// Makefile there, `npm test` its package.json, `uv run` its
	// pyproject.toml, a script its neighbours by relative name. What
	// runs there reads what the directory holds, whatever the program:
	// the caller judges it as a script's own directory.
	Cwd bool `json:"cwd,omitempty"`
}

// dataKeys are protected keys whose values are data (approvals, trust,
// sandbox settings, URL lists), not command lines: a path there
// ("Edit(src/main.go)") is a file the user lets the agent work on, which
// must stay writable.
func dataKey(k string) bool {
	switch k {
	case "permissions", "sandbox", "allowedHttpHookUrls", "httpHookAllowedEnvVars", "sshConfigs",
		// Directories the user chose for the agent's own writes (the host's
		// memories and plans there stay writable inside: guarding the key
		// keeps the agent from moving them), URLs, switches and versions.
		"autoMemoryDirectory", "plansDirectory", "worktree", "xaaIdp", "forceLoginGatewayUrl", "forceLoginMethod",
		"gatewayInternalNetworks", "remoteTools", "remoteControl", "crossSessionInbound", "isolatePeerMachines",
		"channelsEnabled", "allowedChannelPlugins", "allowAllClaudeAiMcps", "modelCatalogUrl", "modelCatalogPublicKey",
		"downloadsMirrorUrl", "minimumVersion", "requiredMinimumVersion", "requiredMaximumVersion",
		"projects.*.allowedTools", "projects.*.hasTrustDialogAccepted", "projects.*.hasClaudeMdExternalIncludesApproved",
		"sandbox_mode", "sandbox_workspace_write", "approval_policy", "default_permissions", "projects.*.trust_level",
		"tools.sandboxAllowedPaths", "tools.sandboxNetworkAccess", "tools.allowed", "tools.core", "tools.confirmationRequired",
		"security", "trustedFolders", "allowedUrls", "deniedUrls", "*",
		// Qwen Code's approvals, switches, URLs and names (and their v1
		// names).
		"tools.exclude", "tools.approvalMode", "tools.autoAccept", "tools.sandboxImage", "slashCommands", "privacy",
		"modelProviders", "proxy", "extensions", "ide.enabled", "general.enableAutoUpdate", "model.enableOpenAILogging",
		"coreTools", "allowedTools", "excludeTools", "approvalMode", "autoAccept", "allowMCPServers", "excludeMCPServers",
		"folderTrust", "folderTrustFeature", "usageStatisticsEnabled", "enableOpenAILogging", "enforcedAuthType",
		"useExternalAuth", "tavilyApiKey", "excludedProjectEnvVars", "ideMode":
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
	type seenKey struct {
		path string
		dir  bool
	}
	seen := map[seenKey]int{}
	emit := func(n NamedFile) {
		k := seenKey{n.Path, n.Dir}
		if i, ok := seen[k]; ok {
			// Named as a script in one line and as a plain word in
			// another: the script's interpreter counts.
			if out[i].Interp == "" {
				out[i].Interp = n.Interp
			}
			// A cd's directory named as a plain word elsewhere
			// (`git -C D`) is still run from.
			out[i].Cwd = out[i].Cwd || n.Cwd
			return
		}
		if len(out) < maxNamed {
			seen[k] = len(out)
			out = append(out, n)
		}
	}
	add := func(key string, v any) {
		// The key's own name counts (Codex's js_repl_node_module_dirs).
		walkStrings(v, key[strings.LastIndexByte(key, '.')+1:], func(name, s string) {
			// Load-path directories first: the same path is a word of
			// the line too, and the caller takes the first of them.
			if loadPathVars[name] {
				for _, p := range loadPaths(s, home, project) {
					emit(NamedFile{Path: p, Key: key, Dir: true})
				}
			}
			for _, p := range assignedLoadPaths(s, home, project) {
				emit(NamedFile{Path: p, Key: key, Dir: true})
			}
			for _, c := range commandScripts(s, home, project) {
				emit(NamedFile{Path: c.path, Key: key, Interp: c.interp, Cwd: c.cwd})
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

// walkStrings calls f with every string in v (a decoded document value),
// and with the command line an argument list makes: a list of strings
// (Codex's notify = ["python3", "notify.py"]) joined, and an MCP server's
// command joined with its args (its script named without a slash is
// found only there, after the interpreter).
//
// name is the key the string sits under (an environment variable's name
// in an env map; a list's elements have the list's key), "" at the top.
func walkStrings(v any, name string, f func(name, s string)) {
	switch x := v.(type) {
	case string:
		f(name, x)
	case []any:
		if line, ok := argv(x); ok && len(x) > 1 {
			f("", line)
		}
		for _, e := range x {
			walkStrings(e, name, f)
		}
	case map[string]any:
		if c, ok := x["command"].(string); ok {
			if a, ok := x["args"].([]any); ok {
				if line, ok := argv(a); ok {
					f("", c+" "+line)
				}
			}
		}
		for k, e := range x {
			walkStrings(e, k, f)
		}
	case []map[string]any: // TOML arrays of tables
		for _, e := range x {
			walkStrings(e, name, f)
		}
	}
}

// loadPathVars are the environment variables whose value lists
// directories that programs load code from: executables found by name
// (PATH: a hook's `python3`, `node`, `git` is the first one found there),
// modules and packages (PYTHONPATH, NODE_PATH, PERL5LIB, RUBYLIB, ...),
// shared libraries, a shell's startup files (ZDOTDIR), compiled code
// (PYTHONPYCACHEPREFIX), the configuration tools read (XDG_CONFIG_HOME:
// git's config names hooks). Codex's js_repl_node_module_dirs is a
// configuration key of the same kind. A variable that names a data
// directory (an MCP server's store) is not here: that directory stays
// writable.
var loadPathVars = map[string]bool{
	"PATH": true, "PYTHONPATH": true, "PYTHONHOME": true, "PYTHONUSERBASE": true, "PYTHONPYCACHEPREFIX": true,
	"NODE_PATH": true, "PERL5LIB": true, "PERLLIB": true, "RUBYLIB": true, "GEM_PATH": true, "GEM_HOME": true,
	"LD_LIBRARY_PATH": true, "CLASSPATH": true, "R_LIBS": true, "R_LIBS_USER": true, "LUA_PATH": true, "LUA_CPATH": true,
	"ZDOTDIR": true, "XDG_CONFIG_HOME": true, "GOPATH": true, "GOBIN": true, "CARGO_HOME": true,
	"NPM_CONFIG_PREFIX": true, "npm_config_prefix": true, "BUN_INSTALL": true, "DENO_INSTALL_ROOT": true,
	"js_repl_node_module_dirs": true,
}

// loadPaths returns the directories that the value v of a load-path
// variable lists (':'-separated; ';' too, LUA_PATH's), made absolute as
// commandPaths makes a path: ~/, $HOME, ${HOME} the home,
// $CLAUDE_PROJECT_DIR the project, a relative entry taken from the
// project. An entry with another variable or a pattern (LUA_PATH's
// "?.lua") is left out, but its directory is taken where the pattern
// is the last element.
func loadPaths(v, home, project string) []string {
	v = strings.NewReplacer("${HOME}", "$HOME", "${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR", `"`, "", `'`, "").Replace(v)
	var out []string
	for _, e := range strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ';' || unicode.IsSpace(r) }) {
		if i := strings.LastIndexByte(e, '/'); i > 0 && strings.ContainsAny(e[i:], "?*") {
			e = e[:i] // LUA_PATH's ~/.claude/lua/?.lua: the directory
		}
		var abs string
		anchoredAbs, anchoredOK := anchored(e, home, project)
		switch {
		case anchoredOK:
			abs = anchoredAbs
		case strings.ContainsAny(e, "$~"):
			continue // $PATH, another variable: not a directory of the file's
		case filepath.IsAbs(e):
			abs = clean(e)
		default:
			abs = join(project, e)
		}
		if abs != "" && !strings.ContainsAny(abs, "$*?[") {
			out = append(out, abs)
		}
	}
	return out
}

// assignedLoadPaths returns the directories that the assignments of
// load-path variables in command line s list: `PATH=~/.claude/bin:$PATH
// python3 h.py`, `export PYTHONPATH=...; ...`, `env NODE_PATH=... node`.
func assignedLoadPaths(s, home, project string) []string {
	if !strings.Contains(s, "=") {
		return nil
	}
	var out []string
	flat := strings.NewReplacer(`"`, "", `'`, "").Replace(s)
	for _, w := range strings.FieldsFunc(flat, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(";&|()<>`", r) }) {
		if name, v, ok := strings.Cut(w, "="); ok && loadPathVars[name] {
			out = append(out, loadPaths(v, home, project)...)
		}
	}
	return out
}

// argv joins a list of strings with spaces; ok is false if an element is
// not a string.
func argv(xs []any) (string, bool) {
	ss := make([]string, 0, len(xs))
	for _, e := range xs {
		s, ok := e.(string)
		if !ok {
			return "", false
		}
		ss = append(ss, s)
	}
	return strings.Join(ss, " "), true
}

// commandPaths returns the words of a command line s that are paths, made
// absolute and clean. Quotes are dropped first (a shell joins `"$X"/a` into
// one word); a word with another variable, a glob or a URL is skipped. A
// relative path is taken from the project and, after a `cd DIR` (or
// pushd) in the line, from DIR too: `cd ~/.claude/hooks && ./pre.sh` runs
// ~/.claude/hooks/pre.sh (both are returned: a cd in a subshell does not
// move the rest). The first word after an interpreter (and its flags) is
// its script even without a slash: `python3 hook.py`, `bash -e x.sh`,
// `node x.js` run hook.py, x.sh, x.js of the directory they start in.
func commandPaths(s, home, project string) []string {
	var out []string
	for _, c := range commandScripts(s, home, project) {
		out = append(out, c.path)
	}
	return out
}

// cmdPath is a path of a command line (commandScripts); interp is the
// interpreter whose script it is, "" for any other word; cwd: a
// directory the line moves to (NamedFile.Cwd).
type cmdPath struct {
	path, interp string
	cwd          bool
}

// commandScripts is commandPaths with, for each path, the interpreter
// whose script it is (NamedFile.Interp).
func commandScripts(s, home, project string) []cmdPath {
	s = strings.NewReplacer("${HOME}", "$HOME", "${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR").Replace(s)
	if x := expandAssigned(s); x != s {
		// Why: `D=~/.claude/hooks; cd "$D" && make` moves where `cd
		// ~/.claude/hooks` does (review16c: a variable hid the
		// directory). Both forms are scanned: more is safe.
		return append(commandScripts1(s, home, project), commandScripts1(x, home, project)...)
	}
	return commandScripts1(s, home, project)
}

// maxAssigned bounds the variables expandAssigned takes from one line.
const maxAssigned = 32

// assignment finds a shell variable assignment (`D=...`, `export
// D="..."`, `local D='...'`) and its value (expandAssigned).
var assignment = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[\s;&|(])([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|'[^']*'|[^\s;&|()'"]*)`)
})

// expandAssigned returns s with each $NAME and ${NAME} of a variable
// assigned in s replaced by the value assigned (quotes taken away; the
// last assignment of a name wins; one pass: a value's own variables stay
// as written, $HOME anchored later). No other expansion: a value computed
// at run time ($(...), `...`) is left as the text, which names no
// directory.
func expandAssigned(s string) string {
	if !strings.Contains(s, "=") || !strings.Contains(s, "$") {
		return s
	}
	vals := map[string]string{}
	for _, m := range assignment().FindAllStringSubmatch(s, maxAssigned) {
		v := m[2]
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
			v = v[1 : len(v)-1]
		}
		vals[m[1]] = v
	}
	if len(vals) == 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			b.WriteByte(s[i])
			continue
		}
		name, end := "", i+1
		if end < len(s) && s[end] == '{' {
			if j := strings.IndexByte(s[end:], '}'); j > 0 {
				name, end = s[end+1:end+j], end+j+1
			}
		} else {
			for end < len(s) && (s[end] == '_' || s[end] >= 'a' && s[end] <= 'z' || s[end] >= 'A' && s[end] <= 'Z' || end > i+1 && s[end] >= '0' && s[end] <= '9') {
				end++
			}
			name = s[i+1 : end]
		}
		v, ok := vals[name]
		if !ok {
			b.WriteByte(s[i])
			continue
		}
		b.WriteString(v)
		i = end - 1
	}
	return b.String()
}

// commandScripts1 is commandScripts over one form of the line.
func commandScripts1(s, home, project string) []cmdPath {
	// A flag's value given with '=' (`deno run --allow-write=~/.claude/data
	// x.ts`, `node --env-file=.env h.js`) is that flag's value, not the
	// script: the mark keeps it one after isSep has split at the '='.
	s = flagEq().ReplaceAllString(s, "${1}${2} "+flagValueMark+" ")
	flat := strings.NewReplacer(`"`, "", `'`, "").Replace(s)
	words := strings.FieldsFunc(flat, isSep)
	out := scanWords(words, home, project, nil)
	out = append(out, packageDirs(words, home, project)...)
	out = append(out, makeDirs(words, home, project)...)
	if strings.ContainsAny(s, `"'\`) {
		// Quoted or escaped spaces ("$HOME/My Scripts/x.sh", My\ Scripts):
		// the words a shell makes, too, where they hold a space (the rest
		// were found above; a quoted shell command, bash -c "a && b", is a
		// word with shell syntax, left out).
		out = append(out, scanWords(shellWords(s), home, project, func(w string) bool {
			return strings.ContainsFunc(w, unicode.IsSpace) && !strings.ContainsAny(w, "&;|<>()`")
		})...)
	}
	return out
}

// packageManager says whether name is a package manager: those run the scripts of a package.json (and the code they
// start) in the directory a flag names: `npm --prefix DIR run start`,
// `pnpm -C DIR start`, `yarn --cwd DIR start`, `bun --cwd DIR run x`.
func packageManager(name string) bool {
	return PackageManager(name)
}

// PackageManager is packageManager, for the sandbox: a package manager
// given a directory (NamedFile.Interp) reads its configuration there
// (.npmrc, .yarnrc.yml) before it runs the package.
func PackageManager(name string) bool {
	switch name {
	case "npm", "pnpm", "yarn", "bun":
		return true
	}
	return false
}

// packageDirs returns the directories that a package manager in words
// (commandScripts') is told to run a package from, with the manager as
// their interpreter: the package's code runs, so the directory is a
// script's own. A word after the line's first package manager counts.
func packageDirs(words []string, home, project string) []cmdPath {
	var out []cmdPath
	pm := ""
	for i := 0; i < len(words); i++ {
		w := words[i]
		if b := filepath.Base(w); packageManager(b) {
			pm = b
			continue
		}
		if pm == "" || (w != "--prefix" && w != "-C" && w != "--dir" && w != "--cwd") {
			continue
		}
		if i+1 < len(words) && words[i+1] == flagValueMark {
			i++
		}
		if i+1 >= len(words) {
			break
		}
		if abs, ok := dirArg(words[i+1], home, project); ok {
			out = append(out, cmdPath{path: abs, interp: pm})
		}
	}
	return out
}

// makeDirs returns the directories a build tool in words is told to
// run in (`make -C DIR`, `ninja -C DIR`, `make --directory=DIR`), or env
// to start its command in (`env -C DIR make`, `env --chdir=DIR`), as
// directories run from (NamedFile.Cwd): what runs reads its Makefile
// there, as after a cd.
func makeDirs(words []string, home, project string) []cmdPath {
	var out []cmdPath
	var flags []string // the flags of the line's tool that name where it runs
	tool, env, short := false, false, false
	for i := 0; i < len(words); i++ {
		switch w := words[i]; {
		case runInFlags[filepath.Base(w)] != nil:
			flags = runInFlags[filepath.Base(w)]
			tool, env = true, filepath.Base(w) == "env"
			// make's and env's -C may end a cluster of short flags or
			// have its value attached (shortC).
			short = slices.Contains([]string{"make", "gmake", "bmake", "env"}, filepath.Base(w))
		case env && !strings.HasPrefix(w, "-"):
			// env's options come before its command (`env FOO=1 git -C
			// D` is git's -C, which gitguard judges): no more of env's.
			tool, env = false, false
		case tool && (slices.Contains(flags, w) || short && shortC(w, env) != ""):
			v := ""
			if a := shortC(w, env); short && a != "" && a != w {
				// Why: `make -sC DIR`, `make -CDIR`, `env -iC DIR`
				// move there as `-C DIR` does (review16c: missed).
				v = strings.TrimPrefix(a, "C")
			}
			if v == "" {
				if i+1 < len(words) && words[i+1] == flagValueMark {
					i++
				}
				if i+1 >= len(words) {
					return out
				}
				v = words[i+1]
			}
			if abs, ok := dirArg(v, home, project); ok {
				out = append(out, cmdPath{path: abs, cwd: true})
			}
		}
	}
	return out
}

// runInFlags are, for each tool whose flag tells it where to run (or
// which directory's package to build), those flags: make's and ninja's
// -C (make's in a cluster of short flags too, shortC), env's -C, go's -C,
// poetry's -C, --directory and --project, task's -d, gradle's -p, just's
// working directory, pip's editable install (it builds the package:
// setup.py runs). What runs reads the directory's build files, as after
// a cd (review16c: only make, ninja and env were known).
var runInFlags = map[string][]string{
	"make": {"-C", "--directory"}, "gmake": {"-C", "--directory"}, "bmake": {"-C", "--directory"},
	"ninja": {"-C"}, "env": {"-C", "--chdir"}, "go": {"-C"},
	"poetry": {"-C", "--directory", "-P", "--project"}, "task": {"-d", "--dir"},
	"gradle": {"-p", "--project-dir"}, "gradlew": {"-p", "--project-dir"},
	"just": {"-d", "--working-directory"}, "pip": {"-e", "--editable"}, "pip3": {"-e", "--editable"},
}

// shortC returns, for a cluster of short flags w of make's, ninja's or
// (env) env's that holds -C, the cluster from that C on ("C" when the
// directory is the next word, "CDIR" when attached); "" when w holds no
// -C (a flag before it that takes a value takes the rest: `make -j4`,
// `env -u C`).
func shortC(w string, env bool) string {
	if len(w) < 2 || w[0] != '-' || w[1] == '-' {
		return ""
	}
	valued := "fIoWjlEdtkw" // make's and ninja's flags that take a value
	if env {
		valued = "uS"
	}
	for i, c := range w[1:] {
		switch {
		case c == 'C':
			return w[1+i:]
		case strings.ContainsRune(valued, c):
			return ""
		}
	}
	return ""
}

// flagEq finds a flag given its value with '=' (commandScripts). Compiled
// at first use: in the package's init it cost every jail process (the
// lean init too) a dozen allocations (TestPackageInitIsLight).
var flagEq = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|[\s;&|()"'])(--?[A-Za-z][A-Za-z0-9_-]*)=`)
})

// flagValueMark is the word commandScripts puts between a flag and the
// value it was given with '=' (a control character: no word of a
// command line holds it, and scanWords emits no word that does).
const flagValueMark = "\x01"

// isSep reports whether r separates the words of a command line for
// commandPaths: a space, shell syntax, or what separates a flag's or an
// environment variable's value.
func isSep(r rune) bool {
	return unicode.IsSpace(r) || strings.ContainsRune(";&|()<>`=,:", r)
}

// shellWords splits s as a shell does into words (quotes and backslashes
// taken away; no expansion), also at isSep's syntax outside quotes.
func shellWords(s string) []string {
	var out []string
	var b strings.Builder
	in, q := false, rune(0)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case q != 0:
			switch {
			case r == q:
				q = 0
			case r == '\\' && q == '"' && i+1 < len(rs) && strings.ContainsRune("\"\\$`", rs[i+1]):
				i++
				b.WriteRune(rs[i])
			default:
				b.WriteRune(r)
			}
		case r == '\'' || r == '"':
			q, in = r, true
		case r == '\\' && i+1 < len(rs):
			i++
			b.WriteRune(rs[i])
			in = true
		case isSep(r):
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, b.String())
	}
	return out
}

// scanWords is commandPaths over one list of words; keep, when set, says
// which words may be returned as paths (the context they give, a cd or
// an interpreter, counts either way).
func scanWords(words []string, home, project string, keep func(string) bool) []cmdPath {
	var out []cmdPath
	interp := "" // the interpreter the words after it are flags or the script of
	script := "" // interp, for the word being looked at when it is the script
	emit := func(w string) {
		if w == "" || strings.ContainsAny(w, "$*?[~"+flagValueMark) {
			return
		}
		out = append(out, cmdPath{path: clean(w), interp: script})
	}
	cd := "" // the directory a cd earlier in the line moved to
	// setCd moves the line to d (a cd's, pushd's or --directory's value)
	// and returns it as a directory run from when w may be returned.
	setCd := func(d, w string) {
		cd = d
		if (keep == nil || keep(w)) && d != "" && !strings.ContainsAny(d, "$*?[~"+flagValueMark) {
			// Why: what the line runs after the cd reads what lies
			// there (a Makefile, package.json, pyproject.toml, ./lib.sh):
			// the directory counts as a script's own (NamedFile.Cwd).
			out = append(out, cmdPath{path: clean(d), cwd: true})
		}
	}
	afterCd := false    // the previous word is cd or pushd
	wantScript := false // the previous words are an interpreter and its flags
	value := false      // the previous word is an interpreter's flag that takes a value
	loads := false      // that value is a file it loads (--env-file, --rcfile)
	pkg := false        // that value is a package whose code runs (uv's --project, uvx's --from)
	prev := ""
	for _, w := range words {
		if w == flagValueMark {
			// The next word is prev's value: for an interpreter's flag,
			// as a flag of valueFlags' takes it (the script may still
			// follow); elsewhere the mark is no word.
			if wantScript && strings.HasPrefix(prev, "-") {
				value = true
				afterCd = prev == "--directory" || prev == "--cwd"
				loads = prev == "--env-file" || prev == "--rcfile" || prev == "--init-file"
				pkg = prev == "--project" || prev == "--from" || prev == "--with-editable"
			}
			continue
		}
		prev = w
		wasCd, wasInterp, wasValue, fileValue, pkgValue := afterCd, wantScript, value, loads, pkg
		loads, pkg = false, false
		kept := keep == nil || keep(w)
		// After a flag's value, the script may still follow: `node -r
		// ./setup.js hook.js`, `bash -o pipefail hook.sh`, `python3 -W
		// ignore hook.py` run hook.js, hook.sh, hook.py (review13f: the
		// value was taken for the script, the script was missed).
		// Why cdFlag: `cd -P ~/.claude/hooks && make` moves there as
		// `cd ~/.claude/hooks` does (review16c: the flag took the cd's
		// place, and the directory was no directory run from).
		afterCd, wantScript, value = w == "cd" || w == "pushd" || wasCd && cdFlag(w), wasValue, false
		script = ""
		if wasInterp && (!wasValue || pkgValue) {
			// Why: the first word after an interpreter and its flags is
			// its script whatever its name (no .py, no #!) and whatever
			// it is (a directory node or python runs): the caller
			// protects what that interpreter loads beside it.
			script = interp
		}
		var abs string
		rel := false
		anchoredAbs, anchoredOK := anchored(w, home, project)
		switch {
		case wasValue && !strings.ContainsAny(w, "/~$"):
			switch {
			case wasCd:
				setCd(join(project, w), w) // uv run --directory hooks x.py
			case fileValue && kept:
				// A file the interpreter loads first (node's env file
				// can set NODE_OPTIONS: --require runs code).
				emit(join(project, w))
				if cd != "" {
					emit(join(cd, w))
				}
			}
			continue // a module or option name, not a file of the line
		case anchoredOK:
			abs = anchoredAbs
		case filepath.IsAbs(w):
			abs = w
		case strings.Contains(w, "/"):
			rel = true
		case wasInterp && (strings.HasPrefix(w, "-") || w == "+o" || w == "+O"):
			// A flag of the interpreter: the script may still follow,
			// unless the flag takes code or a module instead.
			switch {
			case slices.Contains(codeFlags, w):
			case slices.Contains(valueFlags, w) && !(PythonInterp(interp) && slices.Contains(pythonBare, w)):
				wantScript, value = true, true
				// Its value is where the script is named from.
				afterCd = w == "--directory" || w == "--cwd"
				loads = w == "--env-file" || w == "--rcfile" || w == "--init-file"
				// Why: a local package's code runs (`uv run --project
				// ~/.claude/mcp/srv srv`, `uvx --from DIR cmd`): its
				// directory counts as the script's own.
				pkg = w == "--project" || w == "--from" || w == "--with-editable"
			default:
				wantScript = true
			}
			continue
		case wasInterp && (w == "run" || w == "exec"):
			wantScript = true // deno run, bun run, uv run
			continue
		case wasInterp && runner(interp) && !strings.HasPrefix(w, "."):
			// npx's and bunx's word is a package's name, not a file
			// (a path to a local package has a slash: above); one that
			// is an interpreter takes a script (`npx tsx hook.ts`).
			wantScript = interpreter(w) && !runner(w)
			interp = ""
			if wantScript {
				interp = filepath.Base(w)
			}
			continue
		case wasInterp && !strings.ContainsAny(w, "$~"):
			rel = true // the script, named from where it starts
		default:
			if wasCd && !strings.HasPrefix(w, "-") {
				// `cd ~/.claude && cd hooks && python3 h.py`: the
				// second cd is from the first (review15f).
				if cd != "" {
					setCd(join(cd, w), w)
				} else {
					setCd(join(project, w), w)
				}
				continue
			}
			wantScript = interpreter(w)
			interp = ""
			if wantScript {
				interp = filepath.Base(w)
			}
			continue // a program found on PATH, a flag, a word
		}
		if script != "" && runner(script) && strings.HasPrefix(w, "@") {
			script = "" // npx @scope/pkg: a package's name
			if !anchoredOK && !filepath.IsAbs(w) {
				continue
			}
		}
		if !wasValue && !wasCd && interpreter(w) {
			// The program named by its path (/usr/bin/python3,
			// ~/.venv/bin/python): its script follows. So does an
			// interpreter's after `uv run` or `bun run` (`cd
			// ~/.claude/hooks && uv run python h.py`: uv runs the venv's
			// python, whose script is h.py); the word stays a script of
			// the first too (a file of that name would run), fail-safe
			// (review15f: h.py was named by no rule, and the agent could
			// rewrite it).
			wantScript, interp = true, filepath.Base(w)
		}
		if rel {
			if kept {
				emit(join(project, w))
				if cd != "" {
					emit(join(cd, w))
				}
			}
			if wasCd {
				// From an earlier cd's directory when there is one
				// (`cd ~/.claude && cd hooks/x`), as for a word
				// without a slash; from the project otherwise.
				if cd != "" {
					setCd(join(cd, w), w)
				} else {
					setCd(join(project, w), w)
				}
			}
			continue
		}
		if kept {
			emit(abs)
		}
		if wasCd && abs != "" && !strings.ContainsAny(abs, "$*?[~") {
			setCd(clean(abs), w)
		}
	}
	return out
}

// cdFlag reports whether w is a flag of cd or pushd (`-P`, `-L`, `-e`,
// `-@`, pushd's `-n`, `--`): the directory is the next word.
func cdFlag(w string) bool {
	if w == "--" {
		return true
	}
	if len(w) < 2 || w[0] != '-' {
		return false
	}
	for _, c := range w[1:] {
		if !strings.ContainsRune("PLe@n", c) {
			return false
		}
	}
	return true
}

// codeFlags are interpreters' flags after which no script file follows
// (code, a module, or the code's output).
var codeFlags = []string{"-c", "-m", "--eval", "-p", "--print"}

// pythonBare are valueFlags that take no value in python (-O optimizes,
// -I isolates): `python3 -I h.py` runs h.py (review15f: h.py was taken
// for -I's value, and named by no rule).
var pythonBare = []string{"-O", "+O", "-o", "+o", "-I"}

// valueFlags are interpreters' flags whose value is the next word, with the
// script after it: node's and ruby's preloads (-r, --require, --import,
// --loader), node's --env-file, a shell's options (-o, +o, -O, +O) and
// startup file (--rcfile, --init-file), python's -W and -X, perl's and
// ruby's -I, uv run's and bun's --with, --project, --directory, --cwd,
// --python (`uv run --with requests hook.py`, the usual form of a uv
// script hook), uvx's --from.
var valueFlags = []string{"-r", "--require", "--import", "--loader", "--experimental-loader", "--env-file",
	"-o", "+o", "-O", "+O", "--rcfile", "--init-file", "-W", "-X", "-I",
	"--with", "--with-editable", "--with-requirements", "--project", "--directory", "--cwd", "--python", "--from"}

// interpreter reports whether program w (a name or a path) runs a script
// named by its first argument that is not a flag.
func interpreter(w string) bool {
	switch b := filepath.Base(w); {
	case strings.HasPrefix(b, "python"), strings.HasPrefix(b, "pypy"), runner(b):
		return true
	default:
		switch b {
		case "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "source", ".",
			"node", "nodejs", "deno", "bun", "tsx", "ts-node", "uv",
			"ruby", "perl", "php", "lua", "Rscript", "osascript", "pwsh",
			// review15c: these run a script named without a slash too
			// (`cd ~/.claude/hooks && julia h.jl`; java's single-file
			// source launcher, awk -f, R -f), and were missed: the
			// agent could rewrite the script and it ran on the host.
			// Not those whose next word is mostly a subcommand (swift
			// build, bb test, scala compile, go run): the word would
			// be taken for a script in the project and watched, and
			// a directory of that name the agent makes there would
			// leave the tree.
			"julia", "java", "awk", "gawk", "mawk", "nawk", "tclsh", "wish", "expect",
			"elixir", "csh", "tcsh", "yash", "guile", "racket", "groovy",
			"nu", "xonsh", "R", "raku", "perl6":
			return true
		}
	}
	return false
}

// runner reports whether program b (a base name) runs a package named by
// its argument: npx, bunx, pnpx, uvx. A path there (`npx ~/.claude/mcp/srv`,
// `npx ./tool`) is a local package, whose bin runs: a script directory.
func runner(b string) bool {
	return b == "npx" || b == "bunx" || b == "pnpx" || b == "uvx"
}

// PythonInterp reports whether interpreter b (NamedFile.Interp) runs its
// script in python: a python or pypy, or uv (`uv run x` runs x in the
// project's python).
func PythonInterp(b string) bool {
	return strings.HasPrefix(b, "python") || strings.HasPrefix(b, "pypy") || b == "uv" || b == "uvx"
}

// dirArg is the absolute path a directory argument of a command line
// names (~ and $HOME anchored at home, a relative one at project), and
// false for one jail cannot know before the command runs (a variable, a
// glob, the mark of a flag's missing value).
func dirArg(v, home, project string) (string, bool) {
	abs, ok := anchored(v, home, project)
	switch {
	case ok:
	case filepath.IsAbs(v):
		abs = clean(v)
	default:
		abs = join(project, v)
	}
	return abs, abs != "" && !strings.ContainsAny(abs, "$*?[~"+flagValueMark)
}

// anchored makes a word that starts at the home (~, ~/, $HOME, $HOME/)
// or at the project ($CLAUDE_PROJECT_DIR, $CLAUDE_PROJECT_DIR/) absolute;
// ok is false for any other word.
func anchored(w, home, project string) (abs string, ok bool) {
	switch {
	case w == "~" || w == "$HOME":
		return home, true
	case strings.HasPrefix(w, "~/"):
		return join(home, w[2:]), true
	case strings.HasPrefix(w, "$HOME/"):
		return join(home, w[len("$HOME/"):]), true
	case w == "$CLAUDE_PROJECT_DIR":
		return project, true
	case strings.HasPrefix(w, "$CLAUDE_PROJECT_DIR/"):
		return join(project, w[len("$CLAUDE_PROJECT_DIR/"):]), true
	}
	return "", false
}

// join joins base (which may be unknown: "", no path) and rel, and
// cleans the result as clean does.
func join(base, rel string) string {
	if base == "" {
		return ""
	}
	return clean(base + "/" + rel)
}

// clean is filepath.Clean for a path without "..": with one, only empty
// and "." elements go, since the kernel takes ".." after a symlink from
// the link's target (~/.claude/hooks/../x.sh, hooks a symlink to
// ../dotfiles/hooks, runs ~/dotfiles/x.sh): the caller resolves it.
func clean(p string) string {
	if !strings.Contains(p, "..") {
		return filepath.Clean(p)
	}
	var out []string
	for _, e := range strings.Split(p, "/") {
		if e != "" && e != "." {
			out = append(out, e)
		}
	}
	if strings.HasPrefix(p, "/") {
		return "/" + strings.Join(out, "/")
	}
	return strings.Join(out, "/")
}
