package fsrules

// Agent and editor configuration that starts commands and that an agent
// never needs to write: read-only by mount. (Files an agent must write but
// that also name commands, such as ~/.claude.json, .claude/settings.json or
// ~/.codex/config.toml, are guarded key by key by package agentcfg instead.)
// Kept in a list of its own so the table stays data; appended to Builtins.
var agentBuiltins = []Builtin{
	{".claude/plugins/", ReadOnly, false, "Claude Code plugins bring hooks and MCP servers"},
	{".codex/hooks.json", ReadOnly, false, "Codex hooks run commands"},
	{".codex/hooks/", ReadOnly, false, "Codex hooks run commands"},
	{".gemini/extensions/", ReadOnly, false, "Gemini CLI extensions bring MCP servers and hooks"},
	{".gemini/commands/", ReadOnly, false, "Gemini CLI custom commands run shell snippets"},
	{".copilot/hooks/", ReadOnly, false, "Copilot CLI user hooks"},
	{".copilot/installed-plugins/", ReadOnly, false, "Copilot CLI plugins bring hooks and MCP servers"},
	// Executables an agent keeps in its own writable state and the host
	// runs next: a replaced one runs outside jail.
	{".copilot/pkg/", ReadOnly, false, "Copilot CLI's self-updates: the host's copilot runs the newest one from here"},
	{".claude/local/", ReadOnly, false, "Claude Code's local install: the host's claude runs from here"},
	{".github/hooks/", ReadOnly, false, "Copilot CLI repository hooks"},
	{".cursor/", ReadOnly, false, "Cursor MCP servers, hooks and rules"},
	{".devcontainer/", ReadOnly, false, "initializeCommand runs on the host when the container is built"},
	{".devcontainer.json", ReadOnly, false, "initializeCommand runs on the host when the container is built"},
	{"*.code-workspace", ReadOnly, false, "VS Code workspace tasks and settings run code when opened"},
	{"opencode.json", ReadOnly, false, "opencode MCP servers, plugins, formatter and LSP commands"},
	{"opencode.jsonc", ReadOnly, false, "opencode MCP servers, plugins, formatter and LSP commands"},
	{".opencode/", ReadOnly, false, "opencode plugins (loaded at start) and config"},
	{".config/opencode/", ReadOnly, false, "opencode global config and plugins"},
	{".config/goose/config.yaml", ReadOnly, false, "goose extensions are commands"},
	{".aider.conf.yml", ReadOnly, false, "aider runs its lint-cmd and test-cmd"},
	{"mise.toml", ReadOnly, false, "mise hooks and tasks run on cd and on demand"},
	{".mise.toml", ReadOnly, false, "mise hooks and tasks run on cd and on demand"},
	{"mise.local.toml", ReadOnly, false, "mise hooks and tasks run on cd and on demand"},
	{".mise.local.toml", ReadOnly, false, "mise hooks and tasks run on cd and on demand"},
	{".config/mise/", ReadOnly, false, "mise hooks and tasks run on cd and on demand"},
}

func init() { Builtins = append(Builtins, agentBuiltins...) }

// agentMade are the built-in directories an agent itself creates in its own
// home directory at its first start. Missing at start, they are not watched
// (the sentinel would quarantine the agent's first run, and its mkdir -p
// would fail); once they exist, the next run mounts them read-only as any
// built-in. Safe to let appear because what is in them runs only when a key
// that package agentcfg keeps as on the host names it: Claude Code loads a
// plugin only when enabledPlugins (settings.json) lists it.
var agentMade = map[string]string{
	".claude/plugins/": "Claude Code creates it at its first start; a plugin there runs only when enabledPlugins in settings.json names it, which jail keeps as on the host",
}
