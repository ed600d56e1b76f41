package statedir

import (
	"errors"
	"os"
	"path/filepath"
)

// Names of the entries of the state directory.
const (
	Audit = "audit" // default audit trails, <start>-<id>.jsonl
	// Run holds the registry of running sandboxes (jail ps, jail kill)
	// when the runtime directory cannot be used (RuntimeFrom).
	Run        = "run"
	Quarantine = "quarantine" // files jail took out of the agent's reach
	// AgentConfig holds the records of running agent-configuration guards
	// (package agentcfg): what the next start restores if a supervisor was
	// killed. The agents' versions it put back go to Quarantine.
	AgentConfig = "agentcfg"
	// Registries caches what the host's tools said about their registries
	// (package toolreg), so that a toolchain profile does not run the tool
	// at every start. Out of the sandbox's reach like the rest: an answer
	// the agent could write would widen the next run's allowlist.
	Registries = "registries.json"
	// GitIdentity caches the host git's user.name and user.email with the
	// key of every file they were read from (package hostgit).
	GitIdentity = "git-identity.json"
	// AuditRetention is the stamp of the last retention pass over Audit
	// (package audit: PruneDue, MarkPruned), beside it: Audit holds trails
	// only.
	AuditRetention = "audit-retention"
	// DirCache holds what the start's walks kept of each directory of the
	// visible trees (package dircache): a start reads again only what
	// changed. Trusted only because the sandbox never reaches it.
	DirCache = "dircache"
	// Written records the trees earlier runs made writable (package
	// pastwrite): a symlink in one is the agent's, not the user's, for
	// every later run's link checks. Trusted only because no sandbox
	// reaches it: a tree the agent could strike from it would let its
	// links pass for the user's.
	Written = "written-trees"
	// GitKept holds one store per repository of the writable trees
	// (package gitkeep): its loose objects hard-linked and its refs
	// recorded at each start, for the user to fetch back what a run's
	// agent deleted. Out of the sandbox's reach like the rest: it is what
	// survives the agent.
	GitKept = "git-kept"
	// SaidOnce holds the hashes of the start notes said once, not at every
	// start (a script directory's first-write line): out of the sandbox's
	// reach, so the agent cannot silence one for the next run.
	SaidOnce = "said-once"
	// SocketsFar records the live host sockets gone from their names that
	// the start's far search did not find (package sandbox, farRecord), so
	// later starts skip that search until a start with a write path on
	// their file system. Out of the sandbox's reach: an entry the agent
	// could keep would hide a socket it moved into view.
	SocketsFar = "sockets-far.json"
	// PolicyNamed holds the files runs were given by a flag to read their
	// policy from (--settings, --config, --seccomp), with when one was
	// first named: every later run keeps them read-only too (a run not
	// given the flag would otherwise rewrite what the next run given it
	// reads). Out of the sandbox's reach, so an agent cannot drop one.
	PolicyNamed = "policy-named"
	// CredSwap holds each running sandbox's snapshot of the agents'
	// credential files (package credswap), locked while its supervisor
	// lives: a killed run's is settled by the next start or jail gc. It
	// holds token values: 0600, and no sandbox reaches it (an agent that
	// could rewrite it would choose what the next start puts back).
	CredSwap = "credswap"
	// The lean init's copy (package initbin) is init-HASH here, HASH its
	// build's: exec'd as each sandbox's init, trusted only because no
	// sandbox reaches this directory.
)

// ErrNoStateDir is returned when neither an absolute $XDG_STATE_HOME nor an
// absolute $HOME is set.
var ErrNoStateDir = errors.New("no state directory: set $XDG_STATE_HOME or $HOME")

// Dir returns jail's state directory for the current process environment.
func Dir() (string, error) { return From(os.Getenv) }

// From returns jail's state directory for the environment getenv reads:
// $XDG_STATE_HOME/jail, or $HOME/.local/state/jail when XDG_STATE_HOME is
// unset or not absolute (the XDG spec says relative values are ignored, and
// resolving one against the working directory would put jail's data in the
// sandbox's workspace).
func From(getenv func(string) string) (string, error) {
	base := getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(base) {
		home := getenv("HOME")
		if !filepath.IsAbs(home) {
			return "", ErrNoStateDir
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(filepath.Clean(base), "jail"), nil
}

// Path returns the named entry of the state directory (Audit, Run, ...).
func Path(name string) (string, error) {
	d, err := Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, name), nil
}

// Ensure creates the state directory (0700: it names every command and
// host the agent touched) if it does not exist, and returns it.
func Ensure() (string, error) {
	d, err := Dir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(d, 0o700); err != nil {
		return "", err
	}
	return d, nil
}

// CacheFrom returns the directory of the sandbox's own persistent caches
// (the cache option: a jail-owned directory mounted where a tool keeps its
// cache): $XDG_CACHE_HOME/jail/cache, or $HOME/.cache/jail/cache. It is not
// in the state directory: the sandbox sees its caches, never the state.
// Each cache lives at NAME/home/PATH (a path under the home directory) or
// NAME/root/PATH below it, NAME being the profile that asked for it.
func CacheFrom(getenv func(string) string) (string, error) {
	base := getenv("XDG_CACHE_HOME")
	if !filepath.IsAbs(base) {
		home := getenv("HOME")
		if !filepath.IsAbs(home) {
			return "", ErrNoCacheDir
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(filepath.Clean(base), "jail", "cache"), nil
}

// ErrNoCacheDir is returned when neither an absolute $XDG_CACHE_HOME nor an
// absolute $HOME is set.
var ErrNoCacheDir = errors.New("no cache directory for the sandbox's caches: set $XDG_CACHE_HOME or $HOME")

// ConfigFrom returns jail's config directory for the environment getenv
// reads: $XDG_CONFIG_HOME/jail, or $HOME/.config/jail when XDG_CONFIG_HOME
// is unset or not absolute (the XDG spec ignores relative values); false
// when neither is absolute. It holds the user's config, profiles and the
// trust records of project files (package config): what every later run
// reads and trusts, so the sandbox never reaches it, like the state
// directory.
func ConfigFrom(getenv func(string) string) (string, bool) {
	base := getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(base) {
		home := getenv("HOME")
		if !filepath.IsAbs(home) {
			return "", false
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(filepath.Clean(base), "jail"), true
}

// RuntimeFrom returns the runtime directory the environment getenv reads
// asks for: $XDG_RUNTIME_DIR/jail, and false when XDG_RUNTIME_DIR is unset
// or not absolute. Whether it may be used (the XDG directory is the user's
// and 0700) is the caller's check; the fallback is the state directory's
// Run.
func RuntimeFrom(getenv func(string) string) (string, bool) {
	base := getenv("XDG_RUNTIME_DIR")
	if !filepath.IsAbs(base) {
		return "", false
	}
	return filepath.Join(filepath.Clean(base), "jail"), true
}
