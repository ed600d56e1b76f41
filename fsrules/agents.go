package fsrules

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
