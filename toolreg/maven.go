package toolreg

import (
	"archive/zip"
	"encoding/xml"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Maven: where mvn downloads artifacts and plugins from. Its default, the
// central repository, is Maven's own: the super POM in the installation
// the host's mvn runs (lib/maven-model-builder-*.jar,
// org/apache/maven/model/pom-4.0.0.xml), read there, never written down
// here. settings.xml (the user's ~/.m2/settings.xml, then the
// installation's conf/settings.xml) may send central to a mirror (a
// mirrorOf that takes central) and add the repositories of its profiles
// that are active (activeByDefault, activeProfiles). A project's pom.xml
// and .mvn/ are in the workspace: what they name is said in a note, not
// allowed, where the sandbox can write them.

// mavenSettings is what a settings.xml says about where artifacts come
// from, and the ids of its servers (their credentials are not read).
type mavenSettings struct {
	Mirrors  []mavenMirror  `xml:"mirrors>mirror"`
	Profiles []mavenProfile `xml:"profiles>profile"`
	// Servers are read for their ids only: the copy Maven inside reads
	// has none, and a mirror or repository whose id has one is named.
	Servers        []string `xml:"servers>server>id"`
	ActiveProfiles []string `xml:"activeProfiles>activeProfile"`
}

type mavenMirror struct {
	ID              string `xml:"id,omitempty"`
	Name            string `xml:"name,omitempty"`
	URL             string `xml:"url"`
	MirrorOf        string `xml:"mirrorOf"`
	Layout          string `xml:"layout,omitempty"`
	MirrorOfLayouts string `xml:"mirrorOfLayouts,omitempty"`
	// Blocked: a mirror that only refuses (Maven's own default settings
	// block plain-http repositories with one at http://0.0.0.0/):
	// nothing is downloaded from it.
	Blocked bool `xml:"blocked,omitempty"`
}

type mavenProfile struct {
	ID              string      `xml:"id"`
	ActiveByDefault bool        `xml:"activation>activeByDefault,omitempty"`
	Repositories    []mavenRepo `xml:"repositories>repository"`
	PluginRepos     []mavenRepo `xml:"pluginRepositories>pluginRepository"`
}

func (p *mavenProfile) active(s *mavenSettings) bool {
	return p.ActiveByDefault || slices.Contains(s.ActiveProfiles, p.ID)
}

// mavenRepo is a repository of a settings profile, as Maven reads it.
type mavenRepo struct {
	ID        string           `xml:"id,omitempty"`
	Name      string           `xml:"name,omitempty"`
	URL       string           `xml:"url"`
	Layout    string           `xml:"layout,omitempty"`
	Releases  *mavenRepoPolicy `xml:"releases,omitempty"`
	Snapshots *mavenRepoPolicy `xml:"snapshots,omitempty"`
}

type mavenRepoPolicy struct {
	Enabled        string `xml:"enabled,omitempty"`
	UpdatePolicy   string `xml:"updatePolicy,omitempty"`
	ChecksumPolicy string `xml:"checksumPolicy,omitempty"`
}

// mavenPOM is the repositories part of a POM (the super POM, a project's).
type mavenPOM struct {
	Repositories []string `xml:"repositories>repository>url"`
	PluginRepos  []string `xml:"pluginRepositories>pluginRepository>url"`
}

// maxMavenFile bounds what is read of the super POM in Maven's jar (the
// files on disk are read as any tool's configuration: readConfig).
const maxMavenFile = 1 << 20

func parseMavenSettings(data []byte) (*mavenSettings, error) {
	var s mavenSettings
	if err := xml.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

func parseMavenPOM(data []byte) (*mavenPOM, error) {
	var p mavenPOM
	if err := xml.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// mirrorsCentral reports whether a mirrorOf value takes the central
// repository: "*", "central", "external:*" (central is not local), in a
// comma list, unless "!central" excludes it.
func mirrorsCentral(of string) bool {
	takes := false
	for _, id := range strings.Split(of, ",") {
		switch strings.TrimSpace(id) {
		case "!central":
			return false
		case "*", "central", "external:*":
			takes = true
		}
	}
	return takes
}

// mavenHome is the installation a mvn file runs: bin/mvn's parent (the
// script finds its home so, symlinks followed).
func mavenHome(mvn string) string {
	real, err := filepath.EvalSymlinks(mvn)
	if err != nil {
		return ""
	}
	return filepath.Dir(filepath.Dir(real))
}

// superPOMRepos reads the repositories of Maven's super POM from the
// installation at home.
func superPOMRepos(home string) ([]string, error) {
	jars, _ := filepath.Glob(filepath.Join(home, "lib", "maven-model-builder-*.jar"))
	if len(jars) == 0 {
		return nil, os.ErrNotExist
	}
	z, err := zip.OpenReader(jars[0])
	if err != nil {
		return nil, err
	}
	defer z.Close()
	for _, f := range z.File {
		if f.Name != "org/apache/maven/model/pom-4.0.0.xml" {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(io.LimitReader(rc, maxMavenFile))
		rc.Close()
		if err != nil {
			return nil, err
		}
		p, err := parseMavenPOM(data)
		if err != nil {
			return nil, err
		}
		return append(p.Repositories, p.PluginRepos...), nil
	}
	return nil, os.ErrNotExist
}

func mavenHosts(c *collector) {
	mvn, ok := findTool(c, "mvn")
	home := ""
	if ok {
		home = mavenHome(mvn)
	}
	// MAVEN_HOME where no mvn is on the PATH, unless the sandbox can
	// write there (its "default" would be the agent's).
	if h, set := c.env.lookupEnv("MAVEN_HOME"); set && filepath.IsAbs(h) && home == "" && !c.env.Writable(h) && !c.env.Writable(filepath.Join(h, "lib")) {
		home = h
	}
	// The settings files, the user's first (its mirrors are matched
	// first, as Maven merges them).
	var files []string
	if c.env.Home != "" {
		files = append(files, filepath.Join(c.env.Home, ".m2", "settings.xml"))
	}
	if home != "" {
		files = append(files, filepath.Join(home, "conf", "settings.xml"))
	}
	centralMirrored := false
	for _, path := range files {
		data, err := readConfig(path)
		if err != nil {
			continue
		}
		s, err := parseMavenSettings(data)
		if err != nil {
			c.note("maven: %s cannot be read as settings (%v): its mirrors and repositories are not allowed", c.env.tilde(path), err)
			continue
		}
		writable := c.env.Writable(path)
		var urls []string
		for _, m := range s.Mirrors {
			if m.Blocked {
				continue
			}
			urls = append(urls, m.URL)
			// Central's own place is kept unless a file jail trusts
			// sends it elsewhere.
			if mirrorsCentral(m.MirrorOf) && !writable {
				centralMirrored = true
			}
		}
		for _, p := range s.Profiles {
			if p.active(s) {
				for _, r := range append(p.Repositories, p.PluginRepos...) {
					urls = append(urls, r.URL)
				}
			}
		}
		if writable {
			c.untrusted(path, urls)
			continue
		}
		added := false
		for _, u := range urls {
			added = c.url(u, c.env.tilde(path)) || added
		}
		if added && strings.HasPrefix(path, filepath.Join(c.env.Home, ".m2")+"/") {
			// Hidden inside with the home (it may hold the passwords of
			// <servers>): Maven there reads a copy of what sends it
			// to the hosts allowed, and nothing else.
			mavenCopy(c, path, s)
		}
	}
	if !centralMirrored {
		switch {
		case home == "":
			c.note("maven: no mvn on your PATH to take Maven's default repository from; add --allow-domain HOST for the repository your builds use")
		default:
			urls, err := superPOMRepos(home)
			if err != nil {
				c.note("maven: Maven's default repository could not be read from %s (%v); add --allow-domain HOST for the repository your builds use", c.env.tilde(home), err)
			}
			for _, u := range urls {
				c.url(u, "Maven's default")
			}
		}
	}
	// The project's own: its POM and the wrapper's download, where the
	// sandbox can write them (in the workspace), named, not allowed.
	for _, path := range []string{filepath.Join(c.env.Cwd, "pom.xml"), filepath.Join(c.env.Cwd, ".mvn", "wrapper", "maven-wrapper.properties")} {
		data, err := readConfig(path)
		if err != nil {
			continue
		}
		var urls []string
		if filepath.Base(path) == "pom.xml" {
			p, err := parseMavenPOM(data)
			if err != nil {
				continue
			}
			urls = append(p.Repositories, p.PluginRepos...)
		} else {
			for _, line := range strings.Split(string(data), "\n") {
				if k, v, ok := strings.Cut(line, "="); ok && strings.TrimSpace(k) == "distributionUrl" {
					urls = append(urls, strings.ReplaceAll(strings.TrimSpace(v), `\:`, ":"))
				}
			}
		}
		if c.env.Writable(path) {
			c.untrusted(path, urls)
			continue
		}
		for _, u := range urls {
			c.url(u, c.env.tilde(path))
		}
	}
}

// maxMavenCopy bounds the copy of a settings file placed inside.
const maxMavenCopy = 64 << 10

// mavenSettingsCopy is the settings file Maven inside reads in place of
// the user's: mirrors, the active profiles' repositories, which profiles are
// active. No servers (passwords), proxies (jail's proxy is the way out),
// local repository, properties or anything else. An element with nothing
// in it is left out (pointers).
type mavenSettingsCopy struct {
	XMLName        xml.Name           `xml:"settings"`
	Comment        xml.Comment        `xml:",comment"`
	Mirrors        *mavenMirrors      `xml:"mirrors,omitempty"`
	Profiles       *mavenProfilesCopy `xml:"profiles,omitempty"`
	ActiveProfiles *mavenActive       `xml:"activeProfiles,omitempty"`
}

type mavenMirrors struct {
	Mirror []mavenMirror `xml:"mirror"`
}

type mavenProfilesCopy struct {
	Profile []mavenProfileCopy `xml:"profile"`
}

type mavenActive struct {
	Profile []string `xml:"activeProfile"`
}

type mavenProfileCopy struct {
	ID           string            `xml:"id"`
	Activation   *mavenActivation  `xml:"activation,omitempty"`
	Repositories *mavenRepos       `xml:"repositories,omitempty"`
	PluginRepos  *mavenPluginRepos `xml:"pluginRepositories,omitempty"`
}

type mavenActivation struct {
	ActiveByDefault bool `xml:"activeByDefault"`
}

type mavenRepos struct {
	Repo []mavenRepo `xml:"repository"`
}

type mavenPluginRepos struct {
	Repo []mavenRepo `xml:"pluginRepository"`
}

// mavenCopy adds the copy of the user's settings.xml at path that Maven
// inside reads where the file itself is hidden, and says which of its
// servers' credentials stay outside.
func mavenCopy(c *collector, path string, s *mavenSettings) {
	cp := mavenSettingsCopy{Comment: xml.Comment(" Written by jail from " + c.env.tilde(path) +
		": its mirrors and active profiles' repositories only; its servers (passwords), proxies and the rest stay outside the sandbox. ")}
	var ids []string
	dropped := 0
	keep := func(id, raw string) (string, bool) {
		u, ok := withoutUserinfo(raw)
		if !ok {
			dropped++
			return "", false
		}
		ids = append(ids, id)
		return u, true
	}
	var mirrors []mavenMirror
	for _, m := range s.Mirrors {
		if u, ok := keep(m.ID, m.URL); ok {
			m.URL = u
			mirrors = append(mirrors, m)
		}
	}
	if len(mirrors) > 0 {
		cp.Mirrors = &mavenMirrors{mirrors}
	}
	repos := func(rs []mavenRepo) []mavenRepo {
		var out []mavenRepo
		for _, r := range rs {
			if u, ok := keep(r.ID, r.URL); ok {
				r.URL = u
				out = append(out, r)
			}
		}
		return out
	}
	var profiles []mavenProfileCopy
	var active []string
	for _, p := range s.Profiles {
		if !p.active(s) {
			continue
		}
		pc := mavenProfileCopy{ID: p.ID}
		if p.ActiveByDefault {
			pc.Activation = &mavenActivation{true}
		} else {
			active = append(active, p.ID)
		}
		if rs := repos(p.Repositories); len(rs) > 0 {
			pc.Repositories = &mavenRepos{rs}
		}
		if rs := repos(p.PluginRepos); len(rs) > 0 {
			pc.PluginRepos = &mavenPluginRepos{rs}
		}
		profiles = append(profiles, pc)
	}
	if len(profiles) > 0 {
		cp.Profiles = &mavenProfilesCopy{profiles}
	}
	if len(active) > 0 {
		cp.ActiveProfiles = &mavenActive{active}
	}
	data, err := xml.MarshalIndent(cp, "", "  ")
	if err != nil || len(data) > maxMavenCopy {
		c.note("maven: %s names repositories or mirrors, which are allowed, but Maven inside does not read that file (it may hold passwords); --read %s --no-default-deny-at %s, if it holds none, makes Maven use them", c.env.tilde(path), c.env.tilde(path), c.env.tilde(path))
		return
	}
	c.files = append(c.files, File{Path: path, Data: append([]byte(xml.Header), append(data, '\n')...),
		Why: "Maven's mirrors and active profiles' repositories of " + c.env.tilde(path) + ", without its servers (passwords) and proxies"})
	if dropped > 0 {
		// Why not name them: the part jail could not take out may be
		// the password itself, and notes reach the terminal and the
		// trail.
		c.note("maven: Maven inside reads %s without %d of its repository URLs: each holds a user, a password or a query that jail cannot take out", c.env.tilde(path), dropped)
	}
	var creds []string
	for _, id := range s.Servers {
		if id != "" && slices.Contains(ids, id) && !slices.Contains(creds, id) {
			creds = append(creds, id)
		}
	}
	if len(creds) > 0 {
		c.note("maven: Maven inside reads %s without its servers: %s reached without credentials; if the agent may have them, --read %s --no-default-deny-at %s (the whole file, passwords and all)", c.env.tilde(path), strings.Join(creds, ", "), c.env.tilde(path), c.env.tilde(path))
	}
}

// withoutUserinfo is a repository URL without a user:password part, and
// false for one that may carry a secret jail cannot take out: a query or
// fragment (a token; Maven appends paths to a repository's URL, so one
// with a query does not work anyway), or an "@" in a URL that does not
// parse.
func withoutUserinfo(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return raw, !strings.Contains(raw, "@")
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", false
	}
	if u.User == nil {
		return raw, true
	}
	u.User = nil
	return u.String(), true
}
