// Package config reads what a run of jail is made of besides its flags —
// config files, a project's file, settings files of other sandboxes and
// profiles — and merges them with the flags into one policy.Policy,
// remembering where every value came from. It touches no kernel: the
// sandbox package turns the policy into a sandbox.
//
// Layers, lowest first; each overrides the ones below, lists accumulate:
//
//	defaults (policy.Options)
//	profiles      --profile NAME, or profile = [...] in any file (package profile)
//	user config   $XDG_CONFIG_HOME/jail/config.toml (default ~/.config/jail/config.toml)
//	project file  <workspace>/.jail.toml, only once trusted (jail trust)
//	--config FILE
//	flags
//
// A settings file (settings = [...] or --settings FILE, see ParseSettings)
// sits just above the layer that names it; one named by a flag sits just
// below the flags. Only what a layer sets counts: an option not given as a
// flag does not override a file.
//
// Files are TOML. Every option is a key of the same name as its flag, with
// the same meaning (write = ["~/.cache/go-build"], memory = "2G", timeout =
// "30m", cpus = 0.5, read-only = true); `version = 1` may open a file.
// Relative paths mean what they mean on the command line (write, read and
// deny are relative to the workspace), except settings, seccomp and audit,
// which are relative to the file's directory. Unknown keys, keys a kind of
// file may not hold and bad values are errors naming the file, the line and
// the key (go-toml/v2 for the grammar, its unstable parser for positions). A
// project file may not move the workspace nor name other files (settings,
// seccomp): trust covers its own bytes only.
//
// Trust: a project file is read only when its absolute path and SHA-256 are
// recorded in $XDG_CONFIG_HOME/jail/trust.json (TrustStore), which jail hides
// from every sandbox. Any change to the file, by the user or by an agent,
// loses the trust, and so does its removal (its restrictions must not
// vanish with it); jail then refuses to start and says how to go on.
// Without a config directory nothing is trusted. jail trust changes the
// store under a lock (two at once keep both records; a 0600 lock file
// beside the store, which no other user can open and hold); a project file is
// read only as a plain file of at most 1 MiB (readProjectFile, package
// plainfile, as are settings and --config files: a FIFO or a
// device link the agent made is refused, not waited on), from a path that
// is UTF-8 (the store's JSON could not keep another).
//
// A workspace jail chooses (no workspace setting) below a trusted project
// -- a git submodule, a subdirectory of a project that is no repository,
// or a .git a command in the project's sandbox planted -- has no file of
// its own: the closest trusted project file above it applies, its
// relative write, read and deny paths anchored at its own directory
// (Enclosing, rebase). A trusted project strictly inside the git work
// tree that holds the current directory is the workspace (Inner): the
// user trusted its file for runs there. Either way the file is checked as
// the workspace's own (changed or gone: refused); what would still skip a
// trusted file (a directory of the project replaced with a link out of
// it) is refused (CheckAbove, CheckInside).
//
// Errors about values reach the user through Origins.Explain, which puts the
// value's source in front of the library's message: "--timeout 10: add a
// unit", "config.toml:3: memory "lots": not a size", "net "none"
// (.jail.toml:2) conflicts with --allow-domain example.com".
package config
