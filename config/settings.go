package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/jail-sandbox/jail/policy"
)

// Settings files of other sandboxes (--settings FILE, the settings key).
//
// Two formats are read, told apart by their top level:
//
//   - sandbox-runtime (srt) settings JSON: {"network": {...}, "filesystem":
//     {...}, ...}, as validated by SandboxRuntimeConfigSchema in
//     anthropic-experimental/sandbox-runtime src/sandbox/sandbox-config.ts
//     (read at commit 02b493b1, 2026): network.allowedDomains, deniedDomains
//     (a bare "*" denies all), deniedDomainReasons, strictAllowlist,
//     allowUnixSockets, allowAllUnixSockets, allowLocalBinding,
//     allowMachLookup, httpProxyPort, socksProxyPort, mitmProxy, parentProxy,
//     tlsTerminate; filesystem.disabled, denyRead, allowRead, allowWrite,
//     denyWrite, allowGitConfig; credentials.files/envVars; and
//     ignoreViolations, enableWeakerNestedSandbox,
//     enableWeakerNetworkIsolation, allowAppleEvents, ripgrep,
//     mandatoryDenySearchDepth, allowPty, seccomp, bwrapPath, socatPath,
//     javaAgentJarPath, windows, git. Paths: absolute, "~" for the home
//     directory, anything else relative to the current directory.
//   - Claude Code's settings.json: its "sandbox" block (code.claude.com
//     docs, settings reference "sandbox" and "Sandboxing"): enabled,
//     failIfUnavailable, autoAllowBashIfSandboxed, excludedCommands,
//     allowUnsandboxedCommands, enabledPlatforms, allowNestedUserNamespaces,
//     network{allowedDomains, allowManagedDomainsOnly, allowUnixSockets,
//     allowAllUnixSockets, allowLocalBinding, httpProxyPort,
//     socksProxyPort}, filesystem{allowWrite, denyWrite, denyRead, allowRead,
//     allowManagedReadPathsOnly, disabled}, credentials, ignoreViolations,
//     ripgrep, enableWeakerNestedSandbox, enableWeakerNetworkIsolation,
//     allowAppleEvents, bwrapPath, socatPath; plus the domains of
//     "WebFetch(domain:NAME)" allow rules in permissions.allow, which Claude
//     Code merges into the sandbox's allowlist. Paths follow Claude Code's
//     permission-rule prefixes: "//x" is the absolute /x, "~/x" is in the
//     home directory, "/x" is relative to the settings file's directory
//     (users often mean an absolute path there: anthropics/claude-code
//     #33090, #32287; jail then says so), "./x" and "x" are relative to the
//     current directory. The rest of a Claude settings file (hooks, model,
//     permissions other than WebFetch domains) is Claude's own and not read.
//
// What maps: denyRead -> deny; allowRead -> read; allowWrite -> write;
// denyWrite -> deny (jail has no write-only denial, so the path is hidden,
// which is stricter; said in a note); allowGitConfig -> allow-git-config;
// allowedDomains -> allow-domain; deniedDomains -> deny-domain;
// allowLocalBinding -> allow-local-tcp (false: no-local-tcp); credentials files in deny or mask
// mode -> deny. Every other key is reported, one line each, never ignored
// silently; so are entries jail cannot take as they are (globs in
// allowRead/allowWrite, paths that do not exist, a denyRead of the home
// directory, which jail hides anyway).

// ParseSettings maps a settings file to jail options (FromSettings sources,
// with the file's own key names and lines) and notes for what does not map.
func ParseSettings(path string, data []byte, env Env) (*File, error) {
	var top map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		return nil, &FileError{File: path, Line: jsonErrLine(data, err), Reason: "not a JSON object: " + err.Error()}
	}
	settingsRules()
	m := &settingsMap{path: path, env: env, lines: jsonLines(data), f: &File{Path: path, Kind: ExplicitConfig}}
	switch {
	case top["sandbox"] != nil:
		sb, ok := top["sandbox"].(map[string]any)
		if !ok {
			return nil, &FileError{File: path, Line: m.lines["sandbox"], Key: "sandbox", Reason: "want an object"}
		}
		m.claude = true
		m.block("sandbox", sb, claudeKeys)
		m.webFetch(top["permissions"])
	case top["network"] != nil || top["filesystem"] != nil:
		m.block("", top, srtKeys)
		// srt writes nowhere unless allowWrite says so; jail's workspace is
		// writable by default, so without "." (or a parent) it becomes
		// read-only: the stricter reading, as the file meant.
		if !m.writesCwd && m.err == nil {
			key := "filesystem.allowWrite"
			if _, ok := m.lines[key]; !ok {
				key = "filesystem"
			}
			m.add("read-only", key, -1, "", "true")
			m.note(key, "no entry holds the current directory, which sandbox-runtime then keeps read-only: the workspace is read-only")
		}
	default:
		return nil, &FileError{File: path, Reason: `neither sandbox-runtime settings ("network", "filesystem") nor a Claude Code settings file (a "sandbox" block)`}
	}
	if m.err != nil {
		return nil, m.err
	}
	return m.f, nil
}

type settingsMap struct {
	path      string
	env       Env
	claude    bool
	lines     map[string]int
	f         *File
	err       error
	writesCwd bool // an allowWrite entry holds the current directory
}

type mapper func(m *settingsMap, key string, v any)

// What each key becomes; nil: reported as having no jail equivalent, with
// the reason.
type keyRule struct {
	fn  mapper
	why string // for keys that do not map: what jail does instead
}

var (
	noProxyConfig = "jail runs its own transparent proxy for every program"
	macOnly       = "macOS only"
	// The tables of ParseSettings, built at its first call (settingsRules):
	// as package-level map literals they were built in the package init of
	// every jail process, sandbox init included (issue 16).
	srtKeys, claudeKeys, networkKeys, filesystemKeys map[string]keyRule
	settingsRulesOnce                                sync.Once
)

func settingsRules() {
	settingsRulesOnce.Do(func() {
		srtKeys = map[string]keyRule{
			"network":                      {fn: func(m *settingsMap, k string, v any) { m.block(k, v, networkKeys) }},
			"filesystem":                   {fn: func(m *settingsMap, k string, v any) { m.block(k, v, filesystemKeys) }},
			"credentials":                  {fn: (*settingsMap).credentials},
			"ignoreViolations":             {why: "jail records every denial in the audit trail"},
			"enableWeakerNestedSandbox":    {why: "jail needs no weaker mode in a container"},
			"enableWeakerNetworkIsolation": {why: macOnly},
			"allowAppleEvents":             {why: macOnly},
			"ripgrep":                      {why: "jail expands its protections itself"},
			"mandatoryDenySearchDepth":     {why: "jail's protections apply at any depth"},
			"allowPty":                     {why: "jail relays a terminal when it has one"},
			"seccomp":                      {why: "see jail's own seccomp option"},
			"bwrapPath":                    {why: "jail uses no bubblewrap"},
			"socatPath":                    {why: "jail uses no socat"},
			"javaAgentJarPath":             {why: "jail's proxy is transparent, no agent is needed"},
			"windows":                      {why: "Windows only"},
			"git":                          {why: "git inside the sandbox uses the host's git configuration rules"},
			"$schema":                      {fn: func(*settingsMap, string, any) {}},
		}
		claudeKeys = map[string]keyRule{
			"enabled":                      {fn: (*settingsMap).enabled},
			"failIfUnavailable":            {fn: func(*settingsMap, string, any) {}}, // jail always fails closed
			"autoAllowBashIfSandboxed":     {why: "Claude Code's own permission prompts, not jail's"},
			"excludedCommands":             {why: "jail runs no command outside the sandbox"},
			"allowUnsandboxedCommands":     {why: "jail runs no command outside the sandbox"},
			"enabledPlatforms":             {why: "jail runs on Linux"},
			"allowNestedUserNamespaces":    {why: "jail's filter refuses new namespaces inside"},
			"network":                      {fn: func(m *settingsMap, k string, v any) { m.block(k, v, networkKeys) }},
			"filesystem":                   {fn: func(m *settingsMap, k string, v any) { m.block(k, v, filesystemKeys) }},
			"credentials":                  {fn: (*settingsMap).credentials},
			"ignoreViolations":             srtKeys["ignoreViolations"],
			"ripgrep":                      srtKeys["ripgrep"],
			"enableWeakerNestedSandbox":    srtKeys["enableWeakerNestedSandbox"],
			"enableWeakerNetworkIsolation": srtKeys["enableWeakerNetworkIsolation"],
			"allowAppleEvents":             srtKeys["allowAppleEvents"],
			"bwrapPath":                    srtKeys["bwrapPath"],
			"socatPath":                    srtKeys["socatPath"],
		}
		networkKeys = map[string]keyRule{
			"allowedDomains":          {fn: func(m *settingsMap, k string, v any) { m.list(k, v, "allow-domain", m.domain) }},
			"deniedDomains":           {fn: func(m *settingsMap, k string, v any) { m.list(k, v, "deny-domain", m.deniedDomain) }},
			"allowLocalBinding":       {fn: func(m *settingsMap, k string, v any) { m.localBinding(k, v) }},
			"strictAllowlist":         {fn: (*settingsMap).strict},
			"deniedDomainReasons":     {why: "jail's denial notices name the rule"},
			"allowManagedDomainsOnly": {why: "jail has no managed settings; its allowlist is what you give it"},
			"allowUnixSockets":        {why: "jail hides the host's sockets; there is no per-socket exception"},
			"allowAllUnixSockets":     {why: "jail hides the host's sockets; there is no per-socket exception"},
			"allowMachLookup":         {why: macOnly},
			"httpProxyPort":           {why: noProxyConfig},
			"socksProxyPort":          {why: noProxyConfig},
			"mitmProxy":               {why: "jail does not intercept TLS"},
			"parentProxy":             {why: "jail dials from the host directly"},
			"tlsTerminate":            {why: "jail does not intercept TLS"},
			"filterRequest":           {why: "jail checks names and ports, not requests"},
		}
		filesystemKeys = map[string]keyRule{
			"denyRead":                  {fn: func(m *settingsMap, k string, v any) { m.list(k, v, "deny", m.denyPath) }},
			"allowRead":                 {fn: func(m *settingsMap, k string, v any) { m.list(k, v, "read", m.existingPath) }},
			"allowWrite":                {fn: func(m *settingsMap, k string, v any) { m.list(k, v, "write", m.writePath) }},
			"denyWrite":                 {fn: func(m *settingsMap, k string, v any) { m.list(k, v, "deny", m.denyWritePath) }},
			"allowGitConfig":            {fn: func(m *settingsMap, k string, v any) { m.flag(k, v, "allow-git-config") }},
			"disabled":                  {fn: (*settingsMap).fsDisabled},
			"allowManagedReadPathsOnly": {why: "jail has no managed settings"},
		}
	})
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// note reports one key that does not map, one line.
func (m *settingsMap) note(key string, format string, a ...any) {
	loc := m.path
	if l := m.lines[key]; l > 0 {
		loc += ":" + strconv.Itoa(l)
	}
	m.f.Notes = append(m.f.Notes, loc+": "+key+": "+fmt.Sprintf(format, a...))
}

func (m *settingsMap) fail(key, format string, a ...any) {
	if m.err == nil {
		m.err = &FileError{File: m.path, Line: m.lines[key], Key: key, Reason: fmt.Sprintf(format, a...)}
	}
}

// block maps the keys of one object, in a stable order.
func (m *settingsMap) block(prefix string, v any, rules map[string]keyRule) {
	obj, ok := v.(map[string]any)
	if !ok {
		m.fail(prefix, "want an object")
		return
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		li, lj := m.lines[join(prefix, keys[i])], m.lines[join(prefix, keys[j])]
		if li != lj {
			return li < lj
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		key := join(prefix, k)
		rule, known := rules[k]
		switch {
		case !known:
			m.note(key, "unknown key; ignored")
		case rule.fn != nil:
			rule.fn(m, key, obj[k])
		default:
			if isOff(obj[k]) {
				continue // turned off, or empty: nothing to miss
			}
			m.note(key, "no jail equivalent (%s); ignored", rule.why)
		}
	}
}

// isOff: false, an empty list or object, or null.
func isOff(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func (m *settingsMap) add(optKey, key string, i int, raw, value string) {
	o := policy.Lookup(optKey)
	line := m.lines[key]
	if l := m.lines[key+"["+strconv.Itoa(i)+"]"]; l > 0 {
		line = l
	}
	m.f.Settings = append(m.f.Settings, Setting{Option: o, Value: value,
		Source: Source{Kind: FromSettings, File: m.path, Line: line, Key: key, Raw: raw}})
}

// list maps each string of a list through conv ("" skips it).
func (m *settingsMap) list(key string, v any, optKey string, conv func(key, s string) string) {
	l, ok := v.([]any)
	if !ok {
		m.fail(key, "want a list of strings")
		return
	}
	for i, e := range l {
		s, ok := e.(string)
		if !ok {
			m.fail(key, "want a list of strings")
			return
		}
		if out := conv(key, s); out != "" {
			m.add(optKey, key, i, s, out)
		}
	}
}

func (m *settingsMap) flag(key string, v any, optKey string) {
	b, ok := v.(bool)
	if !ok {
		m.fail(key, "want true or false")
		return
	}
	if b {
		m.add(optKey, key, -1, "true", "true")
	}
}

// localBinding: jail allows TCP on the sandbox's own loopback by default;
// an explicit false asks for what srt does without it.
func (m *settingsMap) localBinding(key string, v any) {
	b, ok := v.(bool)
	if !ok {
		m.fail(key, "want true or false")
		return
	}
	if b {
		m.add("allow-local-tcp", key, -1, "true", "true")
	} else {
		m.add("no-local-tcp", key, -1, "true", "true")
	}
}

func (m *settingsMap) enabled(key string, v any) {
	if b, ok := v.(bool); ok && !b {
		m.note(key, "false: jail sandboxes the whole command regardless")
	}
}

func (m *settingsMap) strict(key string, v any) {
	if b, ok := v.(bool); ok && !b {
		m.note(key, "false: jail never prompts; what is not allowed is refused")
	}
}

func (m *settingsMap) fsDisabled(key string, v any) {
	if b, ok := v.(bool); ok && b {
		m.note(key, "true: no jail equivalent (jail always enforces its filesystem rules); ignored")
	}
}

func (m *settingsMap) domain(key, s string) string { return s }

func (m *settingsMap) deniedDomain(key, s string) string {
	if s == "*" || strings.HasPrefix(s, "*:") {
		m.note(key, "%q: jail refuses every name that is not allowed already; a deny-all is not needed", s)
		return ""
	}
	return s
}

// path converts a path of the file's convention to one jail reads (absolute
// or ~/...).
func (m *settingsMap) convPath(key, s string) string {
	switch {
	case m.claude && strings.HasPrefix(s, "//"):
		return filepath.Clean(s[1:])
	case s == "~" || strings.HasPrefix(s, "~/"):
		return s
	case m.claude && strings.HasPrefix(s, "/"):
		p := filepath.Join(filepath.Dir(m.path), s[1:])
		if _, err := os.Lstat(p); err != nil {
			if _, err := os.Lstat(s); err == nil {
				m.note(key, "%q is relative to this settings file's directory (%s), where it does not exist; for the absolute path write %q", s, p, "/"+s)
			}
		}
		return p
	case filepath.IsAbs(s):
		return filepath.Clean(s)
	}
	return filepath.Join(m.env.Cwd, s)
}

var globChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[*?\[]`) })

// existingPath: allowRead/allowWrite entries jail can bind (no globs, must
// exist; srt ignores missing ones, so jail skips them with a note).
func (m *settingsMap) existingPath(key, s string) string {
	p := m.convPath(key, s)
	if globChars().MatchString(p) {
		m.note(key, "%q: jail makes whole paths readable or writable, not globs; skipped", s)
		return ""
	}
	if _, err := os.Stat(expandHome(p, m.env.Home)); err != nil {
		m.note(key, "%q: %s; skipped", s, readReason(err))
		return ""
	}
	return p
}

// writePath: allowWrite entries. One that holds the current directory (the
// workspace) needs no bind: the workspace is writable unless read-only.
func (m *settingsMap) writePath(key, s string) string {
	p := m.convPath(key, s)
	full := expandHome(p, m.env.Home)
	if full == m.env.Cwd || strings.HasPrefix(m.env.Cwd, strings.TrimSuffix(full, "/")+"/") {
		m.writesCwd = true
		if full == m.env.Cwd {
			return "" // the workspace itself
		}
	}
	return m.existingPath(key, s)
}

func (m *settingsMap) denyPath(key, s string) string {
	p := m.convPath(key, s)
	full := expandHome(p, m.env.Home)
	if m.env.Home != "" && (full == m.env.Home || strings.HasPrefix(m.env.Home, strings.TrimSuffix(full, "/")+"/")) {
		m.note(key, "%q: jail hides the home directory anyway (only read and write paths reappear); skipped", s)
		return ""
	}
	return p
}

func (m *settingsMap) denyWritePath(key, s string) string {
	p := m.denyPath(key, s)
	if p != "" {
		m.note(key, "%q: jail has no write-only denial; it is hidden instead (unreadable too)", s)
	}
	return p
}

// credentials: files in deny or mask mode are hidden; variables are not
// passed by default anyway.
func (m *settingsMap) credentials(key string, v any) {
	obj, ok := v.(map[string]any)
	if !ok {
		m.fail(key, "want an object")
		return
	}
	for k, sub := range obj {
		ck := key + "." + k
		switch k {
		case "files":
			l, _ := sub.([]any)
			for i, e := range l {
				f, _ := e.(map[string]any)
				p, _ := f["path"].(string)
				mode, _ := f["mode"].(string)
				if p == "" {
					m.fail(ck, "entry %d: want a path", i)
					return
				}
				if mode == "mask" {
					m.note(ck, "%q: jail does not mask file contents; it is hidden instead", p)
				}
				if dp := m.denyPath(ck, p); dp != "" {
					m.add("deny", ck, i, p, dp)
				}
			}
		case "envVars":
			if !isOff(sub) {
				m.note(ck, "jail passes no host variable unless named with env; nothing to do")
			}
		default:
			if !isOff(sub) {
				m.note(ck, "no jail equivalent (jail does not inject credentials); ignored")
			}
		}
	}
}

var webFetchDomain = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^WebFetch\(domain:([^)]+)\)$`) })

// webFetch takes the domains of permissions.allow "WebFetch(domain:NAME)"
// rules, which Claude Code adds to its sandbox's allowlist.
func (m *settingsMap) webFetch(v any) {
	perms, _ := v.(map[string]any)
	allow, _ := perms["allow"].([]any)
	for i, e := range allow {
		s, _ := e.(string)
		if mm := webFetchDomain().FindStringSubmatch(s); mm != nil {
			m.add("allow-domain", "permissions.allow", i, s, mm[1])
		}
	}
}

func expandHome(p, home string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		return filepath.Join(home, p[1:])
	}
	return p
}

// jsonLines maps every key path ("network.allowedDomains", list elements
// "network.allowedDomains[2]") of a JSON document to its 1-based line.
func jsonLines(data []byte) map[string]int {
	lines := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(data))
	lineAt := func(off int64) int { return 1 + bytes.Count(data[:min(int(off), len(data))], []byte("\n")) }
	type frame struct {
		path  string
		array bool
		index int
		key   string // pending object key
		isKey bool   // next string token in an object is a key
	}
	var stack []frame
	valuePath := func() string {
		if len(stack) == 0 {
			return ""
		}
		f := &stack[len(stack)-1]
		if f.array {
			p := f.path + "[" + strconv.Itoa(f.index) + "]"
			f.index++
			return p
		}
		return join(f.path, f.key)
	}
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return lines
		}
		// The token starts after any whitespace or separator at start.
		off := start
		for int(off) < len(data) && strings.ContainsRune(" \t\r\n,:", rune(data[off])) {
			off++
		}
		if len(stack) > 0 {
			f := &stack[len(stack)-1]
			if !f.array && f.isKey {
				if d, ok := tok.(json.Delim); ok && d == '}' {
					stack = stack[:len(stack)-1]
					continue
				}
				f.key, f.isKey = tok.(string), false
				lines[join(f.path, f.key)] = lineAt(off)
				continue
			}
		}
		switch d := tok.(type) {
		case json.Delim:
			switch d {
			case '{', '[':
				p := valuePath()
				if p != "" {
					if _, ok := lines[p]; !ok {
						lines[p] = lineAt(off)
					}
				}
				if len(stack) > 0 && !stack[len(stack)-1].array {
					stack[len(stack)-1].isKey = true
				}
				stack = append(stack, frame{path: p, array: d == '[', isKey: d == '{'})
			case '}', ']':
				stack = stack[:len(stack)-1]
			}
		default:
			p := valuePath()
			if _, ok := lines[p]; !ok {
				lines[p] = lineAt(off)
			}
			if len(stack) > 0 && !stack[len(stack)-1].array {
				stack[len(stack)-1].isKey = true
			}
		}
	}
}

// jsonErrLine is the line of a JSON syntax error, when known.
func jsonErrLine(data []byte, err error) int {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
	}
	if errors.Is(err, io.EOF) {
		return 0
	}
	return 0
}
