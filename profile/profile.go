// Package profile finds jail's profiles: named, composable sets of options
// for an agent or a toolchain, kept as data files. A profile is a TOML file
// in the config file schema (every key is an option; see package config),
// plus what a profile needs beyond options:
//
//	version = 1
//	description = "Go toolchain: module and build caches, the module proxy"
//	extends = ["base"]                  # profiles applied first
//	write = ["~/go/pkg/mod"]
//	allow-domain = ["api.example.com"]  # an agent's own service
//	registries = ["go"]                 # hosts from the tool's own configuration
//	env = ["GOFLAGS"]                   # passed when set; no warning when unset
//	cache = ["~/.cache/go-build"]       # a directory of jail's own mounted there
//
//	[why]                               # shown by jail profiles show, per path or domain
//	"~/go/pkg/mod" = "downloaded modules, reused across runs"
//	"go" = "the module proxy and checksum database go env names"
//
// A package registry is never named in a profile: registries = [TOOL]
// (npm, go, pip, cargo, maven) makes jail allow, at start, the hosts the host's
// configuration of that tool names, or the tool's own default (package
// toolreg). A corporate mirror is then honoured as the tool honours it.
//
//	[args]                              # added right after the command's name, only when
//	codex = ["--sandbox", "danger-full-access"]  # the command is that program
//	# or, left out when the user's own arguments begin with one of unless:
//	# codex = {args = ["--sandbox", "danger-full-access"], unless = ["--sandbox", "-s"]}
//
//	[refused]                           # reached for and done without: said so, never with
//	"github.com" = "what the program does without it"  # the flag that would allow it
//
//	[[create]]                          # made on the host when missing, the way the tool expects
//	path = "~/.claude.json"
//	content = "{}\n"
//	why = "Claude Code calls an empty file corrupt"
//
// A cache (the cache option) is a persistent directory that jail owns,
// outside the workspace, per user and per profile
// ($XDG_CACHE_HOME/jail/cache/PROFILE/...), mounted writable at the path the
// tool expects: a toolchain profile names its caches with it instead of
// write, because a cache shared with the host is a way back out (an entry
// the agent plants in the host's Go build cache is linked into the host's
// next build; npm and pip caches are poisoned the same way). Only the
// user's --host-caches hands the host's own over.
//
// Built-in profiles are embedded in the binary (profiles/*.toml here); the
// user's own live in $XDG_CONFIG_HOME/jail/profiles/NAME.toml (default
// ~/.config/jail/profiles) and take precedence over a built-in one of the
// same name. `jail --profile NAME` (repeatable; or profile = [...] in a
// config file) applies them at the lowest layer, above the defaults and below
// every config file and flag; lists accumulate, other options are overridden
// by later profiles and by every layer above. `jail profiles` lists them,
// `jail profiles show NAME` prints what one amounts to as flags.
//
// Adding a built-in profile: write profiles/NAME.toml (lower-case name of
// letters, digits, '-', '.', '_'); give it a description, a [why] line for
// every path and domain it opens, and [[create]] entries only for state the
// tool refuses to start without; keep secrets out (name variables with env,
// never set values); prefer extends over copying another profile's lines; add
// a case to profile_test.go (it loads every built-in profile, so a typo fails
// the build's tests) and a stand-in test that touches exactly what the profile
// allows (tests/), then list it in README's profile section. A profile is a
// grant: every path it makes writable is a place the agent can leave files
// for later, so agent configuration that names commands (hooks, MCP servers)
// must stay read-only unless the profile explains why not.
package profile

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jail-sandbox/jail/config"
	"github.com/jail-sandbox/jail/policy"
)

//go:embed profiles/*.toml
var builtin embed.FS

// ErrNotFound is returned for a profile that exists nowhere.
var ErrNotFound = errors.New("no such profile")

// Source finds profiles: the user's directory first, then the built-in ones.
type Source struct {
	// Dir is the user's profile directory ($XDG_CONFIG_HOME/jail/profiles);
	// "" for built-in profiles only.
	Dir string
}

// ForConfigDir returns the Source for a jail config directory.
func ForConfigDir(configDir string) Source {
	if configDir == "" {
		return Source{}
	}
	return Source{Dir: filepath.Join(configDir, "profiles")}
}

// Info describes one profile for listing.
type Info struct {
	Name        string
	Description string
	Path        string // "" for a built-in profile
	Shadows     bool   // a user profile hiding the built-in one of that name
	Err         error  // a profile that does not parse
}

// Load returns the named profile, parsed.
func (s Source) Load(name string) (*config.File, error) {
	data, path, err := s.read(name)
	if err != nil {
		return nil, err
	}
	return config.Parse(path, data, config.ProfileFile, config.Source{Kind: config.FromProfile, Profile: name, File: path})
}

// Raw returns the profile's text and its path ("" for a built-in one).
func (s Source) Raw(name string) ([]byte, string, error) { return s.read(name) }

func (s Source) read(name string) ([]byte, string, error) {
	if !policy.ValidName(name) {
		return nil, "", fmt.Errorf("profile %q: a profile name is lower-case letters, digits, '-', '.' and '_'", name)
	}
	if s.Dir != "" {
		p := filepath.Join(s.Dir, name+".toml")
		data, err := os.ReadFile(p)
		if err == nil {
			return data, p, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, "", fmt.Errorf("profile %s: %w", name, err)
		}
	}
	data, err := builtin.ReadFile("profiles/" + name + ".toml")
	if err != nil {
		return nil, "", fmt.Errorf("profile %s: %w; jail profiles lists them", name, ErrNotFound)
	}
	return data, "", nil
}

// List returns every profile, built-in and the user's, by name, each
// loaded for its description (or the error that loading gave).
func (s Source) List() ([]Info, error) {
	out, err := s.Names()
	if err != nil {
		return nil, err
	}
	for i := range out {
		f, err := s.Load(out[i].Name)
		if err != nil {
			out[i].Err = err
		} else {
			out[i].Description = f.Description
		}
	}
	return out, nil
}

// Names returns every profile, built-in and the user's, by name, without
// loading any: Name, Path and Shadows only.
func (s Source) Names() ([]Info, error) {
	byName := map[string]*Info{}
	entries, _ := fs.ReadDir(builtin, "profiles")
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".toml")
		byName[name] = &Info{Name: name}
	}
	if s.Dir != "" {
		entries, err := os.ReadDir(s.Dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("profiles in %s: %w", s.Dir, err)
		}
		for _, e := range entries {
			name, ok := strings.CutSuffix(e.Name(), ".toml")
			if !ok || !policy.ValidName(name) {
				continue
			}
			_, shadows := byName[name]
			byName[name] = &Info{Name: name, Path: filepath.Join(s.Dir, e.Name()), Shadows: shadows}
		}
	}
	var out []Info
	for _, in := range byName {
		out = append(out, *in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
