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
