package fsrules

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

// Builtin is one built-in protection. Name is matched at any depth ("**/"+Name
// under each visible root); a trailing '/' means directories only.
type Builtin struct {
	Name string
	Kind Kind
	// Git rules are lifted by --allow-git-config.
	Git bool
	// Why is shown in --help and README.
	Why string
}

// Builtins is the list of built-in protections, on unless --no-default-deny.
var Builtins = []Builtin{
	{".env", Hide, false, "environment files with credentials"},
	{".env.*", Hide, false, "environment files with credentials"},
	{"*.pem", Hide, false, "private keys and certificates"},
	{"*.key", Hide, false, "private keys"},
	{"id_rsa*", Hide, false, "SSH keys"},
	{"id_ed25519*", Hide, false, "SSH keys"},
	{".ssh/", Hide, false, "SSH keys and config"},
	{".aws/", Hide, false, "AWS credentials"},
	{".gnupg/", Hide, false, "GnuPG keys"},
	{".netrc", Hide, false, "login credentials"},
	{".git-credentials", Hide, false, "git credentials"},
	{".npmrc", Hide, false, "npm tokens"},
	{".pypirc", Hide, false, "PyPI tokens"},
	{".docker/config.json", Hide, false, "registry credentials"},
	{".kube/config", Hide, false, "Kubernetes credentials"},

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
	{".bashrc", ReadOnly, false, "runs in every new shell"},
	{".bash_profile", ReadOnly, false, "runs at login"},
	{".zshrc", ReadOnly, false, "runs in every new shell"},
	{".zprofile", ReadOnly, false, "runs at login"},
	{".profile", ReadOnly, false, "runs at login"},
	{".mcp.json", ReadOnly, false, "MCP servers the agent starts next time"},
	{".vscode/", ReadOnly, false, "tasks and settings that run code when the folder opens"},
	{".idea/", ReadOnly, false, "run configurations"},
	{".claude/commands/", ReadOnly, false, "agent commands"},
	{".claude/agents/", ReadOnly, false, "agent definitions"},
	// jail's own config, profiles and trust store decide what the next run
	// may do: nothing inside may read or change them (an agent that could
	// would trust its own .jail.toml, or widen its next sandbox).
	{".config/jail/", Hide, false, "jail's own config, profiles and trusted project files"},
}

// rule is a compiled pattern with what it does.
type rule struct {
	pat  *Pattern
	kind Kind
	name string // shown in Mask.Rule: "deny X" or "default: X"
	user bool
	git  bool
}

func builtinRules(allowGitConfig bool) []rule {
	var out []rule
	for _, b := range Builtins {
		if b.Git && allowGitConfig {
			continue
		}
		p, err := compileAbs("/**/"+b.Name, len(b.Name) > 0 && b.Name[len(b.Name)-1] == '/')
		if err != nil {
			panic("fsrules: bad built-in " + b.Name) // a programming error, caught by tests
		}
		p.Source = b.Name
		out = append(out, rule{pat: p, kind: b.Kind, name: "default: " + b.Name, git: b.Git})
	}
	return out
}
