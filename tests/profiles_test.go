//go:build linux

package tests

// Built-in profiles (issue 11): each one opens exactly what it says. A
// stand-in agent touches every path, cache, domain and variable its profile
// grants, and one more of each; the grant must work and persist where it
// should, the one more must not. The caches are jail's own: the host's are
// never written.

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// profHome is a fresh, empty user: HOME and every XDG directory under it
// (never the real ones), and a workspace outside it.
type profHome struct {
	home, ws string
	env      []string
}

func newProfHome(t *testing.T) *profHome {
	t.Helper()
	h := &profHome{home: workspace(t), ws: workspace(t)}
	h.env = []string{
		"HOME=" + h.home,
		"XDG_STATE_HOME=" + filepath.Join(h.home, ".local", "state"),
		"XDG_CONFIG_HOME=" + filepath.Join(h.home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(h.home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(h.home, ".local", "share"),
	}
	return h
}

func (h *profHome) path(tilde string) string {
	return filepath.Join(h.home, strings.TrimPrefix(tilde, "~/"))
}

// writeHome writes the host's files under HOME (~/...: content) as a
// user's private state: 0600 in 0700 directories.
func (h *profHome) writeHome(t *testing.T, files map[string]string) {
	t.Helper()
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(h.path(p)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(h.path(p), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// homeKept fails t for each of the host's files (~/...: content) a run
// changed; why says what the host's tool does with them.
func (h *profHome) homeKept(t *testing.T, files map[string]string, why string) {
	t.Helper()
	for p, c := range files {
		if b, _ := os.ReadFile(h.path(p)); string(b) != c {
			t.Errorf("the host's %s was rewritten from inside (%s): %q", p, why, b)
		}
	}
}

// homeLacks fails t for each of paths (~/...), written inside, that is in
// the host's HOME after a run.
func (h *profHome) homeLacks(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(h.path(p)); err == nil {
			t.Errorf("%s, written inside, is in the host's HOME", p)
		}
	}
}

// linkClaude makes ~/.claude a symlink to the workspace's claude/ (a
// dotfiles repository's, the run in it) and returns that directory.
func (h *profHome) linkClaude(t *testing.T) string {
	t.Helper()
	dots := filepath.Join(h.ws, "claude")
	if err := os.MkdirAll(dots, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dots, h.path("~/.claude")); err != nil {
		t.Fatal(err)
	}
	return dots
}

// jailCache is where jail keeps a profile's cache for a path under HOME.
func (h *profHome) jailCache(profile, tilde string) string {
	return filepath.Join(h.home, ".cache", "jail", "cache", profile, "home", strings.TrimPrefix(tilde, "~/"))
}

// profCase is what one profile grants, written out independently of the
// profile's file: a change to either shows here.
type profCase struct {
	name    string
	extends []string          // other profiles the command line adds
	dirs    []string          // writable directories (~/...), created when missing
	files   map[string]string // writable files (~/...) and the content they are created with
	caches  map[string]string // cache path (~/...) -> the profile that owns it
	// readonly are executables the agent keeps in its writable state and
	// the host runs next (~/...): present on the host, never writable inside.
	readonly []string
	domains  []string
	env      []string // passed when set
	setenv   map[string]string
	// The host's tool configuration (package toolreg): variables jail
	// starts with and files (~/...) in the host's HOME; registry hosts come
	// from them, never from the profile (made-up .test hosts here).
	hostenv   []string
	hostfiles map[string]string
}

var profCases = []profCase{
	{name: "claude", dirs: []string{"~/.claude"}, files: map[string]string{"~/.claude.json": "{}\n"},
		caches:   map[string]string{"~/.claude/shell-snapshots": "claude", "~/.claude/session-env": "claude", "~/.claude/projects": "claude", "~/.claude/file-history": "claude", "~/.claude/sessions": "claude", "~/.claude/jobs": "claude", "~/.claude/daemon": "claude", "~/.claude/backups": "claude", "~/.claude/state": "claude", "~/.claude/agent-memory": "claude", "~/.claude/memory": "claude"},
		readonly: []string{"~/.claude/local/claude"},
		domains:  []string{"api.anthropic.com", "platform.claude.com"},
		env:      []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"},
		setenv:   map[string]string{"IS_SANDBOX": "1", "DISABLE_AUTOUPDATER": "1"}},
	{name: "codex", dirs: []string{"~/.codex"}, caches: map[string]string{"~/.codex/packages": "codex", "~/.codex/app-server-daemon": "codex", "~/.codex/app-server-control": "codex", "~/.codex/tmp": "codex", "~/.codex/.tmp": "codex", "~/.codex/shell_snapshots": "codex", "~/.codex/sessions": "codex", "~/.codex/archived_sessions": "codex"},
		domains: []string{"api.openai.com", "auth.openai.com", "chatgpt.com"},
		env:     []string{"OPENAI_API_KEY", "CODEX_API_KEY"}},
	{name: "gemini", dirs: []string{"~/.gemini"}, caches: map[string]string{"~/.gemini/history": "gemini", "~/.gemini/tmp": "gemini"},
		domains: []string{"generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com", "oauth2.googleapis.com", "www.googleapis.com"},
		env:     []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_GENAI_USE_VERTEXAI"},
		setenv:  map[string]string{"GEMINI_SANDBOX": "false", "NO_BROWSER": "true"}},
	{name: "qwen", dirs: []string{"~/.qwen"}, caches: map[string]string{"~/.qwen/history": "qwen", "~/.qwen/tmp": "qwen"},
		domains: []string{"dashscope.aliyuncs.com", "dashscope-intl.aliyuncs.com", "dashscope-us.aliyuncs.com", "cn-hongkong.dashscope.aliyuncs.com", "coding.dashscope.aliyuncs.com", "coding-intl.dashscope.aliyuncs.com", "chat.qwen.ai"},
		env:     []string{"DASHSCOPE_API_KEY", "BAILIAN_CODING_PLAN_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "QWEN_DEFAULT_AUTH_TYPE"},
		setenv:  map[string]string{"QWEN_SANDBOX": "false", "NO_BROWSER": "true"}},
	{name: "opencode", dirs: []string{"~/.local/share/opencode", "~/.local/state/opencode"},
		caches:  map[string]string{"~/.cache/opencode": "opencode", "~/.local/share/opencode/snapshot": "opencode"},
		domains: []string{"api.anthropic.com", "api.openai.com", "openrouter.ai", "models.dev", "models.opencode.ai", "opencode.ai", "registry.test"},
		env:     []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY"},
		setenv:  map[string]string{"OPENCODE_DISABLE_AUTOUPDATE": "1"},
		hostenv: []string{"npm_config_registry=https://registry.test/"}},
	{name: "aider", dirs: []string{"~/.aider"},
		domains: []string{"api.openai.com", "api.anthropic.com", "openrouter.ai"},
		env:     []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY", "DEEPSEEK_API_KEY"},
		setenv:  map[string]string{"AIDER_CHECK_UPDATE": "false"}},
	{name: "goose", dirs: []string{"~/.local/share/goose", "~/.local/state/goose", "~/.config/goose"},
		domains: []string{"api.anthropic.com", "api.openai.com", "generativelanguage.googleapis.com", "openrouter.ai"},
		env:     []string{"GOOSE_PROVIDER", "GOOSE_MODEL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GOOGLE_API_KEY", "OPENROUTER_API_KEY"},
		setenv:  map[string]string{"GOOSE_DISABLE_KEYRING": "1"}},
	{name: "copilot", dirs: []string{"~/.copilot"},
		domains:  []string{"api.githubcopilot.com", "api.individual.githubcopilot.com", "api.business.githubcopilot.com", "api.enterprise.githubcopilot.com", "api.github.com", "github.com"},
		readonly: []string{"~/.copilot/pkg/universal/1.0.0/index.js"},
		env:      []string{"COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"},
		setenv:   map[string]string{"COPILOT_AUTO_UPDATE": "false"}},
	{name: "go", caches: map[string]string{"~/go/pkg/mod": "go", "~/.cache/go-build": "go"},
		domains: []string{"goproxy.test", "sumdb.test", "git.corp.test"},
		env:     []string{"GOFLAGS", "GOPRIVATE", "GONOSUMDB", "GONOPROXY", "GOTOOLCHAIN"},
		hostenv: []string{"GOPROXY=https://goproxy.test/mod,direct", "GOSUMDB=sumdb.test+k https://sumdb.test", "GONOPROXY=git.corp.test/team/*"}},
	{name: "node", caches: map[string]string{"~/.npm": "node", "~/.cache/pnpm": "node", "~/.local/share/pnpm": "node", "~/.cache/yarn": "node"},
		domains:   []string{"registry.test", "npm.corp.test"},
		env:       []string{"NODE_ENV", "NPM_CONFIG_REGISTRY"},
		hostenv:   []string{"NPM_CONFIG_REGISTRY=https://registry.test/"},
		hostfiles: map[string]string{"~/.npmrc": "@corp:registry=https://npm.corp.test:8443/\n"}},
	{name: "python", caches: map[string]string{"~/.cache/pip": "python", "~/.cache/uv": "python"},
		domains:   []string{"pypi-mirror.test", "extra-index.test"},
		env:       []string{"PIP_INDEX_URL", "UV_INDEX_URL", "VIRTUAL_ENV"},
		hostenv:   []string{"PIP_INDEX_URL=https://pypi-mirror.test/simple"},
		hostfiles: map[string]string{"~/.config/pip/pip.conf": "[global]\nextra-index-url = https://extra-index.test/simple\n"}},
	{name: "rust", caches: map[string]string{"~/.cargo/registry": "rust", "~/.cargo/git": "rust"},
		domains:   []string{"crates-mirror.test", "crates-alt.test"},
		env:       []string{"CARGO_TARGET_DIR", "RUSTFLAGS", "CARGO_BUILD_JOBS"},
		hostfiles: map[string]string{"~/.cargo/config.toml": "[source.crates-io]\nreplace-with = \"mirror\"\n[source.mirror]\nregistry = \"sparse+https://crates-mirror.test/index/\"\n[registries.alt]\nindex = \"https://crates-alt.test/git/index\"\n"}},
	// An agent with a toolchain: the two grants add up.
	{name: "claude", extends: []string{"go"}, dirs: []string{"~/.claude"}, files: map[string]string{"~/.claude.json": "{}\n"},
		caches:  map[string]string{"~/.claude/shell-snapshots": "claude", "~/.claude/session-env": "claude", "~/.claude/projects": "claude", "~/.claude/file-history": "claude", "~/.claude/sessions": "claude", "~/.claude/jobs": "claude", "~/.claude/daemon": "claude", "~/go/pkg/mod": "go", "~/.cache/go-build": "go"},
		domains: []string{"api.anthropic.com", "platform.claude.com", "goproxy.test", "sumdb.test"},
		env:     []string{"ANTHROPIC_API_KEY", "GOFLAGS"},
		hostenv: []string{"GOPROXY=https://goproxy.test", "GOSUMDB=sumdb.test"}},
}

// The one more of each that no profile grants.
const (
	profExtraDomain = "example.org"
	profExtraEnv    = "AWS_SECRET_ACCESS_KEY"
	profExtraDir    = "~/.standin-extra"
)

// standIn is the stand-in agent's script for c: it reports what worked.
func (c profCase) standIn() string {
	var b strings.Builder
	b.WriteString("set -u\n")
	for _, d := range c.dirs {
		fmt.Fprintf(&b, "echo standin > %s/standin && echo 'wrote %s'\n", shTilde(d), d)
	}
	for f := range c.files {
		// Valid JSON without any guarded key: the guard keeps it.
		fmt.Fprintf(&b, "printf '{\"standin\": 1}\\n' > %s && echo 'wrote %s'\n", shTilde(f), f)
	}
	for p := range c.caches {
		fmt.Fprintf(&b, "echo standin > %s/standin && echo 'wrote %s'\n", shTilde(p), p)
	}
	for _, p := range c.readonly {
		fmt.Fprintf(&b, "echo replaced > %[1]s 2>/dev/null && echo 'replaced %[2]s'\n", shTilde(p), p)
	}
	fmt.Fprintf(&b, "mkdir -p %[1]s && echo standin > %[1]s/standin && echo 'wrote %[2]s'\n", shTilde(profExtraDir), profExtraDir)
	b.WriteString("echo standin > /usr/standin 2>/dev/null && echo 'wrote /usr'\n")
	for _, d := range append(append([]string{}, c.domains...), profExtraDomain) {
		fmt.Fprintf(&b, "getent hosts %[1]s >/dev/null; echo 'looked up %[1]s'\n", d)
	}
	for _, n := range append(append([]string{}, c.env...), profExtraEnv) {
		fmt.Fprintf(&b, "[ -n \"${%[1]s:-}\" ] && echo 'env %[1]s set'\n", n)
	}
	for n := range c.setenv {
		fmt.Fprintf(&b, "echo \"setenv %[1]s=${%[1]s:-}\"\n", n)
	}
	b.WriteString("echo standin-done\n")
	return b.String()
}

func shTilde(p string) string { return `"$HOME"/` + strings.TrimPrefix(p, "~/") }

func TestProfileStandIns(t *testing.T) {
	for _, c := range profCases {
		name := strings.Join(append([]string{c.name}, c.extends...), "+")
		t.Run(name, func(t *testing.T) {
			h := newProfHome(t)
			// The host has a cache of its own at every cache path: it must
			// stay as it is and unseen.
			for p := range c.caches {
				if err := os.MkdirAll(h.path(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(h.path(p), "host-entry"), []byte("host"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range c.readonly {
				if err := os.MkdirAll(filepath.Dir(h.path(p)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(h.path(p), []byte("host"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for p, content := range c.hostfiles {
				if err := os.MkdirAll(filepath.Dir(h.path(p)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(h.path(p), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := append([]string{}, h.env...)
			secret := "sekrit-" + marker()
			for _, n := range append(append([]string{}, c.env...), profExtraEnv) {
				env = append(env, n+"="+secret)
			}
			env = append(env, c.hostenv...) // after: the host's configuration wins
			trail := filepath.Join(workspace(t), "trail.jsonl")
			args := []string{"--profile", c.name}
			for _, e := range c.extends {
				args = append(args, "--profile", e)
			}
			args = append(args, "--audit", trail, "--", "/bin/sh", "-c", c.standIn()+
				// The host's cache entries are not visible inside.
				"for f in "+cacheProbe(c)+"; do [ -e \"$f\" ] && echo \"saw host cache $f\"; done; true\n")
			r := run(t, runOpts{dir: h.ws, env: env}, args...)
			mustCode(t, r, 0)
			if !strings.Contains(r.stdout, "standin-done") {
				t.Fatalf("the stand-in did not finish:\n%s\n%s", r.stdout, r.stderr)
			}
			out := r.stdout
			want := func(line string) {
				t.Helper()
				if !strings.Contains(out, line+"\n") {
					t.Errorf("want %q in the stand-in's output:\n%s\nstderr:\n%s", line, out, r.stderr)
				}
			}
			never := func(line string) {
				t.Helper()
				if strings.Contains(out, line) {
					t.Errorf("%q in the stand-in's output:\n%s", line, out)
				}
			}
			// Paths: the granted ones were written and persisted on the host.
			for _, d := range c.dirs {
				want("wrote " + d)
				if _, err := os.Stat(filepath.Join(h.path(d), "standin")); err != nil {
					t.Errorf("%s/standin did not persist on the host: %v", d, err)
				}
			}
			for f := range c.files {
				want("wrote " + f)
				if b, _ := os.ReadFile(h.path(f)); !strings.Contains(string(b), "standin") {
					t.Errorf("%s on the host after the run: %q, want the stand-in's", f, b)
				}
			}
			// Caches: written into jail's own, never the host's.
			for p, owner := range c.caches {
				want("wrote " + p)
				if _, err := os.Stat(filepath.Join(h.jailCache(owner, p), "standin")); err != nil {
					t.Errorf("cache %s: not in jail's cache %s: %v", p, h.jailCache(owner, p), err)
				}
				if _, err := os.Stat(filepath.Join(h.path(p), "standin")); err == nil {
					t.Errorf("cache %s: the stand-in wrote the HOST's cache", p)
				}
			}
			never("saw host cache")
			for _, p := range c.readonly {
				never("replaced " + p)
				if b, _ := os.ReadFile(h.path(p)); string(b) != "host" {
					t.Errorf("%s, which the host runs, was replaced from inside: %q", p, b)
				}
			}
			// One more path: written to the sandbox's private home only.
			if _, err := os.Stat(h.path(profExtraDir)); err == nil {
				t.Errorf("%s persisted on the host: the profile grants more than it says", profExtraDir)
			}
			never("wrote /usr")
			// Domains: the trail's DNS decisions: the granted names are
			// allowed, one more is refused.
			tb, err := os.ReadFile(trail)
			if err != nil {
				t.Fatal(err)
			}
			dns := map[string]string{}
			for _, line := range strings.Split(string(tb), "\n") {
				var ev struct{ Type, Name, Qtype, Decision string }
				if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "dns" && ev.Qtype == "A" {
					dns[ev.Name] = ev.Decision
				}
			}
			for _, d := range c.domains {
				want("looked up " + d)
				if dns[d] != "allow" {
					t.Errorf("DNS for %s, which the profile grants: %q in the trail, want allow", d, dns[d])
				}
			}
			if dns[profExtraDomain] != "deny" {
				t.Errorf("DNS for %s, which no profile grants: %q in the trail, want deny", profExtraDomain, dns[profExtraDomain])
			}
			// Variables: passed when set, one more not, values never shown.
			for _, n := range c.env {
				want("env " + n + " set")
			}
			never("env " + profExtraEnv + " set")
			for n, v := range c.setenv {
				want("setenv " + n + "=" + v)
			}
			if strings.Contains(r.stderr, secret) || strings.Contains(string(tb), secret) {
				t.Errorf("a passed variable's value was shown by jail (stderr or trail)")
			}
			// The host's caches are as they were.
			for p := range c.caches {
				if b, err := os.ReadFile(filepath.Join(h.path(p), "host-entry")); err != nil || string(b) != "host" {
					t.Errorf("the host's cache %s changed: %q %v", p, b, err)
				}
			}
		})
	}
}

func cacheProbe(c profCase) string {
	var ps []string
	for p := range c.caches {
		ps = append(ps, shTilde(p)+"/host-entry")
	}
	sort.Strings(ps)
	if len(ps) == 0 {
		return "/nonexistent-probe"
	}
	return strings.Join(ps, " ")
}

// A cache persists across runs in jail's own directory, per profile; only
// host-caches (the user's explicit choice) hands the host's own over.
func TestProfileCachePersistsAndHostCachesOptIn(t *testing.T) {
	h := newProfHome(t)
	r := sh(t, runOpts{dir: h.ws, env: h.env}, `echo one > ~/.cache/go-build/entry && echo ok`, "--profile", "go")
	mustCode(t, r, 0)
	r = sh(t, runOpts{dir: h.ws, env: h.env}, `cat ~/.cache/go-build/entry`, "--profile", "go")
	mustCode(t, r, 0)
	if strings.TrimSpace(r.stdout) != "one" {
		t.Fatalf("the cache did not persist across runs: %q\n%s", r.stdout, r.stderr)
	}
	if _, err := os.Stat(h.path("~/.cache/go-build/entry")); err == nil {
		t.Fatalf("the host's build cache was written")
	}
	// A cache from a flag is the default one, not the go profile's.
	r = sh(t, runOpts{dir: h.ws, env: h.env}, `cat ~/.cache/go-build/entry 2>/dev/null || echo empty`, "--cache", "~/.cache/go-build")
	mustCode(t, r, 0)
	if strings.TrimSpace(r.stdout) != "empty" {
		t.Errorf("the default cache shares the go profile's: %q", r.stdout)
	}
	// The explicit opt-in: the host's own cache, writable.
	if err := os.MkdirAll(h.path("~/.cache/go-build"), 0o755); err != nil {
		t.Fatal(err)
	}
	r = sh(t, runOpts{dir: h.ws, env: h.env}, `echo shared > ~/.cache/go-build/entry`, "--profile", "go", "--host-caches")
	mustCode(t, r, 0)
	if b, err := os.ReadFile(h.path("~/.cache/go-build/entry")); err != nil || string(b) != "shared\n" {
		t.Errorf("--host-caches: the host's cache was not the one written: %q %v", b, err)
	}
	// A cache inside a writable tree covers the host's directory there.
	r = sh(t, runOpts{dir: h.ws, env: h.env}, `echo planted > ~/.cache/go-build/other && echo wrote`, "--profile", "go", "--write", h.path("~/.cache"))
	mustCode(t, r, 0)
	if _, err := os.Stat(h.path("~/.cache/go-build/other")); err == nil {
		t.Errorf("go profile with --write ~/.cache: the host's build cache was written")
	}
	// The cache itself cannot be a visible path.
	r = sh(t, runOpts{dir: h.ws, env: h.env}, `true`, "--cache", "~/.cache", "--write", h.path("~/.cache"))
	if r.code != 125 || !strings.Contains(r.stderr, "cache") {
		t.Errorf("--cache ~/.cache with --write ~/.cache: want exit 125 naming the cache, got %d:\n%s", r.code, r.stderr)
	}
}

// Under --profile claude, the state Claude Code must write is writable, but
// a hook it writes into ~/.claude/settings.json (a command the next run
// outside jail would start) is put back and kept in the quarantine: the
// profile goes through the agent configuration guard.
func TestProfileClaudeHookReverted(t *testing.T) {
	h := newProfHome(t)
	if err := os.MkdirAll(h.path("~/.claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	host := `{"model": "opus"}` + "\n"
	if err := os.WriteFile(h.path("~/.claude/settings.json"), []byte(host), 0o600); err != nil {
		t.Fatal(err)
	}
	script := `printf '{"model": "sonnet", "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch /tmp/pwned-hook"}]}]}}' > ~/.claude/settings.json.tmp && mv ~/.claude/settings.json.tmp ~/.claude/settings.json && sleep 0.3 && echo agent-done`
	r := sh(t, runOpts{dir: h.ws, env: h.env}, script, "--profile", "claude")
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout, "agent-done") {
		t.Fatalf("the agent did not finish:\n%s\n%s", r.stdout, r.stderr)
	}
	b, err := os.ReadFile(h.path("~/.claude/settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("settings.json after the run: %v\n%s", err, b)
	}
	if _, ok := m["hooks"]; ok {
		t.Errorf("the hook written under --profile claude stayed on the host: %s", b)
	}
	if m["model"] != "sonnet" {
		t.Errorf("the agent's ordinary change was lost: %s", b)
	}
	q, _ := filepath.Glob(filepath.Join(h.home, ".local", "state", "jail", "quarantine", "*"))
	if len(q) == 0 {
		t.Errorf("nothing in the quarantine; stderr:\n%s", r.stderr)
	}
}

// Without a mount namespace (degraded mode) a cache cannot be put in place;
// the host's own directory at that path must not be handed over instead.
func TestProfileCacheDegradedNotHost(t *testing.T) {
	h := newProfHome(t)
	if err := os.MkdirAll(h.path("~/.cache/go-build"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := sh(t, runOpts{dir: h.ws, env: h.env}, `echo planted > ~/.cache/go-build/entry 2>/dev/null && echo WROTE; true`,
		"--x-degraded", "--cache", "~/.cache/go-build")
	mustCode(t, r, 0)
	if strings.Contains(r.stdout, "WROTE") {
		t.Fatalf("degraded mode: the host's cache was writable through --cache")
	}
	if _, err := os.Stat(h.path("~/.cache/go-build/entry")); err == nil {
		t.Fatalf("degraded mode: an entry was planted in the host's cache")
	}
	if !strings.Contains(r.stderr, "caches are not writable") {
		t.Errorf("degraded mode: no notice that the cache is unavailable:\n%s", r.stderr)
	}
}

// Codex's ChatGPT sign-in redirects the browser to
// http://127.0.0.1:1455/auth/callback: the codex profile publishes it, so a
// server there inside answers the host's 127.0.0.1:1455.
func TestProfileCodexCallbackPublished(t *testing.T) {
	if l, err := net.Listen("tcp", "127.0.0.1:1455"); err != nil {
		if inCI() {
			t.Fatalf("port 1455 is busy on the host: %v", err)
		}
		t.Skipf("port 1455 is busy on the host: %v", err)
	} else {
		l.Close()
	}
	h := newProfHome(t)
	mark := "callback-" + marker()
	if err := os.WriteFile(filepath.Join(h.ws, "callback"), []byte(mark), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `/usr/bin/python3 -m http.server --bind 127.0.0.1 1455 >/dev/null 2>&1 &
i=0; while [ ! -e done ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; kill %1`
	cmd := exec.Command(jail(t), "--quiet", "--profile", "codex", "--", "/bin/sh", "-c", script)
	cmd.Dir, cmd.Env = h.ws, append(os.Environ(), h.env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		os.WriteFile(filepath.Join(h.ws, "done"), nil, 0o644)
		cmd.Wait()
	}()
	c := http.Client{Timeout: 2 * time.Second}
	var body string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		resp, err := c.Get("http://127.0.0.1:1455/callback")
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if body = string(b); body == mark {
			return
		}
	}
	t.Fatalf("127.0.0.1:1455 on the host did not reach the sandbox's server under --profile codex (last body %q)", body)
}

// --dry-run with a profile on a fresh account: the plan is shown, what the
// profile would create is said, and nothing is created.
func TestProfileDryRunCreatesNothing(t *testing.T) {
	h := newProfHome(t)
	r := run(t, runOpts{dir: h.ws, env: h.env}, "--dry-run", "--profile", "claude", "--profile", "codex", "--", "true")
	mustCode(t, r, 0)
	if !strings.Contains(r.stderr, "would create ~/.claude.json") {
		t.Errorf("--dry-run does not say what the profile would create:\n%s", r.stderr)
	}
	for _, p := range []string{"~/.claude", "~/.claude.json", "~/.codex"} {
		if _, err := os.Lstat(h.path(p)); err == nil {
			t.Errorf("--dry-run created %s", p)
		}
	}
}

// Copilot CLI 1.0.102 makes ~/.copilot/installed-plugins at every start:
// the profile makes it first, so that it is there read-only (plugins bring
// hooks and MCP servers) instead of created inside and moved to the
// quarantine at each start of a fresh account, twice, with two notices.
func TestProfileCopilotPluginsDirMade(t *testing.T) {
	home, env := everydayHome(t)
	ws := workspace(t)
	r := run(t, runOpts{dir: ws, env: env}, "-P", "copilot", "--", "/bin/sh", "-c",
		`mkdir -p ~/.copilot/installed-plugins && echo made; touch ~/.copilot/installed-plugins/p.json 2>/dev/null && echo WROTE; true`)
	if r.code != 0 || r.stdout != "made\n" || strings.Contains(r.stderr, "quarantine") {
		t.Errorf("exit %d, stdout %q, want made and nothing moved\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if fi, err := os.Stat(filepath.Join(home, ".copilot", "installed-plugins")); err != nil || !fi.IsDir() {
		t.Errorf("~/.copilot/installed-plugins after the run: %v", err)
	}
}

// opencode 1.18.33 writes ~/.config/opencode/.gitignore at every start
// when it is missing, and stops with "Unexpected server error" when it
// cannot (the directory is read-only inside): the profile makes the file
// on the host first, with opencode's own content, and it reads inside.
func TestProfileOpencodeGitignoreMade(t *testing.T) {
	home, env := everydayHome(t)
	ws := workspace(t)
	want := "node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore"
	r := run(t, runOpts{dir: ws, env: env}, "-P", "opencode", "--", "/bin/sh", "-c",
		`cat ~/.config/opencode/.gitignore; echo x >> ~/.config/opencode/.gitignore 2>/dev/null && echo WROTE; true`)
	if r.code != 0 || r.stdout != want {
		t.Errorf("exit %d, stdout %q, want %q\nstderr: %s", r.code, r.stdout, want, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(home, ".config", "opencode", ".gitignore")); err != nil || string(b) != want {
		t.Errorf("the host's ~/.config/opencode/.gitignore: %q, %v", b, err)
	}
}
