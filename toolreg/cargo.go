package toolreg

import (
	"encoding/json"
	"path/filepath"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
)

// crates.io, cargo's default registry: its sparse index (cargo's
// CRATES_IO_HTTP_INDEX) and the download host its config.json names. Its
// API host (crates.io: search, publish, owner, yank) is left out: a build
// never needs it.
const (
	cratesIOIndex     = "https://index.crates.io/"
	cratesIODownloads = "https://static.crates.io/crates"
)

// cargoConfig is what a cargo config file says about where crates come
// from.
type cargoConfig struct {
	Source map[string]struct {
		ReplaceWith   string `toml:"replace-with"`
		Registry      string `toml:"registry"`
		LocalRegistry string `toml:"local-registry"`
		Directory     string `toml:"directory"`
	} `toml:"source"`
	Registries map[string]struct {
		Index string `toml:"index"`
	} `toml:"registries"`
}

// cargoSources is the merged view of cargo's files: a key set in a file
// closer to the project wins.
type cargoSources struct {
	replaceWith map[string]string // source -> the source replacing it
	registry    map[string]string // source -> its index URL ("" for a local one)
	local       map[string]bool
	registries  map[string]string // alternative registry -> index URL
	from        map[string]string // a source or registry -> the file naming it
}

func parseCargoConfig(data []byte) (*cargoConfig, error) {
	var c cargoConfig
	if err := toml.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

func (s *cargoSources) add(c *cargoConfig, from string) {
	for name, src := range c.Source {
		if _, ok := s.replaceWith[name]; !ok && src.ReplaceWith != "" {
			s.replaceWith[name] = src.ReplaceWith
		}
		if _, ok := s.registry[name]; !ok && src.Registry != "" {
			s.registry[name], s.from["source."+name] = src.Registry, from
		}
		if src.LocalRegistry != "" || src.Directory != "" {
			s.local[name] = true
		}
	}
	for name, r := range c.Registries {
		if _, ok := s.registries[name]; !ok && r.Index != "" {
			s.registries[name], s.from["registries."+name] = r.Index, from
		}
	}
}

// replacement follows crates-io's replace-with chain; "" when crates-io is
// not replaced, local when it ends in a local registry or directory.
func (s *cargoSources) replacement() (url, from string, local bool) {
	name := "crates-io"
	for range 16 {
		next, ok := s.replaceWith[name]
		if !ok {
			break
		}
		name = next
	}
	if name == "crates-io" {
		return "", "", false
	}
	if s.local[name] {
		return "", "", true
	}
	if u, ok := s.registry[name]; ok {
		return u, s.from["source."+name], false
	}
	if u, ok := s.registries[name]; ok { // replace-with may name a registry
		return u, s.from["registries."+name], false
	}
	return "", "", false
}

// cargoFiles are cargo's config files, the project's nearest first, then
// $CARGO_HOME's.
func cargoFiles(cwd, cargoHome string) []string {
	var files []string
	for d := cwd; ; {
		for _, n := range []string{"config.toml", "config"} {
			files = append(files, filepath.Join(d, ".cargo", n))
		}
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	for _, n := range []string{"config.toml", "config"} {
		files = append(files, filepath.Join(cargoHome, n))
	}
	return files
}

// cargoIndexRecord is cargo's copy of a sparse index's config.json, kept
// in $CARGO_HOME/registry/index/HOST-HASH/: where that registry's
// downloads and API live.
type cargoIndexRecord struct {
	DL  string `json:"dl"`
	API string `json:"api"`
}

// cargoHosts reads source replacement and alternative registries from
// cargo's config files. Cargo cannot print its default registry: an
// unreplaced crates-io is crates.io's index and download host, with the
// sparse indexes of cargo's own record on this host.
func cargoHosts(c *collector) {
	e := c.env
	home := e.getenv("CARGO_HOME")
	if !filepath.IsAbs(home) {
		if e.Home == "" {
			c.note("cargo: no home directory; add --allow-domain HOST for your registry")
			return
		}
		home = filepath.Join(e.Home, ".cargo")
	}
	s := &cargoSources{replaceWith: map[string]string{}, registry: map[string]string{}, local: map[string]bool{},
		registries: map[string]string{}, from: map[string]string{}}
	seen := map[string]bool{}
	for _, f := range cargoFiles(e.Cwd, home) {
		if seen[f] {
			continue
		}
		seen[f] = true
		data, err := readConfig(f)
		if err != nil {
			continue
		}
		conf, err := parseCargoConfig(data)
		if err != nil {
			c.note("cargo: %s does not parse (%v); its registries are not allowed", e.tilde(f), err)
			continue
		}
		if e.Writable(f) {
			var urls []string
			for _, src := range conf.Source {
				urls = append(urls, src.Registry)
			}
			for _, r := range conf.Registries {
				urls = append(urls, r.Index)
			}
			c.untrusted(f, urls)
			continue
		}
		s.add(conf, e.tilde(f))
	}
	for name, u := range s.registries {
		c.url(u, s.from["registries."+name]+" registries."+name)
	}
	url, from, local := s.replacement()
	switch {
	case local:
	case url != "":
		c.url(url, from+" source replacement")
	default:
		cargoRecords(c, home)
		// Why: cargo cannot print its default registry (no `cargo config
		// get` on a stable toolchain), and on a fresh host it has no
		// record of one, so the rust profile failed every first build.
		// Without a replacement cargo (1.70 and later) uses crates.io's
		// sparse index, built into its binary, and downloads from the dl
		// host that index's config.json names; both are crates.io's own,
		// fixed, and named here as the default only: a configured
		// replacement (above) is used instead, as cargo would.
		c.url(cratesIOIndex, "cargo's default registry, crates.io (no source replacement in "+e.tilde(home)+"/config.toml)")
		c.url(cratesIODownloads, "crates.io's downloads (the dl of its index's config.json)")
	}
	// Each index cargo has a record of gives its download and API hosts.
	for _, h := range c.hosts {
		cargoRecord(c, home, h.Name)
	}
}

// cargoRecords adds the sparse indexes of cargo's own record.
func cargoRecords(c *collector, home string) {
	dirs, _ := filepath.Glob(filepath.Join(home, "registry", "index", "*", "config.json"))
	for _, f := range dirs {
		dir := filepath.Base(filepath.Dir(f))
		i := strings.LastIndexByte(dir, '-')
		if i <= 0 || c.env.Writable(f) {
			continue
		}
		c.url("https://"+dir[:i], "cargo's record of the indexes it used ("+c.env.tilde(filepath.Dir(f))+")")
	}
}

// cargoRecord adds the download and API hosts of a sparse index that
// cargo has a record of.
func cargoRecord(c *collector, home, host string) {
	dirs, _ := filepath.Glob(filepath.Join(home, "registry", "index", host+"-*", "config.json"))
	for _, f := range dirs {
		if c.env.Writable(f) {
			continue
		}
		data, err := readConfig(f)
		if err != nil {
			continue
		}
		var r cargoIndexRecord
		if json.Unmarshal(data, &r) != nil {
			continue
		}
		from := "the index's config.json (" + c.env.tilde(f) + ")"
		c.url(r.DL, from+" dl")
		c.url(r.API, from+" api")
	}
}
