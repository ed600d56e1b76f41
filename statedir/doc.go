// Package statedir is the one place that says where jail keeps its own data
// on the host: the audit trails, the run registry, the quarantine and the
// agent-configuration records, all under $XDG_STATE_HOME/jail (or ~/.local/state/jail when
// XDG_STATE_HOME is unset or relative, as the XDG spec says).
//
// Everything in it is the user's record or jail's bookkeeping, so the
// sandbox must never reach it: the supervisor hides it from every plan
// (masked where a visible path contains it, refused where a --write or
// --read names it). Code that stores anything for jail asks this package
// for the place, so that the hiding covers it too.
//
// What lives only while sandboxes run (the registry of running sandboxes,
// their control sockets and name claims, the background sandboxes' logs)
// is in the runtime directory instead: $XDG_RUNTIME_DIR/jail (Runtime),
// hidden from the sandbox the same way.
//
// jail's config directory ($XDG_CONFIG_HOME/jail, ConfigFrom: the user's
// config, profiles and trusted project files) is hidden the same way: what
// the sandbox wrote there, every later run would read and trust.
//
// The package is pure Go, reads only the environment, and builds on every
// GOOS; it imports no other jail package.
package statedir
