package agentcfg

// Format is how a guarded file is read.
type Format string

const (
	// JSON: JSON with comments and trailing commas (see jsonc.go). Protected
	// keys are put back by splicing bytes; the rest stays as written.
	JSON Format = "json"
	// TOML: decoded and, when a protected key must be put back, encoded
	// again (comments and key order are not kept in that case; the agent's
	// version is in the quarantine).
	TOML Format = "toml"
	// Whole: not parsed; every change is reverted (files that are nothing
	// but commands and approvals).
	Whole Format = "whole"
)

// Scope says what Path is relative to.
type Scope string

const (
	// Home: relative to $HOME.
	Home Scope = "home"
	// Project: relative to the workspace and every other writable directory.
	Project Scope = "project"
)

// File is one agent configuration file that the agent may write (so it
// cannot simply be read-only) but that names commands.
type File struct {
	Agent  string `json:"agent"`
	Scope  Scope  `json:"scope"`
	Path   string `json:"path"`
	Format Format `json:"format"`
	Keys   []Key  `json:"keys,omitempty"`
	// Why: what the protected keys do, for --dry-run and the README.
	Why string `json:"why"`
}

// Key is a protected key path: dot-separated keys from the document's top
// ("projects.*.mcpServers"); "*" stands for any one key. Its value must stay
// what it was on the host at start (absent stays absent).
type Key struct {
	Path string `json:"path"`
	// Except names places inside (or equal to) a matched path that the agent
	// may still change: the sign-in choice inside Gemini's "security", the
	// trust of the workspace itself.
	Except []Except `json:"except,omitempty"`
	// FalseIsSet: false here is the user's choice, not what absence says.
	// For most keys false, "", {} and [] read as absent (agents write such
	// defaults); a switch whose default is on and whose false tightens
	// (Claude Code's remoteTools) would otherwise lose the host's false to
	// an agent that dropped the key.
	FalseIsSet bool `json:"false_is_set,omitempty"`
}

// Except is one exception. Path is a full key path from the document's top;
// the element "{workspace}" stands for the workspace's path. With Value (a
// JSON literal) set, the exception holds only while the agent's value is
// exactly that.
type Except struct {
	Path  string `json:"path"`
	Value string `json:"value,omitempty"`
	// Item makes the exception one element of the array at Path: the agent
	// may add or drop the string Item (placeholders filled) there, and
	// nothing else in the array. Copilot CLI keeps every folder it trusts
	// in one list, where a whole-path exception would hand over all of it.
	Item string `json:"item,omitempty"`
}

// The key lists below are composite literals, not built by a function, so
// that the compiler lays them out in the binary: a call here would run in
// the package init of every jail process (issue 16).

// Keys every Claude Code settings file protects (user, project and local
// settings share one schema). Found in the settings schema of Claude Code
// 2.1.197 (the zod schema in the CLI) and its settings documentation, and
// in 2.1.332's schema.
var claudeSettingsKeys = []Key{
	// Commands: hooks, helpers, status lines.
	{Path: "hooks"}, {Path: "disableAllHooks"}, {Path: "allowManagedHooksOnly"}, {Path: "allowedHttpHookUrls"}, {Path: "httpHookAllowedEnvVars"},
	{Path: "statusLine"}, {Path: "subagentStatusLine"}, {Path: "fileSuggestion"},
	{Path: "apiKeyHelper"}, {Path: "proxyAuthHelper"}, {Path: "awsAuthRefresh"}, {Path: "awsCredentialExport"}, {Path: "gcpAuthRefresh"},
	{Path: "otelHeadersHelper"}, {Path: "policyHelper"},
	// Environment of every session (NODE_OPTIONS, PATH, *_BASE_URL...).
	{Path: "env"},
	// MCP servers and plugins (plugins bring hooks and MCP servers).
	{Path: "mcpServers"}, {Path: "enableAllProjectMcpServers"}, {Path: "enabledMcpjsonServers"}, {Path: "disabledMcpjsonServers"},
	{Path: "allowedMcpServers"}, {Path: "deniedMcpServers"}, {Path: "allowManagedMcpServersOnly"},
	{Path: "enabledPlugins"}, {Path: "extraKnownMarketplaces"}, {Path: "strictKnownMarketplaces"}, {Path: "blockedMarketplaces"}, {Path: "pluginConfigs"},
	// Approvals and Claude Code's own sandbox.
	{Path: "permissions"}, {Path: "allowManagedPermissionRulesOnly"}, {Path: "sandbox"}, {Path: "skipDangerousModePermissionPrompt"},
	{Path: "disableSkillShellExecution"},
	// Remote hosts Claude Code connects to with the user's SSH identity.
	{Path: "sshConfigs"},
	// Remote Control at every session's start, transcripts uploaded (as in
	// ~/.claude.json, which these override).
	{Path: "remoteControlAtStartup"}, {Path: "autoUploadSessions"},
	// Added in 2.1.332's schema (session 24). Commands: an argv prefix for
	// its background supervisor, sessions and workers; helper programs per
	// OS; the shell of "!" commands; the commands Claude Desktop runs to
	// find an SSH host.
	{Path: "processWrapper"}, {Path: "policyHelpers"}, {Path: "defaultShell"}, {Path: "sshHostCommands"},
	// Where sign-in goes (an IdP's issuer, a gateway the login pre-fills,
	// honored from user settings where nothing is managed).
	{Path: "xaaIdp"}, {Path: "forceLoginGatewayUrl"}, {Path: "forceLoginMethod"}, {Path: "gatewayInternalNetworks"},
	// Who may run or send what into this machine's sessions: cloud
	// sessions' tool calls served here (on by default: the host's false
	// says a person approves each), what Remote Control reports, other
	// sessions' messages, MCP channels pushing messages in, claude.ai's
	// MCP connectors.
	{Path: "remoteTools", FalseIsSet: true}, {Path: "remoteControl"}, {Path: "crossSessionInbound"}, {Path: "isolatePeerMachines"},
	{Path: "channelsEnabled"}, {Path: "allowedChannelPlugins"}, {Path: "allowAllClaudeAiMcps"},
	// Plugin sources, the model catalog (its URL and signing key), the
	// update mirror and the version bounds (one could hold the host's
	// claude on an old release).
	{Path: "additionalMarketplaces"}, {Path: "allowedMarketplaces"}, {Path: "pluginSuggestionMarketplaces"},
	{Path: "modelCatalogUrl"}, {Path: "modelCatalogPublicKey"},
	{Path: "downloadsMirrorUrl"}, {Path: "minimumVersion"}, {Path: "requiredMinimumVersion"}, {Path: "requiredMaximumVersion"},
	// Where the host's sessions keep what they read back as instructions
	// (auto memory, plans), and what a new worktree links in.
	{Path: "autoMemoryDirectory"}, {Path: "plansDirectory"}, {Path: "worktree"},
}

// Keys Codex protects in config.toml (user and project), from the config
// schema of Codex CLI 0.171.0 (ConfigToml's fields) and its config reference.
var codexKeys = []Key{
	{Path: "notify"}, {Path: "mcp_servers"}, {Path: "hooks"}, {Path: "plugins"},
	{Path: "sandbox_mode"}, {Path: "sandbox_workspace_write"}, {Path: "approval_policy"},
	{Path: "approvals_reviewer"}, {Path: "auto_review"}, {Path: "default_permissions"}, {Path: "permissions"},
	{Path: "shell_environment_policy"}, {Path: "allow_login_shell"},
	{Path: "model_providers"}, {Path: "openai_base_url"}, {Path: "chatgpt_base_url"}, {Path: "otel"},
	{Path: "js_repl_node_path"}, {Path: "js_repl_node_module_dirs"},
	// Where the host's codex keeps its databases (queued messages it sends
	// as the user's, memories): read-only in ~/.codex inside, elsewhere if
	// the agent could name its own directory here (codexmem).
	{Path: "sqlite_home"},
	// The memories feature and its switches: on, the host's codex turns the
	// rollouts in sessions/ (which the sandbox writes, the agent's own
	// too) into memory_summary.md, every later session's instructions; the
	// user turns it on (codexmem).
	{Path: "features.memories"}, {Path: "memories"},
	{Path: "profiles"}, {Path: "agents"},
	// Instructions: the host's codex sends developer_instructions and the
	// file model_instructions_file names as developer messages in every
	// session (0.171, tried against a local endpoint: review20a), as it
	// does ~/.codex/AGENTS.md, which is read-only inside; the compact
	// prompt writes the summary a long session continues from; the
	// fallback names of the project doc (an absolute one is any file) and
	// the model catalog (each model's base instructions) are read as
	// instructions too; the realtime (voice) session's instructions.
	{Path: "instructions"}, {Path: "developer_instructions"}, {Path: "model_instructions_file"},
	{Path: "compact_prompt"}, {Path: "experimental_compact_prompt_file"},
	{Path: "project_doc_fallback_filenames"}, {Path: "model_catalog_json"},
	{Path: "experimental_realtime_start_instructions"}, {Path: "experimental_realtime_ws_backend_prompt"},
	{Path: "experimental_realtime_ws_startup_context"},
	// Where the host's voice conversation goes (as openai_base_url), and
	// where its threads are kept and read back by resume (as sessions/).
	{Path: "experimental_realtime_ws_base_url"}, {Path: "experimental_realtime_webrtc_call_base_url"},
	{Path: "experimental_thread_store"},
	{Path: "tui.status_line"}, {Path: "tui.status_line_provider"},
	// The workspace's own trust, as Codex's trust screen answers it
	// ("trusted", "untrusted"); any other value (one Codex cannot read
	// fails every later start of it on the host) is put back.
	{Path: "projects.*.trust_level", Except: []Except{{Path: "projects.{workspace}.trust_level", Value: `"trusted"`},
		{Path: "projects.{workspace}.trust_level", Value: `"untrusted"`}}},
}

// Keys Gemini CLI protects in settings.json (user and project), from the
// settings schema of Gemini CLI 0.61.0 (SETTINGS_SCHEMA in the bundle).
var geminiKeys = []Key{
	{Path: "mcpServers"}, {Path: "mcp"}, {Path: "hooks"}, {Path: "hooksConfig"},
	{Path: "tools.discoveryCommand"}, {Path: "tools.callCommand"}, {Path: "tools.sandbox"},
	{Path: "tools.sandboxAllowedPaths"}, {Path: "tools.sandboxNetworkAccess"}, {Path: "tools.allowed"},
	{Path: "tools.core"}, {Path: "tools.confirmationRequired"}, {Path: "tools.shell.pager"},
	{Path: "general.defaultApprovalMode"}, {Path: "advanced.bugCommand"},
	{Path: "experimental.gemmaModelRouter"}, {Path: "extensions"}, {Path: "admin"}, {Path: "telemetry"},
	// The browser agent's session mode (the user's own signed-in browser),
	// profile, allowed domains and confirmations; the registry `gemini
	// extensions install` trusts (a URL or a local file); the directories
	// the host's Gemini CLI works in beside the project (codexmem).
	{Path: "browser"}, {Path: "experimental.extensionRegistryURI"}, {Path: "context.includeDirectories"},
	// Everything under "security" but the sign-in choice Gemini writes.
	{Path: "security", Except: []Except{{Path: "security.auth"}}},
}

// trustAnswers guard a trustedFolders.json of Gemini CLI or Qwen Code
// (folder path -> TRUST_FOLDER, TRUST_PARENT or DO_NOT_TRUST). The answer
// to the prompt about the workspace stays, either way: trusting its parent
// widens the trust, and any other folder is not the one asked about.
// Without DO_NOT_TRUST a user's "Don't trust" was taken out and asked
// again every run.
var trustAnswers = []Key{{Path: "*", Except: []Except{{Path: "{workspace}", Value: `"TRUST_FOLDER"`}, {Path: "{workspace}", Value: `"DO_NOT_TRUST"`}}}}

// Qwen Code keys (user and project settings.json), from the settings
// schema of Qwen Code 0.15.10 (a fork of Gemini CLI, settings version 4)
// and the v1 names its loader still migrates (toolDiscoveryCommand and
// the like are moved to their v2 places and written back).
var qwenKeys = []Key{
	// Commands: MCP servers, hooks, tool discovery, the status line, the
	// editor, its bot channels, its self-update (npm install -g).
	{Path: "mcpServers"}, {Path: "mcp"}, {Path: "hooks"}, {Path: "disableAllHooks"},
	{Path: "tools.discoveryCommand"}, {Path: "tools.callCommand"}, {Path: "tools.shell"},
	{Path: "ui.statusLine"}, {Path: "general.preferredEditor"}, {Path: "general.enableAutoUpdate"},
	{Path: "channels"}, {Path: "ide.enabled"}, {Path: "ideMode"},
	// The environment of the CLI and what it runs (it saves API keys there
	// as env.NAME: give keys with --env instead), the providers' URLs and
	// key names, the proxy.
	{Path: "env"}, {Path: "modelProviders"}, {Path: "proxy"}, {Path: "advanced"},
	// Approvals and the sandbox: what runs without asking.
	{Path: "permissions"}, {Path: "tools.core"}, {Path: "tools.allowed"}, {Path: "tools.exclude"},
	{Path: "tools.approvalMode"}, {Path: "tools.autoAccept"}, {Path: "tools.sandbox"}, {Path: "tools.sandboxImage"},
	{Path: "slashCommands"}, {Path: "dualOutput"}, {Path: "agents"},
	// Where prompts and answers go: telemetry endpoints, the request log.
	{Path: "telemetry"}, {Path: "privacy"}, {Path: "model.enableOpenAILogging"}, {Path: "model.openAILoggingDir"},
	{Path: "context.includeDirectories"}, {Path: "context.loadFromIncludeDirectories"}, {Path: "extensions"},
	// Everything under "security" but the sign-in choice it writes (not
	// security.auth's apiKey or baseUrl: a key or an endpoint of the
	// agent's takes the host's conversations elsewhere).
	{Path: "security", Except: []Except{{Path: "security.auth.selectedType"}}},
	// v1 names, still read and migrated.
	{Path: "toolDiscoveryCommand"}, {Path: "toolCallCommand"}, {Path: "mcpServerCommand"}, {Path: "sandbox"},
	{Path: "coreTools"}, {Path: "allowedTools"}, {Path: "excludeTools"}, {Path: "allowMCPServers"}, {Path: "excludeMCPServers"},
	{Path: "approvalMode"}, {Path: "autoAccept"}, {Path: "bugCommand"}, {Path: "preferredEditor"}, {Path: "includeDirectories"},
	{Path: "enforcedAuthType"}, {Path: "useExternalAuth"}, {Path: "folderTrust"}, {Path: "folderTrustFeature"},
	{Path: "usageStatisticsEnabled"}, {Path: "enableOpenAILogging"}, {Path: "shellPager"},
	{Path: "excludedProjectEnvVars"}, {Path: "tavilyApiKey"},
}

// Files is the table of guarded agent configuration files.
var Files = []File{
	{Agent: "claude", Scope: Home, Path: ".claude.json", Format: JSON, Why: "MCP servers, per-project approvals and MCP choices",
		Keys: []Key{
			{Path: "mcpServers"}, {Path: "apiKeyHelper"}, {Path: "env"},
			{Path: "projects.*.mcpServers"}, {Path: "projects.*.enabledMcpjsonServers"},
			{Path: "projects.*.disabledMcpjsonServers"}, {Path: "projects.*.enableAllProjectMcpServers"},
			{Path: "projects.*.allowedTools"},
			// A project's CLAUDE.md @-includes files outside the project
			// only once this is true: the workspace's CLAUDE.md is the
			// agent's, so with it the host's next session would read
			// @~/.ssh/... into its context unasked (session 24).
			{Path: "projects.*.hasClaudeMdExternalIncludesApproved"},
			// The permission mode a project's session starts in when
			// tengu_nifty_lobster is on (2.1.332: default or acceptEdits,
			// file edits unasked): the host's, but for the workspace, the
			// agent's own project as its trust is (session 25).
			{Path: "projects.*.pickedPermissionMode", Except: []Except{{Path: "projects.{workspace}.pickedPermissionMode"}}},
			{Path: "projects.*.hasTrustDialogAccepted", Except: []Except{{Path: "projects.{workspace}.hasTrustDialogAccepted"}}},
			// Connects every start to the IDE MCP server a
			// ~/.claude/ide/*.lock names (outside an IDE's terminal: no
			// check of the lock's pid), whose tools and notifications
			// reach the session (session 17).
			{Path: "autoConnectIde"},
			// Read from settings, else from here: every host session
			// registered for Remote Control at start (prompts sent through
			// the account's API, whose token the agent reads in ~/.claude,
			// run there as the user's), each transcript uploaded to the
			// account (session 18).
			{Path: "remoteControlAtStartup"}, {Path: "autoUploadSessions"},
			// Feature flags, read from this cache until the live values
			// arrive at start, or all session when they never do (no
			// network to the flag service). The CLI rewrites the whole
			// key at every refresh, so only the flags that decide what the
			// host's session allows unasked are kept (agentstate20): auto
			// mode and text added to its safety classifier's prompt, the
			// classifier turned off, broad allow rules kept in auto mode,
			// the organization's bypass-mode kill switch, Claude in Chrome
			// (the user's signed-in browser) on by default, plugin updates
			// with the user's git credentials.
			{Path: "cachedGrowthBookFeatures.tengu_auto_mode_config"},
			{Path: "cachedGrowthBookFeatures.tengu_classifier_disabled_surfaces"},
			{Path: "cachedGrowthBookFeatures.tengu_ant_yolo_equiv_strip_config"},
			{Path: "cachedGrowthBookFeatures.tengu_disable_bypass_permissions_mode"},
			{Path: "cachedGrowthBookFeatures.tengu_chrome_auto_enable"},
			{Path: "cachedGrowthBookFeatures.tengu_cowork_chrome_automode_default"},
			{Path: "cachedGrowthBookFeatures.tengu_cfc_in_product_permissions"},
			{Path: "cachedGrowthBookFeatures.tengu_plugin_autoupdate_allow_credential_helper"},
			// 2.1.332 saves them as cachedFeatureFlags too and reads
			// cachedGrowthBookFeatures ?? cachedFeatureFlags: the same
			// flags are kept in both (session 24).
			{Path: "cachedFeatureFlags.tengu_auto_mode_config"},
			{Path: "cachedFeatureFlags.tengu_classifier_disabled_surfaces"},
			{Path: "cachedFeatureFlags.tengu_ant_yolo_equiv_strip_config"},
			{Path: "cachedFeatureFlags.tengu_disable_bypass_permissions_mode"},
			{Path: "cachedFeatureFlags.tengu_chrome_auto_enable"},
			{Path: "cachedFeatureFlags.tengu_cowork_chrome_automode_default"},
			{Path: "cachedFeatureFlags.tengu_cfc_in_product_permissions"},
			{Path: "cachedFeatureFlags.tengu_plugin_autoupdate_allow_credential_helper"},
			// Two of 2.1.332's own, read from the cache near its permission
			// code: auto mode's fast path for worktrees, and whether
			// Claude in Chrome's host tools ask (on by default: the
			// agent's false is what loosens it, so false is no absence).
			{Path: "cachedGrowthBookFeatures.tengu_auto_mode_worktree_fast_path"},
			{Path: "cachedFeatureFlags.tengu_auto_mode_worktree_fast_path"},
			{Path: "cachedGrowthBookFeatures.tengu_cozy_eagle", FalseIsSet: true},
			{Path: "cachedFeatureFlags.tengu_cozy_eagle", FalseIsSet: true},
			// Two more that decide the mode a host session starts in
			// (session 25): non-interactive sessions (claude -p, scripts,
			// CI) in auto mode, where what the classifier passes runs
			// unasked, instead of default, where it is refused with no one
			// to ask; and the mode last picked in the project
			// (projects.*.pickedPermissionMode above) restored at start.
			{Path: "cachedGrowthBookFeatures.tengu_moss_anchor"},
			{Path: "cachedFeatureFlags.tengu_moss_anchor"},
			{Path: "cachedGrowthBookFeatures.tengu_nifty_lobster"},
			{Path: "cachedFeatureFlags.tengu_nifty_lobster"},
		}},
	{Agent: "claude", Scope: Home, Path: ".claude/settings.json", Format: JSON, Keys: claudeSettingsKeys, Why: "hooks, helpers, MCP servers, plugins, env, approvals"},
	{Agent: "claude", Scope: Home, Path: ".claude/settings.local.json", Format: JSON, Keys: claudeSettingsKeys, Why: "hooks, helpers, MCP servers, plugins, env, approvals"},
	{Agent: "claude", Scope: Project, Path: ".claude/settings.json", Format: JSON, Keys: claudeSettingsKeys, Why: "hooks, helpers, MCP servers, plugins, env, approvals"},
	{Agent: "claude", Scope: Project, Path: ".claude/settings.local.json", Format: JSON, Keys: claudeSettingsKeys, Why: "hooks, helpers, MCP servers, plugins, env, approvals (written when a permission is approved)"},

	{Agent: "codex", Scope: Home, Path: ".codex/config.toml", Format: TOML, Keys: codexKeys, Why: "notify, MCP servers, hooks, sandbox and approval policy"},
	{Agent: "codex", Scope: Project, Path: ".codex/config.toml", Format: TOML, Keys: codexKeys, Why: "notify, MCP servers, hooks, sandbox and approval policy"},

	{Agent: "gemini", Scope: Home, Path: ".gemini/settings.json", Format: JSON, Keys: geminiKeys, Why: "MCP servers, hooks, tool commands, sandbox and approvals"},
	{Agent: "gemini", Scope: Project, Path: ".gemini/settings.json", Format: JSON, Keys: geminiKeys, Why: "MCP servers, hooks, tool commands, sandbox and approvals"},
	{Agent: "gemini", Scope: Home, Path: ".gemini/trustedFolders.json", Format: JSON, Why: "trusted folders load their own settings and hooks",
		Keys: trustAnswers},

	// Qwen Code 0.15.10: the user's and the project's settings.json (JSON
	// with comments; the project's loads unless folder trust, off by
	// default, says the folder is untrusted), and the trust answers.
	{Agent: "qwen", Scope: Home, Path: ".qwen/settings.json", Format: JSON, Keys: qwenKeys, Why: "MCP servers, hooks, tool commands, the status line, env, sandbox and approvals"},
	{Agent: "qwen", Scope: Project, Path: ".qwen/settings.json", Format: JSON, Keys: qwenKeys, Why: "MCP servers, hooks, tool commands, the status line, env, sandbox and approvals"},
	{Agent: "qwen", Scope: Home, Path: ".qwen/trustedFolders.json", Format: JSON, Why: "trusted folders load their own settings and hooks",
		Keys: trustAnswers},

	// GitHub Copilot CLI 1.0.102: settings.json (user settings, JSONC),
	// config.json (state it manages: trusted folders, plugins), and the
	// repository's settings; keys from `copilot help config`.
	{Agent: "copilot", Scope: Home, Path: ".copilot/settings.json", Format: JSON, Keys: copilotKeys, Why: "hooks, status line, BASH_ENV, approvals, trusted folders, proxy"},
	{Agent: "copilot", Scope: Home, Path: ".copilot/config.json", Format: JSON, Keys: copilotKeys, Why: "trusted folders, plugins, hooks"},
	{Agent: "copilot", Scope: Project, Path: ".github/copilot/settings.json", Format: JSON, Keys: copilotKeys, Why: "repository hooks, status line, approvals"},
	{Agent: "copilot", Scope: Project, Path: ".github/copilot/settings.local.json", Format: JSON, Keys: copilotKeys, Why: "repository hooks, status line, approvals"},
	{Agent: "copilot", Scope: Home, Path: ".copilot/mcp-config.json", Format: JSON, Keys: []Key{{Path: "mcpServers"}}, Why: "MCP servers"},
	{Agent: "copilot", Scope: Home, Path: ".copilot/lsp-config.json", Format: Whole, Why: "language servers (commands)"},
	{Agent: "copilot", Scope: Home, Path: ".copilot/permissions-config.json", Format: Whole, Why: "saved tool and directory approvals"},
}

// Copilot CLI keys (user and repository settings, and the state file).
var copilotKeys = []Key{
	{Path: "hooks"}, {Path: "disableAllHooks"}, {Path: "statusLine"}, {Path: "bashEnv"}, {Path: "powershellFlags"},
	{Path: "mcpServers"}, {Path: "enabledMcpServers"}, {Path: "disabledMcpServers"},
	{Path: "installedPlugins"}, {Path: "enabledPlugins"}, {Path: "marketplaces"},
	// The answer to the trust prompt about the workspace stays: "Yes, and
	// remember this folder" adds the workspace's path to config.json's
	// trustedFolders. Undone, the prompt came back every start (session
	// 56). Any other folder there, a parent above all (it trusts what is
	// below), is still put back.
	{Path: "trustedFolders", Except: []Except{{Path: "trustedFolders", Item: "{workspace}"}}},
	{Path: "allowedUrls"}, {Path: "deniedUrls"}, {Path: "proxyUrl"},
	{Path: "defaultPermissionMode"}, {Path: "defaultMode"}, {Path: "subagents"},
}
