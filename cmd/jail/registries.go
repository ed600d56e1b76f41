package main

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jail-sandbox/jail/config"
	"github.com/jail-sandbox/jail/pastwrite"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/statedir"
	"github.com/jail-sandbox/jail/toolreg"
)

// allowRegistries allows the registry hosts of the tools the profiles name
// (registries = ["npm"]), as the host's configuration of each tool says
// (package toolreg), and adds toolreg's notes. Under net none or host
// nothing is added: the user chose all or nothing.
func allowRegistries(p *policy.Policy, res *config.Result, env config.Env, environ []string) {
	if len(res.Registries) == 0 || p.Net == policy.NetNone || p.Net == policy.NetHost {
		return
	}
	var tools []string
	for _, r := range res.Registries {
		tools = append(tools, r.Tool)
	}
	found := toolreg.Resolve(tools, registryEnv(p, res.Workspace, env, environ))
	for _, h := range found.Hosts {
		switch {
		case h.IsIP() && strings.Contains(h.Name, ":"):
			p.Notices = append(p.Notices, h.Tool+": registry "+h.Pattern()+" ("+h.From+") is an IPv6 address; add --allow-ip for it")
			continue
		case h.IsIP():
			p.AllowIP = appendNew(p.AllowIP, h.Name+"/32:"+strconv.Itoa(int(h.Port)))
		default:
			p.AllowDomain = appendNew(p.AllowDomain, h.Pattern())
		}
		if p.DryRun {
			p.Notices = append(p.Notices, "registry "+h.Pattern()+" allowed for "+h.Tool+" ("+h.From+")")
		}
	}
	p.Notices = append(p.Notices, found.Notes...)
	for _, f := range found.Files {
		p.Files = append(p.Files, policy.File{Path: f.Path, Content: string(f.Data), Why: f.Why})
	}
	for _, kv := range found.SetEnv {
		name, _, _ := strings.Cut(kv, "=")
		if !setsEnv(p, environ, name) {
			p.SetEnv = append(p.SetEnv, kv)
		}
	}
}

// registryEnv is the host side toolreg reads for the run: the tools'
// answers cached in jail's state directory (no sandbox reaches it), and
// what the sandbox can write not trusted.
func registryEnv(p *policy.Policy, workspace string, env config.Env, environ []string) toolreg.Env {
	cache := ""
	var past *pastwrite.Set
	if d, err := statedir.From(func(k string) string { return getenvIn(environ, k) }); err == nil {
		cache = filepath.Join(d, statedir.Registries)
		// A record that does not parse stops the start itself (the
		// plan's own Load says so); nil here only until then.
		past, _ = pastwrite.Load(filepath.Join(d, statedir.Written))
	}
	return toolreg.Env{
		Home: env.Home, Cwd: env.Cwd, Environ: environ, CacheFile: cache,
		Writable: writableBy(p, workspace, env, past),
	}
}

// setsEnv reports whether the run already sets name, or passes it from the
// host where it is set (npm reads its variables in any case).
func setsEnv(p *policy.Policy, environ []string, name string) bool {
	for _, kv := range p.SetEnv {
		if n, _, _ := strings.Cut(kv, "="); strings.EqualFold(n, name) {
			return true
		}
	}
	for _, n := range p.Env {
		if !strings.EqualFold(n, name) {
			continue
		}
		for _, kv := range environ {
			if k, _, _ := strings.Cut(kv, "="); k == n {
				return true
			}
		}
	}
	return false
}

func appendNew(l []string, v string) []string {
	for _, x := range l {
		if x == v {
			return l
		}
	}
	return append(l, v)
}

func getenvIn(environ []string, name string) string {
	for i := len(environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(environ[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}

// writableBy reports whether the sandbox will be able to write a path: the
// workspace, the write paths, the host's caches handed over. A tool's
// configuration found there is the agent's to change, so it does not widen
// the allowlist. The tools jail asks run on the host: a tree an earlier
// run made writable (past) counts too, since what that run's agent left on
// the PATH (a venv's bin in another project) is still there.
func writableBy(p *policy.Policy, workspace string, env config.Env, past *pastwrite.Set) func(string) bool {
	var roots []string
	add := func(path string) {
		if strings.HasPrefix(path, "~/") && env.Home != "" {
			path = filepath.Join(env.Home, path[2:])
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(env.Cwd, path)
		}
		roots = append(roots, filepath.Clean(path))
		if r, err := filepath.EvalSymlinks(path); err == nil {
			roots = append(roots, r)
		}
	}
	if workspace != "" {
		add(workspace)
	}
	for _, w := range p.Write {
		add(w)
	}
	if p.HostCaches {
		for _, c := range p.Cache {
			if _, target, err := policy.ParseCache(c); err == nil {
				add(target)
			}
		}
	}
	return func(path string) bool {
		paths := []string{filepath.Clean(path)}
		if r, err := filepath.EvalSymlinks(path); err == nil {
			paths = append(paths, r)
		}
		for _, q := range paths {
			for _, r := range roots {
				if q == r || strings.HasPrefix(q, r+"/") || r == "/" {
					return true
				}
			}
		}
		return past.Covers(path)
	}
}
