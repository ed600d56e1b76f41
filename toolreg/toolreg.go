// Package toolreg finds the package registries a toolchain profile must
// reach, from the host's own configuration of each tool: npm's registry
// settings, Go's GOPROXY and GOSUMDB, pip's index URLs, cargo's source
// replacement, Maven's mirrors and default repository. A profile says which
// tool to consult (registries = ["npm"]); jail names no registry of its own
// choosing, so a corporate mirror is honoured as the tool would honour it,
// and the public default is whatever the tool says its default is. Cargo
// alone cannot say: its default, crates.io, is named here, and used only
// where cargo's files replace it with nothing.
//
// Each tool's configuration is read in the tool's own order (environment
// over project files over user files over global files over the tool's
// default); only the host and port of each URL are kept, and file: URLs and
// local paths are ignored. Where the default can only come from the tool
// itself, the tool is run once (in /, with the user's configuration for it
// removed from its environment, bounded by a timeout) and its answer cached
// in a file the caller keeps out of the sandbox's reach, keyed by the tool's
// binary and the configuration files the answer depends on (path, size,
// mtime): a run with the profile pays no exec while nothing changed, and a
// run without it never asks.
//
// A configuration file the sandbox can write (a project's .npmrc in the
// workspace, a venv's pip.conf there) is not trusted: the agent could name
// its own host in it for the next run. Its hosts are reported in a note
// naming the --allow-domain flag instead. Where a tool cannot say and
// nothing is configured, a note names the flag to add.
//
// The package imports no other jail package but hosttool (what the tools
// run with); it only reads files and runs the host's tools.
package toolreg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jail-sandbox/jail/hosttool"
)

// The tools a profile can name with registries = [...].
const (
	NPM   = "npm"
	Go    = "go"
	Pip   = "pip"
	Cargo = "cargo"
	Maven = "maven"
)

// Tools lists every tool Resolve knows, for validation and help.
var Tools = []string{NPM, Go, Pip, Cargo, Maven}

// Known reports whether name is a tool Resolve knows.
func Known(name string) bool { return slices.Contains(Tools, name) }

// Host is one registry endpoint: a name (or an IP address) and a TCP port.
type Host struct {
	Name string
	Port uint16
	Tool string
	From string // where it was found: "~/.npmrc registry", "npm's default", "GOPROXY"
}

// Pattern is the host as an allow-domain (or allow-ip) value.
func (h Host) Pattern() string {
	if strings.Contains(h.Name, ":") { // IPv6
		return "[" + h.Name + "]:" + strconv.Itoa(int(h.Port))
	}
	return h.Name + ":" + strconv.Itoa(int(h.Port))
}

// IsIP reports whether the host is an address, not a name.
func (h Host) IsIP() bool { return isIP(h.Name) }

// Result is what Resolve found.
type Result struct {
	Hosts []Host
	// Notes are one-line notices for the user: a tool that could not say,
	// an untrusted file's hosts, each naming the flag to add.
	Notes []string
	// SetEnv are NAME=VALUE settings the tool inside needs to use what it
	// was configured with, where its configuration file is hidden inside
	// (~/.npmrc holds tokens, so jail masks it): the registry URLs only,
	// without any user:password part.
	SetEnv []string
	// Files are files a tool inside reads in place of a configuration
	// file the sandbox hides (Maven's ~/.m2/settings.xml may hold
	// passwords): only what sends the tool to the hosts allowed.
	Files []File
}

// File is one of Result.Files: its content placed read-only at Path (on
// the host, where the tool looks for it) inside the sandbox.
type File struct {
	Path string
	Data []byte
	Why  string
}

// Env is the host side Resolve reads. Zero fields take the process's own.
type Env struct {
	Home    string
	Cwd     string // where the tool would run: project files are found from here
	Environ []string
	// LookPath finds a tool on the host's PATH (nil: the first one outside
	// what Writable names, hosttool.LookPath on Environ's PATH).
	LookPath func(string) (string, error)
	// CacheFile keeps the tools' answers ("" to ask every time). The caller
	// keeps it out of the sandbox's reach.
	CacheFile string
	// Writable reports whether the sandbox can write path: configuration
	// found there is not used (nil: nothing is writable).
	Writable func(path string) bool
	// Run runs a tool and returns its standard output (nil: exec with a
	// timeout of Timeout).
	Run     func(ctx context.Context, dir string, env []string, name string, args ...string) ([]byte, error)
	Timeout time.Duration
}

func (e *Env) getenv(name string) string {
	for i := len(e.Environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e.Environ[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}

func (e *Env) lookupEnv(name string) (string, bool) {
	for i := len(e.Environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e.Environ[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

func (e *Env) fill() {
	if e.Environ == nil {
		e.Environ = os.Environ()
	}
	if e.Home == "" {
		e.Home = e.getenv("HOME")
	}
	if e.Cwd == "" {
		e.Cwd, _ = os.Getwd()
	}
	if e.LookPath == nil {
		// Past a PATH directory the sandbox can write (an activated venv
		// of the workspace first on PATH): the tool asked is the host's,
		// and its default is the same (the workspace's own configuration
		// is read, not trusted, apart).
		e.LookPath = func(name string) (string, error) { return hosttool.LookPath(name, e.Environ, e.Writable) }
	}
	if e.Writable == nil {
		e.Writable = func(string) bool { return false }
	}
	if e.Timeout == 0 {
		e.Timeout = 10 * time.Second
	}
	if e.Run == nil {
		e.Run = func(ctx context.Context, dir string, env []string, name string, args ...string) ([]byte, error) {
			cmd := exec.CommandContext(ctx, name, args...)
			cmd.Dir, cmd.Env = dir, env
			// Killed at the timeout, the tool may leave a child holding
			// its output open (a shell script's): Output would wait for
			// that child too.
			cmd.WaitDelay = 100 * time.Millisecond
			return cmd.Output()
		}
	}
}

// tilde writes a path under the home directory as ~/... for notes.
func (e *Env) tilde(p string) string {
	if e.Home != "" && strings.HasPrefix(p, filepath.Clean(e.Home)+"/") {
		return "~" + strings.TrimPrefix(p, filepath.Clean(e.Home))
	}
	return p
}

// collector gathers hosts and notes for one tool.
type collector struct {
	env    *Env
	tool   string
	hosts  []Host
	notes  []string
	setenv []string
	files  []File
}

// url adds the host of a registry URL (file: URLs, paths and non-URLs are
// ignored) and reports whether it added one.
func (c *collector) url(raw, from string) bool {
	h, ok := hostOfURL(raw)
	if !ok {
		return false
	}
	h.Tool, h.From = c.tool, from
	c.hosts = append(c.hosts, h)
	return true
}

func (c *collector) note(format string, a ...any) {
	c.notes = append(c.notes, fmt.Sprintf(format, a...))
}

// untrusted reports the hosts of a file the sandbox can write, which are
// not allowed.
func (c *collector) untrusted(path string, urls []string) {
	var names []string
	for _, u := range urls {
		if h, ok := hostOfURL(u); ok {
			names = append(names, h.Pattern())
		}
	}
	if len(names) == 0 {
		return
	}
	flags := ""
	for _, n := range names {
		flags += " --allow-domain " + n
	}
	c.note("%s: %s names %s, not allowed because the sandbox can write that file; if you trust it, add%s",
		c.tool, c.env.tilde(path), strings.Join(names, " "), flags)
}

// Resolve returns the registry hosts of the named tools (unknown names are
// ignored; the profile reader refuses them).
func Resolve(tools []string, env Env) Result {
	env.fill()
	cache := loadCache(env.CacheFile)
	// The tools are asked at the same time: a first start with three
	// toolchain profiles waits for the slowest, not for the sum.
	cs := make([]*collector, len(tools))
	var wg sync.WaitGroup
	for i, t := range tools {
		c := &collector{env: &env, tool: t}
		cs[i] = c
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch t {
			case NPM:
				npmHosts(c, cache)
			case Go:
				goHosts(c, cache)
			case Pip:
				pipHosts(c, cache)
			case Cargo:
				cargoHosts(c)
			case Maven:
				mavenHosts(c)
			}
		}()
	}
	wg.Wait()
	var r Result
	for _, c := range cs {
		for _, h := range c.hosts {
			if !slices.ContainsFunc(r.Hosts, func(o Host) bool { return o.Name == h.Name && o.Port == h.Port }) {
				r.Hosts = append(r.Hosts, h)
			}
		}
		r.Notes = append(r.Notes, c.notes...)
		r.SetEnv = append(r.SetEnv, c.setenv...)
		r.Files = append(r.Files, c.files...)
	}
	cache.save()
	return r
}

// ask runs a tool (in /, so that no project file of the current directory
// counts) and returns its output, from the cache while the binary and the
// files it reads are unchanged. inputs are the environment values and files
// the answer depends on besides the binary.
//
// answerFiles, when not nil, names more files the answer depends on, found
// in the answer itself (npm's global config file).
func ask(c *collector, cache *cache, bin string, envIn, files []string, answerFiles func(string) []string, env []string, args ...string) (string, error) {
	key := cacheKey(c.tool, bin, args)
	filesFor := func(answer string) []string {
		if answerFiles == nil {
			return files
		}
		return append(slices.Clip(files), answerFiles(answer)...)
	}
	if e, ok := cache.entry(key); ok {
		if out, ok := cache.get(key, bin, envIn, filesFor(e.Answer)); ok {
			return out, nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.env.Timeout)
	defer cancel()
	// Why: the tool runs on the host. Its #! interpreter (npm's
	// `/usr/bin/env node`, a shim's bash) is looked up on PATH, and the
	// loader's variables name libraries: a PATH directory the sandbox can
	// write (a venv's bin in the workspace) had the agent's node run here.
	out, err := c.env.Run(ctx, "/", hosttool.Env(env, c.env.Writable), bin, args...)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", bin, strings.Join(args, " "), err)
	}
	cache.put(key, bin, envIn, filesFor(string(out)), string(out))
	return string(out), nil
}

// findTool resolves a tool on the host PATH to its file (symlinks
// followed), refusing one the sandbox can write: its answer would be the
// agent's. Where the only one is there, a note says so.
func findTool(c *collector, names ...string) (string, bool) {
	var only, onlyAt string // the first name found only where the sandbox can write
	for _, n := range names {
		p, err := c.env.LookPath(n)
		if errors.Is(err, hosttool.ErrNotFound) && only == "" {
			anywhere := func(string) bool { return false }
			if q, err := hosttool.LookPath(n, c.env.Environ, anywhere); err == nil && c.env.Writable(q) {
				only, onlyAt = n, c.env.tilde(q)
			}
		}
		if err != nil {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		if c.env.Writable(real) || c.env.Writable(p) {
			c.note("%s: %s is in a place the sandbox can write, so jail does not ask it for its registry", c.tool, c.env.tilde(p))
			return "", false
		}
		return p, true
	}
	if only != "" {
		c.note("%s: the only %s on your PATH, %s, is in a place the sandbox can write, so jail does not ask it for its registry", c.tool, only, onlyAt)
	}
	return "", false
}

// scrubEnv returns environ without the variables drop matches.
func scrubEnv(environ []string, drop func(name string) bool) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if !drop(k) {
			out = append(out, kv)
		}
	}
	return out
}
