package fsrules

import (
	"slices"
	"strings"
	"sync"

	"github.com/jail-sandbox/jail/internal/asciifold"
)

// Kind is what a mask does.
type Kind int

const (
	// Hide makes a path unreadable and unwritable: the runtime mounts an empty,
	// mode-0, read-only file or directory over it.
	Hide Kind = iota + 1
	// ReadOnly keeps a path readable but not writable: the runtime binds it onto
	// itself read-only.
	ReadOnly
)

func (k Kind) String() string {
	switch k {
	case Hide:
		return "hide"
	case ReadOnly:
		return "read-only"
	}
	return "unknown"
}

// MarshalText makes Kind readable in JSON (--dry-run, audit trail).
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Builtin is one built-in protection. A Name starting with "~/" is anchored
// at each home directory (see Input.Home); any other Name matches at any
// depth ("**/"+Name under each visible root). A trailing '/' means
// directories only. Built-ins match ASCII letters case-insensitively: people
// write SERVER.PEM and .ENV, and on a case-insensitive filesystem (vfat,
// exfat, ext4 casefold) .BASHRC is .bashrc.
type Builtin struct {
	Name string
	Kind Kind
	// Git rules are lifted by --allow-git-config.
	Git bool
	// Why is shown in --help and README.
	Why string
}

// Builtins is the list of built-in protections, on unless --no-default-deny.
//
// What belongs here: secrets by their usual names (Hide), and files that the
// user's own tools load and run later, outside the sandbox (ReadOnly): shell
// and session startup files, PATH directories, tool configurations that name
// commands. A name matches at any depth when it is distinctive (.bashrc,
// .zshenv) or matters in every directory (.envrc, .nvim.lua); it is anchored
// at the home directory ("~/") when the same name is ordinary inside a
// project (bin/, .config/git/, .local/lib/).
var Builtins = []Builtin{
	{".env", Hide, false, "environment files with credentials"},
	{".env.*", Hide, false, "environment files with credentials"},
	{"*.env", Hide, false, "environment files with credentials (prod.env)"},
	// Hidden rather than read-only: direnv runs it on cd, and it often holds
	// credentials itself.
	{".envrc", Hide, false, "direnv runs it on cd; often holds credentials"},
	{"*.pem", Hide, false, "private keys and certificates (not the public CA bundles Python packages ship: certifi/cacert.pem, botocore/cacert.pem, grpc's _credentials/roots.pem)"},
	{"*.key", Hide, false, "private keys"},
	{"*.p12", Hide, false, "PKCS#12 key stores"},
	{"*.pfx", Hide, false, "PKCS#12 key stores"},
	{"*.pkcs12", Hide, false, "PKCS#12 key stores"},
	{"*.p8", Hide, false, "PKCS#8 private keys (AuthKey_*.p8)"},
	{"*.jks", Hide, false, "Java key stores"},
	{"*.keystore", Hide, false, "Java and Android key stores"},
	{"*.ppk", Hide, false, "PuTTY private keys"},
	{"*.kdbx", Hide, false, "KeePass databases"},
	// SSH key files by key type (id_rsa, id_ecdsa_sk, id_ed25519.old, ...):
	// a bare "id_*" would also hide id_generator.go.
	{"id_rsa*", Hide, false, "SSH keys"},
	{"id_dsa*", Hide, false, "SSH keys"},
	{"id_ecdsa*", Hide, false, "SSH keys"},
	{"id_ed25519*", Hide, false, "SSH keys"},
	{"id_xmss*", Hide, false, "SSH keys"},
	{".ssh/", Hide, false, "SSH keys, config (ProxyCommand runs code), authorized_keys"},
	{".aws/", Hide, false, "AWS credentials"},
	{".azure/", Hide, false, "Azure CLI tokens"},
	{".config/gcloud/", Hide, false, "Google Cloud credentials"},
	// The Anthropic SDK's profiles, which Claude Code 2.1.197 reads at every
	// start (ANTHROPIC_PROFILE, else active_config, else "default"):
	// configs/NAME.json names the API's base_url and the credentials file,
	// credentials/NAME.json holds the tokens.
	{".config/anthropic/", Hide, false, "Anthropic API profiles and their credentials (base_url, tokens)"},
	{"*service*account*.json", Hide, false, "cloud service-account keys"},
	{"credentials.json", Hide, false, "OAuth and service credentials"},
	{"client_secret*.json", Hide, false, "OAuth client secrets"},
	{".gnupg/", Hide, false, "GnuPG keys"},
	{".password-store/", Hide, false, "pass password store"},
	{".netrc", Hide, false, "login credentials"},
	{".git-credentials", Hide, false, "git credentials"},
	{".npmrc", Hide, false, "npm tokens; scripts and node options run code"},
	{".pypirc", Hide, false, "PyPI tokens"},
	{".pgpass", Hide, false, "PostgreSQL passwords"},
	{".my.cnf", Hide, false, "MySQL passwords"},
	{".vault-token", Hide, false, "HashiCorp Vault token"},
	{".boto", Hide, false, "AWS and Google Cloud Storage credentials"},
	{".s3cfg", Hide, false, "S3 credentials"},
	{".terraformrc", Hide, false, "Terraform registry tokens"},
	{".terraform.d/credentials.tfrc.json", Hide, false, "Terraform Cloud tokens"},
	{".docker/config.json", Hide, false, "registry credentials"},
	{".kube/config", Hide, false, "Kubernetes credentials"},
	{".config/gh/hosts.yml", Hide, false, "GitHub CLI token"},
	{".cargo/credentials.toml", Hide, false, "cargo registry token"},
	{".cargo/credentials", Hide, false, "cargo registry token"},
	{".gem/credentials", Hide, false, "RubyGems API key"},
	{".mozilla/", Hide, false, "browser cookies and saved passwords"},
	{".config/google-chrome/", Hide, false, "browser cookies and saved passwords"},
	{".config/chromium/", Hide, false, "browser cookies and saved passwords"},
	// The other Chromium browsers hold the same (their cookie store is
	// encrypted with a fixed key where no keyring answers), and each has a
	// NativeMessagingHosts folder: the browser runs the program a
	// manifest there names whenever the extension it names connects
	// (Claude in Chrome registers one in each), so a writable ~/.config
	// would let the agent choose it (session 24).
	{".config/google-chrome-beta/", Hide, false, "browser cookies and saved passwords"},
	{".config/google-chrome-unstable/", Hide, false, "browser cookies and saved passwords"},
	{".config/BraveSoftware/", Hide, false, "browser cookies and saved passwords"},
	{".config/microsoft-edge/", Hide, false, "browser cookies and saved passwords"},
	{".config/microsoft-edge-beta/", Hide, false, "browser cookies and saved passwords"},
	{".config/microsoft-edge-dev/", Hide, false, "browser cookies and saved passwords"},
	{".config/vivaldi/", Hide, false, "browser cookies and saved passwords"},
	{".config/opera/", Hide, false, "browser cookies and saved passwords"},
	{".local/share/keyrings/", Hide, false, "desktop keyring"},

	{".git/hooks/", ReadOnly, true, "hooks run on the next git command"},
	{".git/config", ReadOnly, true, "core.hooksPath, core.fsmonitor, aliases run code"},
	// Not in issue 3's list, same class: with extensions.worktreeConfig this
	// file can set core.hooksPath too.
	{".git/config.worktree", ReadOnly, true, "per-worktree config can set core.hooksPath"},
	{".gitmodules", ReadOnly, true, "submodule URLs and update commands"},
	// Submodules keep their git dirs under .git/modules/<name>/ (nested for
	// nested submodules): same hooks and config, same risk.
	{".git/modules/**/hooks/", ReadOnly, true, "submodule hooks run on git commands in the submodule"},
	{".git/modules/**/config", ReadOnly, true, "submodule config can set core.hooksPath"},
	{".mcp.json", ReadOnly, false, "MCP servers the agent starts next time"},
	{".vscode/", ReadOnly, false, "tasks and settings that run code when the folder opens"},
	{".idea/", ReadOnly, false, "run configurations"},
	{".claude/commands/", ReadOnly, false, "agent commands"},
	{".claude/agents/", ReadOnly, false, "agent definitions"},
	// Skills are commands too (one mechanism in Claude Code): a SKILL.md's
	// !`cmd` lines run when the skill loads, its frontmatter pre-approves
	// tools (allowed-tools) and adds hooks; the model loads a skill on its
	// own when the description fits.
	{".claude/skills/", ReadOnly, false, "agent skills: their !`command` lines and hooks run when a skill loads"},
	// Codex 0.171 loads every SKILL.md under ~/.codex/skills/ (its own
	// system skills included, which it writes to .system/ at start and
	// rewrites only when their marker file's version changes),
	// ~/.agents/skills/, and a project's .codex/skills/ and .agents/skills/
	// (seen in the prompt it sends, codexskills): their descriptions are in
	// every session's instructions, the model loads one on its own when it
	// fits, and a skill's agents/openai.yaml names MCP servers it depends
	// on (installed by the skill_mcp_dependency_install feature).
	{".codex/skills/", ReadOnly, false, "Codex skills: loaded on their own; agents/openai.yaml names MCP servers"},
	{".agents/skills/", ReadOnly, false, "Codex skills: loaded on their own; agents/openai.yaml names MCP servers"},
	// Claude Code 2.1.197 loads ~/.claude/workflows/*.js and a project's
	// .claude/workflows/*.js (meta with whenToUse: offered to the model as
	// skills are) and runs one in a node:vm context of its own process (no
	// boundary: this.constructor.constructor reaches process), driving
	// subagents with its prompts (session 18).
	{".claude/workflows/", ReadOnly, false, "Claude Code workflows: scripts the model starts on its own, run in the claude process"},
	// Claude Code 2.1.197 loads ~/.claude/output-styles/*.md and a
	// project's .claude/output-styles/*.md: the body of the style settings'
	// outputStyle names (by frontmatter name, built-ins' names included)
	// becomes the system prompt of every session, in place of the default
	// coding instructions; the CLI's own self-modification list names the
	// directory beside skills and hooks (session 18, lane O).
	{".claude/output-styles/", ReadOnly, false, "Claude Code output styles: the system prompt of every session using one"},
	// What Claude Code 2.1.197's own sandbox keeps its Bash commands from
	// writing in each project (beside settings, skills, hooks, commands,
	// .mcp.json): launch configurations (the commands its preview starts),
	// routines, scheduled tasks (prompts it runs on a schedule); and the
	// prompt /loop runs when given none (also in ~/.claude) (session 18).
	{".claude/launch.json", ReadOnly, false, "Claude Code launch configurations: commands it starts"},
	{".claude/routines/", ReadOnly, false, "Claude Code routines: prompts it runs on their own"},
	{".claude/scheduled_tasks.json", ReadOnly, false, "Claude Code scheduled tasks: prompts it runs on a schedule"},
	{".claude/loop.md", ReadOnly, false, "the prompt Claude Code's /loop runs when given none"},
	// jail's own config, profiles and trust store decide what the next run
	// may do: nothing inside may read or change them (an agent that could
	// would trust its own .jail.toml, or widen its next sandbox).
	{".config/jail/", Hide, false, "jail's own config, profiles and trusted project files"},

	// Shells: every startup file bash, zsh, sh/dash, csh/tcsh, ksh, fish,
	// nushell, PowerShell and xonsh read.
	{".bashrc", ReadOnly, false, "runs in every new shell"},
	{".bash_profile", ReadOnly, false, "runs at login"},
	{".bash_login", ReadOnly, false, "runs at login (bash)"},
	{".bash_logout", ReadOnly, false, "runs at logout (bash)"},
	{".bash_aliases", ReadOnly, false, "sourced by the usual .bashrc"},
	{".bashrc.d/", ReadOnly, false, "sourced by the usual .bashrc (Fedora)"},
	{".profile", ReadOnly, false, "runs at login"},
	{".zshenv", ReadOnly, false, "runs in every zsh, scripts included"},
	{".zshrc", ReadOnly, false, "runs in every new shell"},
	{".zprofile", ReadOnly, false, "runs at login"},
	{".zlogin", ReadOnly, false, "runs at login (zsh)"},
	{".zlogout", ReadOnly, false, "runs at logout (zsh)"},
	{".cshrc", ReadOnly, false, "runs in every csh/tcsh"},
	{".tcshrc", ReadOnly, false, "runs in every tcsh"},
	{".login", ReadOnly, false, "runs at login (csh/tcsh)"},
	{".logout", ReadOnly, false, "runs at logout (csh/tcsh)"},
	{".kshrc", ReadOnly, false, "runs in every interactive ksh"},
	{".mkshrc", ReadOnly, false, "runs in every interactive mksh"},
	{".xonshrc", ReadOnly, false, "runs in every xonsh"},
	// POSIX sh and dash read the file $ENV names; ~/.shrc by convention.
	{".shrc", ReadOnly, false, "runs in every interactive sh/dash when ENV names it"},
	{".bash_completion", ReadOnly, false, "sourced by bash-completion in every shell"},
	{"~/.local/share/bash-completion/", ReadOnly, false, "completions bash sources when used"},
	{"~/.config/zsh/", ReadOnly, false, "zsh startup files (ZDOTDIR)"},
	{"~/.config/fish/", ReadOnly, false, "fish startup files and functions"},
	{"~/.local/share/fish/", ReadOnly, false, "fish completions, sourced when used"},
	{"~/.config/nushell/", ReadOnly, false, "nushell startup files"},
	{"~/.config/powershell/", ReadOnly, false, "PowerShell profiles"},
	{"~/.config/xonsh/", ReadOnly, false, "xonsh startup files"},
	{"~/.oh-my-zsh/", ReadOnly, false, "sourced by .zshrc (plugins, custom/)"},
	// The user's session and login.
	{"~/.config/systemd/", ReadOnly, false, "user services started by systemd"},
	{"~/.local/share/systemd/", ReadOnly, false, "user services started by systemd"},
	{"~/.config/autostart/", ReadOnly, false, "programs started at desktop login"},
	{"~/.config/environment.d/", ReadOnly, false, "environment of the user's session (PATH, LD_PRELOAD)"},
	{"~/.local/share/applications/", ReadOnly, false, "desktop entries: commands run when a file is opened"},
	{".pam_environment", ReadOnly, false, "environment set at login"},
	{".xprofile", ReadOnly, false, "runs at graphical login"},
	{".xinitrc", ReadOnly, false, "runs on startx"},
	{".xsession", ReadOnly, false, "runs at graphical login"},
	{".xsessionrc", ReadOnly, false, "runs at graphical login (Debian)"},
	{".xserverrc", ReadOnly, false, "runs on startx"},
	{"~/.config/plasma-workspace/", ReadOnly, false, "KDE sources env/*.sh at login"},
	{"~/.config/sway/", ReadOnly, false, "exec lines run at login"},
	{"~/.config/i3/", ReadOnly, false, "exec lines run at login"},
	{"~/.config/hypr/", ReadOnly, false, "exec-once lines run at login"},
	// Directories early in PATH: a program placed there shadows a system one.
	{"~/.local/bin/", ReadOnly, false, "on PATH: a file there shadows a command"},
	{"~/bin/", ReadOnly, false, "on PATH: a file there shadows a command"},
	{"~/.cargo/bin/", ReadOnly, false, "on PATH: a file there shadows a command"},
	{"~/go/bin/", ReadOnly, false, "on PATH: a file there shadows a command"},
	{"~/.deno/bin/", ReadOnly, false, "on PATH: a file there shadows a command"},
	{"~/.bun/bin/", ReadOnly, false, "on PATH: a file there shadows a command"},
	// Python's user site-packages (~/.local/lib/pythonX.Y/site-packages):
	// .pth files and usercustomize run in every python, a module there shadows
	// an installed one.
	{"~/.local/lib/", ReadOnly, false, "Python user site-packages: .pth files run in every python"},
	// Node's global folders (Module.globalPaths: $HOME/.node_modules and
	// $HOME/.node_libraries): a bare require() that no node_modules on the
	// way answers is looked up there, in every node program the user runs
	// (optional dependencies tried in a try/catch, supports-color under
	// debug, fall through to them). Gemini CLI 0.61 looks there at start.
	{"~/.node_modules/", ReadOnly, false, "Node's global folder: a require() no node_modules answers loads from here, in every node program"},
	{"~/.node_libraries/", ReadOnly, false, "Node's global folder: a require() no node_modules answers loads from here, in every node program"},
	// git, direnv.
	{".gitconfig", ReadOnly, false, "git aliases, core.fsmonitor, core.pager run code"},
	{"~/.config/git/", ReadOnly, false, "git config and attributes: aliases, filters run code"},
	{"~/.config/direnv/", ReadOnly, false, "direnv configuration and allow list"},
	{".direnvrc", ReadOnly, false, "direnv sources it before every .envrc"},
	// Mercurial: the same class as git's config (hooks run on hg commands).
	{".hgrc", ReadOnly, false, "Mercurial hooks and extensions run code"},
	{".hg/hgrc", ReadOnly, false, "Mercurial repository hooks run on hg commands"},
	// Editors and tools that run code from their configuration.
	{".vimrc", ReadOnly, false, "vim runs it at start"},
	{".gvimrc", ReadOnly, false, "gvim runs it at start"},
	{".exrc", ReadOnly, false, "vi/vim runs it (exrc)"},
	{".nvimrc", ReadOnly, false, "neovim runs it (exrc)"},
	{".nvim.lua", ReadOnly, false, "neovim runs it (exrc)"},
	{"~/.vim/", ReadOnly, false, "vim plugins run at start"},
	{"~/.config/nvim/", ReadOnly, false, "neovim configuration and plugins"},
	{"~/.local/share/nvim/", ReadOnly, false, "neovim plugins (site/pack) run at start"},
	{".emacs", ReadOnly, false, "emacs runs it at start"},
	{".emacs.el", ReadOnly, false, "emacs runs it at start"},
	{".emacs.d/", ReadOnly, false, "emacs init files and packages"},
	{"~/.config/emacs/", ReadOnly, false, "emacs init files and packages"},
	{".tmux.conf", ReadOnly, false, "tmux runs its commands (run-shell)"},
	{"~/.config/tmux/", ReadOnly, false, "tmux runs its commands (run-shell)"},
	{".screenrc", ReadOnly, false, "screen runs its commands"},
	{".inputrc", ReadOnly, false, "readline key bindings can type commands"},
	{".ripgreprc", ReadOnly, false, "ripgrep --pre runs a command on every file"},
	{".gdbinit", ReadOnly, false, "gdb runs its commands"},
	{".lldbinit", ReadOnly, false, "lldb runs its commands"},
	{".Rprofile", ReadOnly, false, "R runs it at start (in any directory)"},
	{".irbrc", ReadOnly, false, "irb runs it at start"},
	{".pryrc", ReadOnly, false, "pry runs it at start"},
	{".psqlrc", ReadOnly, false, "psql runs its commands (\\!)"},
	{".sqliterc", ReadOnly, false, "sqlite3 runs its commands (.shell)"},
	{"~/.config/pip/", ReadOnly, false, "pip index and options: what pip installs"},
	{"~/.pip/", ReadOnly, false, "pip index and options: what pip installs"},
	{"~/.cargo/config.toml", ReadOnly, false, "cargo build wrappers and runners for every project"},
	{"~/.cargo/config", ReadOnly, false, "cargo build wrappers and runners for every project"},
	{"~/.config/go/", ReadOnly, false, "go env: GOFLAGS=-toolexec runs a command on every build"},
	{"~/.yarnrc.yml", ReadOnly, false, "yarnPath runs on every yarn command"},
	{"~/.yarnrc", ReadOnly, false, "yarn-path runs on every yarn command"},
	{"~/.gradle/init.d/", ReadOnly, false, "Gradle runs init scripts in every build"},
	{"~/.gradle/init.gradle", ReadOnly, false, "Gradle runs it in every build"},
	{"~/.gradle/gradle.properties", Hide, false, "repository passwords; JVM options (-javaagent) of every Gradle build"},
	{"~/.m2/settings.xml", Hide, false, "Maven repository passwords and mirrors"},
	{"~/.lessfilter", ReadOnly, false, "lesspipe runs it on every file less opens"},

	// Agent and editor configuration that starts commands and that an agent
	// never needs to write: read-only by mount. (Files an agent must write but
	// that also name commands, such as ~/.claude.json, .claude/settings.json or
	// ~/.codex/config.toml, are guarded key by key by package agentcfg instead.)
	// Kept at the end of the list, where an init appended them before: a literal
	// is static data, an append was 16 KB copied in every jail process's
	// start.
	{".claude/plugins/", ReadOnly, false, "Claude Code plugins bring hooks and MCP servers"},
	// Claude Code (2.1.197) reads every ide/*.lock at start and, with
	// autoConnectIde or in an IDE's terminal, connects to the port it
	// names as an MCP server (its authToken, any workspaceFolders holding
	// the cwd): a lock the agent plants names its own server, published
	// on the host's loopback with -p while it runs. Only IDE extensions
	// write them.
	{".claude/ide/", ReadOnly, false, "Claude Code connects to the IDE MCP server a lock file here names"},
	// The agents' global instruction files: every later host session of
	// the agent reads them as the user's own instructions (a prompt
	// injection that outlives the run and reaches every project). Neither
	// CLI writes them itself: Claude Code 2.1.197 keeps its auto memory
	// in ~/.claude/projects (jail's own under -P claude) and classes an
	// edit of CLAUDE.md or .claude/rules/ as self-modification; Codex
	// 0.171 keeps its memories in ~/.codex/memories (codexskills).
	// (~/.gemini/GEMINI.md stays writable: Gemini CLI 0.61's prompt sends
	// the model there to save the user's cross-project preferences.)
	{"~/.claude/CLAUDE.md", ReadOnly, false, "Claude Code's user memory: read as your instructions in every session"},
	{"~/.claude/rules/", ReadOnly, false, "Claude Code's user rules: read as your instructions in every session"},
	{"~/.codex/AGENTS.md", ReadOnly, false, "Codex's global instructions: read as yours in every session"},
	{"~/.codex/AGENTS.override.md", ReadOnly, false, "Codex's global instructions: read as yours in every session"},
	// Claude Code (2.1.197) offers history.jsonl's entries for the cwd's
	// project on up-arrow, newest first, and Enter submits one as the
	// user's own prompt: a display starting with "!" runs in the user's
	// shell at once (bash mode, no prompt), and "[Pasted text #1 +1
	// lines]" is expanded from the entry, or from paste-cache/HASH.txt for
	// a long paste, unseen. An entry the agent appended, and a host entry's
	// paste the agent rewrote, each ran a command on the host at up-arrow
	// and Enter (session 18). Sandboxed sessions keep their prompts in
	// memory (the CLI catches the failed write).
	{".claude/history.jsonl", ReadOnly, false, "Claude Code's prompt history: up-arrow and Enter run an entry as the user's prompt (\"!\" ones in the user's shell)"},
	{".claude/paste-cache/", ReadOnly, false, "the long pastes Claude Code's prompt history expands when an entry is run again"},
	// Claude Code's (2.1.197) background daemon reads its config and lock
	// from ~/.claude: daemon.json's scheduled.tasks are prompts it runs on
	// their cron (permissionMode up to bypassPermissions, in any directory;
	// the file is watched and reloaded) and remoteControl entries sessions
	// it opens for Remote Control; a host claude SIGTERMs then SIGKILLs the
	// pid daemon.lock names when the lock's version is older than its own
	// (checked only for "daemon" among the pid's arguments), and a sandbox
	// daemon's lock names a pid of the sandbox's pid namespace (session 19).
	{"~/.claude/daemon.json", ReadOnly, false, "Claude Code's daemon config: prompts it runs on a schedule, Remote Control sessions"},
	{"~/.claude/daemon.lock", ReadOnly, false, "Claude Code's daemon lock: the pid a host claude signals"},
	// Claude Code (2.1.197) reads its global config from
	// ~/.claude/.config.json when that file exists, and from ~/.claude.json
	// only when it does not: written through -w ~/.claude, every key the
	// guard keeps as on the host in ~/.claude.json (mcpServers, approvals,
	// the guarded feature flags) was the agent's, and `claude mcp list` on
	// the host ran an MCP server's command written only there (review20a).
	// The CLI writes ~/.claude.json when this file is absent (the usual
	// case); one the agent makes is taken away at the end.
	{"~/.claude/.config.json", ReadOnly, false, "Claude Code's global config when it exists (instead of ~/.claude.json): MCP servers, approvals, feature flags"},
	// What an organization's server decides, as Claude Code last fetched
	// it: remote-settings.json holds the managed settings (hooks, env,
	// permissions) a Team or Enterprise account loads as policy settings,
	// the highest rank, from this copy at start until the server answers
	// (2.1.197 and 2.1.332); remote-settings-consent.json and
	// remote-settings-helper-consent hold the user's yes to the dangerous
	// settings among them, by hash (2.1.332); policy-limits.json the
	// organization's restrictions (remote sessions, web fetch...). The
	// agent's copy would run its hook on the host as the organization's,
	// or lift a restriction; the CLI only logs a failed save. Claude Code
	// 2.1.332's own sandbox denies writes to the same names (session 24).
	{"~/.claude/remote-settings.json", ReadOnly, false, "Claude Code's copy of your organization's managed settings: hooks and env it loads as policy"},
	{"~/.claude/remote-settings-consent.json", ReadOnly, false, "your yes to the hooks and other dangerous settings in your organization's managed settings"},
	{"~/.claude/remote-settings-helper-consent", ReadOnly, false, "your yes to the dangerous settings a managed-settings helper brings"},
	{"~/.claude/policy-limits.json", ReadOnly, false, "Claude Code's copy of your organization's restrictions: the agent's would lift them"},
	// Claude Code installs and loads plugins from cowork_plugins/ instead
	// of plugins/ in Cowork mode or with CLAUDE_CODE_USE_COWORK_PLUGINS
	// set (2.1.197 and 2.1.332): the same hooks and MCP servers.
	{"~/.claude/cowork_plugins/", ReadOnly, false, "Claude Code's Cowork plugins bring hooks and MCP servers"},
	// Claude in Chrome (2.1.197 and 2.1.332) writes chrome/chrome-native-host,
	// a wrapper script ("exec CLAUDE --chrome-native-host"), and registers
	// it with each Chromium browser as the native messaging host of
	// Claude's extension: the browser runs it whenever the extension
	// connects, outside every sandbox. A wrapper the agent rewrote would be
	// the host browser's next program; the CLI only logs a failed install.
	{"~/.claude/chrome/", ReadOnly, false, "Claude in Chrome's native host wrapper: the browser runs it when the extension connects"},
	// Codex (0.171) keeps every prompt submitted in its TUI, from all
	// projects, in history.jsonl and offers them again in later sessions on
	// up-arrow (its composer's persistent history); Enter submits the
	// recalled text as the user's, and one starting with "!" runs in the
	// user's shell. A line the agent appended through -w ~/.codex was the
	// host's next up-arrow (codexhistory). Codex logs the failed append
	// inside and goes on.
	{".codex/history.jsonl", ReadOnly, false, "Codex's prompt history: up-arrow and Enter run an entry as the user's prompt (\"!\" ones in the user's shell)"},
	// Codex 0.171 caches its model catalog in models_cache.json: each
	// model's base_instructions are the system prompt of every session on
	// it. The host's codex takes the cache as fresh while now - fetched_at
	// is within its TTL, so a fetched_at in the future never goes stale,
	// and its key (provider, auth mode, account) is readable inside: one
	// the agent wrote was every later host session's instructions. Codex
	// logs the failed write inside and uses the catalog it fetched.
	{"~/.codex/models_cache.json", ReadOnly, false, "Codex's model catalog cache: each model's base_instructions are every session's system prompt"},
	// Codex 0.171's memories (~/.codex/memories, when the user turned the
	// memories feature on): memory_summary.md goes whole into every new
	// session's developer instructions, in every project, and points the
	// model at MEMORY.md, skills/ and rollout_summaries/ there. Only Codex's
	// own startup consolidation writes them (the model adds notes under
	// extensions/ad_hoc/notes/, which the host's next consolidation applies):
	// a summary the agent wrote was the host's next instructions (codexmem).
	{"~/.codex/memories/", ReadOnly, false, "Codex's memories: memory_summary.md is read as instructions in every new session"},
	// Codex 0.171's SQLite state beside them (state_5, queue_1, goals_1,
	// memories_1, thread_history_1, logs_2 and their -wal/-shm): queue_1's
	// queued_items are messages the host's codex submits to a thread as the
	// user's own input when it runs that thread next (`codex queue`), and
	// memories_1's stage-1 rows are what the host's consolidation writes
	// memory_summary.md from (codexmem). The codex profile gives the
	// sandbox's Codex databases of its own (sqlite_home). The pattern keeps
	// the files there at start; those two are also named, so that one made
	// in the run is quarantined: a -wal is missing whenever no codex runs,
	// and the host's next open replays a -wal the agent made from a copy
	// of the database (its rows become the database's).
	{"~/.codex/queue_1.sqlite", ReadOnly, false, "Codex's queued messages: the host's codex sends them to their thread as yours"},
	{"~/.codex/queue_1.sqlite-wal", ReadOnly, false, "Codex's queued messages: the host's codex sends them to their thread as yours"},
	{"~/.codex/memories_1.sqlite", ReadOnly, false, "Codex's memory rows: the host's codex writes memory_summary.md from them"},
	{"~/.codex/memories_1.sqlite-wal", ReadOnly, false, "Codex's memory rows: the host's codex writes memory_summary.md from them"},
	// The other databases of 0.171 are named too (agentstate20): the
	// pattern covers only the files there at start, and state_5's threads
	// name the rollout `codex resume` reads a thread's history from (any
	// path: one the agent wrote in the workspace), agent_message_board_1
	// holds messages between a thread's agents. A name a later Codex
	// brings (queue_2) is covered by the pattern once it exists at a start.
	{"~/.codex/state_5.sqlite", ReadOnly, false, "Codex's threads: the rollout codex resume reads a thread's history from"},
	{"~/.codex/state_5.sqlite-wal", ReadOnly, false, "Codex's threads: the rollout codex resume reads a thread's history from"},
	{"~/.codex/agent_message_board_1.sqlite", ReadOnly, false, "Codex's messages between a thread's agents"},
	{"~/.codex/agent_message_board_1.sqlite-wal", ReadOnly, false, "Codex's messages between a thread's agents"},
	{"~/.codex/thread_history_1.sqlite", ReadOnly, false, "Codex's thread history"},
	{"~/.codex/thread_history_1.sqlite-wal", ReadOnly, false, "Codex's thread history"},
	{"~/.codex/goals_1.sqlite", ReadOnly, false, "Codex's thread goals"},
	{"~/.codex/goals_1.sqlite-wal", ReadOnly, false, "Codex's thread goals"},
	{"~/.codex/*.sqlite*", ReadOnly, false, "Codex's databases: queued messages the host's codex sends as yours, memories, goals"},
	// Codex 0.171 reads a profile's settings from ~/.codex/NAME.config.toml
	// under `codex --profile NAME` (its old [profiles] table is refused):
	// the keys of config.toml (notify, MCP servers, hooks, the sandbox
	// mode), which the guard keeps only in config.toml itself. The agent
	// added notify to the user's profile file, or made one, and the next
	// `codex --profile` on the host ran it. A pattern: a name made in the
	// run is watched and quarantined as a database's (codexglob).
	// config.toml has no dot before it and stays the guard's.
	{"~/.codex/*.config.toml", ReadOnly, false, "Codex profile settings (codex --profile NAME reads NAME.config.toml): notify, MCP servers, hooks"},
	// Codex 0.171 reads ~/.codex/environments.toml at every start and
	// starts the environment it names as default by running that
	// environment's program (an exec server on stdio) as the user; every
	// command of the session then goes through it (`codex exec` on the host
	// ran a program named there, codexenv). Only the user writes it.
	{"~/.codex/environments.toml", ReadOnly, false, "Codex exec environments: codex runs the default one's program at every start"},
	{".codex/hooks.json", ReadOnly, false, "Codex hooks run commands"},
	{".codex/hooks/", ReadOnly, false, "Codex hooks run commands"},
	// Codex 0.171 loads each enabled plugin from its installed copy under
	// ~/.codex/plugins/cache/<marketplace>/<plugin>/<version>/: the
	// copy's .mcp.json starts MCP servers and its hooks/hooks.json (or
	// plugin.json's hooks) runs commands at every host session. config.toml's
	// [plugins] key is guarded, but the installed copy was writable through
	// -w ~/.codex: the agent rewrote an enabled plugin's commands (codexstate).
	{".codex/plugins/", ReadOnly, false, "Codex plugins bring hooks and MCP servers"},
	{".gemini/extensions/", ReadOnly, false, "Gemini CLI extensions bring MCP servers and hooks"},
	{".gemini/commands/", ReadOnly, false, "Gemini CLI custom commands run shell snippets"},
	// Gemini CLI 0.61 loads every ~/.gemini/skills/*/SKILL.md (and a trusted
	// project's .gemini/skills/) in every session, and the model activates
	// one on its own when its description fits (`gemini skills list` showed
	// one planted through -P gemini's -w ~/.gemini, codexmem): as Codex's
	// and Claude Code's skills.
	{".gemini/skills/", ReadOnly, false, "Gemini CLI skills: loaded on their own when their description fits"},
	// Gemini CLI 0.61's key bindings: a key bound to app.toggleYolo or
	// app.cycleApprovalMode turns the host's tool confirmations off as the
	// user types, one bound to basic.confirm answers a confirmation yes.
	// Only the user writes the file.
	{"~/.gemini/keybindings.json", ReadOnly, false, "Gemini CLI key bindings: a key can turn tool confirmations off (YOLO)"},
	// Claude Code's key bindings (2.1.197 and 2.1.332, on by default,
	// appended after its defaults): Escape and n bound to confirm:yes make
	// the user's "no" to a permission prompt a yes. Only the user writes
	// the file (/keybindings).
	{"~/.claude/keybindings.json", ReadOnly, false, "Claude Code key bindings: a key can answer a permission prompt yes"},
	// Approvals kept as files: what the agent's next run outside jail runs
	// without asking (as settings' permissions, which agentcfg keeps as on
	// the host; approved inside, they last for that session). Codex 0.171
	// loads every *.rules under ~/.codex/rules/ (and a trusted project's
	// .codex/rules/): prefix_rule(decision="allow") runs a command outside
	// its sandbox unasked. Gemini CLI 0.61's policy engine loads
	// ~/.gemini/policies/ and .gemini/policies/ (decision = "allow" for
	// run_shell_command).
	{".codex/rules/", ReadOnly, false, "Codex rules: commands Codex runs outside its sandbox without asking"},
	{".gemini/policies/", ReadOnly, false, "Gemini CLI policies: tools and shell commands it runs without asking"},
	{".copilot/hooks/", ReadOnly, false, "Copilot CLI user hooks"},
	{".copilot/installed-plugins/", ReadOnly, false, "Copilot CLI plugins bring hooks and MCP servers"},
	// Copilot CLI's custom agents (~/.copilot/agents/, a repository's
	// .github/agents/) name MCP servers in their frontmatter, and the model
	// delegates to one on its own; its skills (~/.copilot/skills/,
	// .github/skills/) load on their own when their description fits: as
	// .claude/agents/ and .claude/skills/ (review13e).
	{".copilot/agents/", ReadOnly, false, "Copilot CLI custom agents: their MCP servers start when the model delegates"},
	// Gemini CLI 0.61's local subagents (~/.gemini/agents/*.md, a project's
	// .gemini/agents/) name MCP servers in their frontmatter (mcp_servers:
	// command), started when the model delegates; subagents are on by
	// default and user agents need no acknowledgement (review16d).
	{".gemini/agents/", ReadOnly, false, "Gemini CLI subagents: their MCP servers start when the model delegates"},
	{".copilot/skills/", ReadOnly, false, "Copilot CLI skills: loaded on their own when their description fits"},
	// Qwen Code 0.15.10 (a Gemini CLI fork) loads these from ~/.qwen and a
	// project's .qwen on its own: extensions (MCP servers, hooks, channel
	// plugins it import()s), custom commands (shell snippets), skills
	// (their frontmatter can define command hooks) and subagents (their
	// approval mode, tools and hooks); ~/.qwen/locales/<lang>.js is
	// import()ed at every start, and ~/.qwen/ide/<port>.lock may name a
	// command it spawns in IDE mode.
	{".qwen/extensions/", ReadOnly, false, "Qwen Code extensions bring MCP servers, hooks and code it imports"},
	{".qwen/commands/", ReadOnly, false, "Qwen Code custom commands run shell snippets"},
	{".qwen/skills/", ReadOnly, false, "Qwen Code skills: loaded on their own; they can define hooks"},
	{".qwen/agents/", ReadOnly, false, "Qwen Code subagents: their approval mode, tools and hooks"},
	{"~/.qwen/locales/", ReadOnly, false, "Qwen Code imports a language's .js from here at every start"},
	{"~/.qwen/ide/", ReadOnly, false, "Qwen Code IDE lock files name a command it spawns"},
	{"~/.qwen/channels/", ReadOnly, false, "Qwen Code channel allowlists: who may prompt it"},
	{".github/agents/", ReadOnly, false, "Copilot CLI repository agents: their MCP servers start when the model delegates"},
	{".github/skills/", ReadOnly, false, "Copilot CLI repository skills: loaded on their own"},
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
	// Toolchain files that name a program by path: rustup runs the
	// toolchain `path = "/abs/dir"` of a rust-toolchain.toml (or of the
	// older rust-toolchain) in that directory and below, asdf and mise the
	// `path:/abs/dir` version of a .tool-versions. The host's `rustc
	// --version` there would run the agent's program: a shell prompt's
	// (starship's rust and node modules, at every cd), an editor's
	// rust-analyzer on open.
	{"rust-toolchain.toml", ReadOnly, false, "rustup runs the toolchain its path names (a prompt's rustc --version at cd)"},
	{"rust-toolchain", ReadOnly, false, "rustup runs the toolchain its path names (a prompt's rustc --version at cd)"},
	{".tool-versions", ReadOnly, false, "asdf and mise run a path: version's programs (a prompt's node --version at cd)"},
	// Editors that read a project's own settings on open and ask nothing:
	// helix merges .helix/languages.toml (a language server's command,
	// started when a file of that language opens) and .helix/config.toml;
	// Zed's .zed/settings.json names language-server binaries (lsp.*.binary
	// .path) and .zed/tasks.json commands. (Not here: .kakrc, which
	// kakoune sources only if the user's kakrc says so; .lvimrc, which the
	// localvimrc plugin asks about and sandboxes by default.)
	{".helix/", ReadOnly, false, "helix starts the language servers its languages.toml names when a file opens"},
	{".zed/", ReadOnly, false, "Zed project settings name language-server binaries and tasks"},
}

// rule is a compiled pattern with what it does.
type rule struct {
	pat  *Pattern
	kind Kind
	name string // shown in Mask.Rule: "deny X" or "default: X"
	user bool
	git  bool
}

// homeGlobs are where home directories live besides the ones named in
// Input: home-anchored built-ins hold in every user's home (a root-started
// jail may be given another user's home as --write).
var homeGlobs = []string{"/root", "/home/*"}

// homeAnchors returns the directories home-anchored built-ins are anchored
// at: homes (clean, absolute) and homeGlobs, without duplicates ("/home/u" is
// covered by "/home/*").
func homeAnchors(homes []string) []string {
	out := append([]string{}, homeGlobs...)
	for _, h := range homes {
		if h == "" || h == "/" || h[0] != '/' {
			continue
		}
		dup := false
		for _, a := range out {
			if ok, _ := Match(a, h); ok {
				dup = true
			}
		}
		if !dup {
			out = append(out, escapeGlob(h))
		}
	}
	return out
}

// escapeGlob quotes the glob metacharacters of a literal path.
func escapeGlob(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if strings.IndexByte(`*?[]\`, p[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

func builtinRules(allowGitConfig bool, homes []string) []rule {
	rules, _ := builtinRulesAt(allowGitConfig, homeAnchors(homes))
	return append([]rule(nil), rules...) // the memo's are shared: a copy
}

// builtinRulesAt returns the built-in rules anchored at anchors
// (homeAnchors) and the list of Builtins they were compiled from. Both are
// shared and never changed: a caller copies what it extends.
//
// A process compiles them once per inputs: its key is every input, the
// list of Builtins included (a copy of it, compared entry by entry, so
// that a list changed in place is compiled afresh too). The homes count
// only through their anchors (compileBuiltins reads nothing else of them):
// the option check's [HOME] and the plan's [HOME, the account's home]
// mostly give the same anchors, /root and /home/* being anchors anyway,
// and share one compile. The key is compared, not built: building it
// (every built-in's name, a few KiB) cost fresh heap pages at every call.
func builtinRulesAt(allowGitConfig bool, anchors []string) ([]rule, []Builtin) {
	builtinMemo.Lock()
	defer builtinMemo.Unlock()
	m := &builtinMemo
	if m.rules == nil || m.allowGitConfig != allowGitConfig || !slices.Equal(m.anchors, anchors) || !slices.Equal(m.builtins, Builtins) {
		m.allowGitConfig, m.anchors, m.builtins = allowGitConfig, slices.Clone(anchors), slices.Clone(Builtins)
		m.rules = compileBuiltins(allowGitConfig, anchors)
	}
	return m.rules, m.builtins
}

// builtinMemo is builtinRulesAt's last answer and its inputs.
var builtinMemo struct {
	sync.Mutex
	allowGitConfig bool
	anchors        []string
	builtins       []Builtin
	rules          []rule
}

// compileBuiltins compiles the built-ins, the home-anchored ones at each of
// anchors (homeAnchors). The others are taken from builtinTable (compiled
// when jail was built, in zbuiltins.go) when it is the table of Builtins
// as they are: the table is data of the binary, read where it lies; the
// ~200 patterns compiled at every start were fresh heap pages, each a
// page fault of 18-30 us here (issue 16). So are the home-anchored ones at
// the anchors every start has, homeGlobs (builtinHomeTable): only a home
// outside them ($HOME=/var/lib/x) is compiled at the start.
func compileBuiltins(allowGitConfig bool, anchors []string) []rule {
	return compileBuiltinsWith(allowGitConfig, anchors, builtinTableFits())
}

// compileBuiltinsWith is compileBuiltins, the built-ins that are not
// home-anchored, and the home-anchored ones at the homeGlobs leading
// anchors, taken from builtinTable and builtinHomeTable (fromTable: they
// must fit) or compiled.
func compileBuiltinsWith(allowGitConfig bool, anchors []string, fromTable bool) []rule {
	out := make([]rule, 0, builtinCount(anchors))
	var a arena
	t, h := 0, 0
	for _, b := range Builtins {
		rest, home := strings.CutPrefix(b.Name, "~/")
		if !home {
			t++
		} else {
			h++
		}
		if b.Git && allowGitConfig {
			continue
		}
		switch {
		case home:
			for i, an := range anchors {
				// The table holds this built-in at homeGlobs[i] (its
				// pattern's Abs, checked by builtinTableFits): taken only
				// for the very anchor it was compiled at.
				if fromTable && i < len(homeGlobs) && an == homeGlobs[i] {
					out = append(out, builtinHomeTable[(h-1)*len(homeGlobs)+i])
					continue
				}
				out = appendBuiltin(out, &a, b, an+"/"+rest)
			}
		case fromTable:
			out = append(out, builtinTable[t-1])
		default:
			out = appendBuiltin(out, &a, b, "/**/"+b.Name)
		}
	}
	return out
}

// builtinTableFits reports whether builtinTable and builtinHomeTable are
// the tables of Builtins: one rule per built-in that is not home-anchored,
// and one per home-anchored built-in and homeGlobs anchor, in order, of
// its name, kind and git-ness and (for the home ones) the glob it was
// compiled from (what compiling it reads).
func builtinTableFits() bool {
	t, h := 0, 0
	for _, b := range Builtins {
		if rest, home := strings.CutPrefix(b.Name, "~/"); home {
			for _, an := range homeGlobs {
				if h >= len(builtinHomeTable) {
					return false
				}
				r := &builtinHomeTable[h]
				if r.pat.Source != b.Name || r.pat.Abs != an+"/"+rest || r.kind != b.Kind || r.git != b.Git {
					return false
				}
				h++
			}
			continue
		}
		if t >= len(builtinTable) {
			return false
		}
		r := &builtinTable[t]
		if r.pat.Source != b.Name || r.kind != b.Kind || r.git != b.Git {
			return false
		}
		t++
	}
	return t == len(builtinTable) && h == len(builtinHomeTable)
}

// appendBuiltin appends built-in b compiled as glob.
func appendBuiltin(out []rule, a *arena, b Builtin, glob string) []rule {
	// Built-ins are matched case-insensitively (see Builtin).
	p, err := compileAbsIn(a, glob, strings.HasSuffix(b.Name, "/"), true)
	if err != nil {
		panic("fsrules: bad built-in " + b.Name) // a programming error, caught by tests
	}
	p.Source = b.Name
	return append(out, rule{pat: p, kind: b.Kind, name: "default: " + b.Name, git: b.Git})
}

// builtinCount is how many rules the built-ins make: one each, and one per
// home anchor for each home-anchored one.
func builtinCount(anchors []string) int {
	n := 0
	for _, b := range Builtins {
		if strings.HasPrefix(b.Name, "~/") {
			n += len(anchors)
		} else {
			n++
		}
	}
	return n
}

// ExitNames are the built-ins found by name alone at any depth by the
// exit check (package gitguard's Guard.Names): each a file of one element
// (no directory, no pattern, not anchored at a home) that a host program
// loads from the directory it runs in or a parent of it (R's .Rprofile,
// irb's .irbrc, rustup's rust-toolchain.toml, asdf's .tool-versions,
// Claude Code's .mcp.json, direnv's .envrc, a shell's .bashrc in a
// dotfiles tree), keyed by the lower-case ASCII name, the value the rule
// as masks name it. The watch sees only the top of each writable tree;
// one created deeper is found when the sandbox ends. Not the secrets:
// a new .env is the project's own.
func ExitNames() map[string]string {
	out := map[string]string{}
	for _, b := range Builtins {
		if b.Git || strings.ContainsAny(b.Name, "/*?[\\") {
			continue
		}
		if b.Kind == ReadOnly || b.Name == ".envrc" {
			out[asciifold.Lower(b.Name)] = "default: " + b.Name
		}
	}
	return out
}
