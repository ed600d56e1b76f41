package toolreg

import (
	"bufio"
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// npmrcEntry is one registry setting of an npmrc file: "registry" or
// "@scope:registry", and its value.
type npmrcEntry struct {
	Key, Value string
}

// Compiled at first use, not in every jail process's package init.
var npmEnvRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([^}]*)\}`) })

// parseNpmrc reads the registry settings of an npmrc file (ini lines key =
// value; ';' and '#' comments; quoted values; ${VAR} replaced from getenv as
// npm does). Other keys (tokens among them) are not kept.
func parseNpmrc(data []byte, getenv func(string) string) []npmrcEntry {
	var out []npmrcEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == ';' || line[0] == '#' || line[0] == '[' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			v = v[1 : len(v)-1]
		}
		if !npmRegistryKey(k) {
			continue
		}
		v = npmEnvRef().ReplaceAllStringFunc(v, func(m string) string {
			return getenv(m[2 : len(m)-1])
		})
		out = append(out, npmrcEntry{Key: k, Value: v})
	}
	return out
}

// npmRegistryKey: registry, or @scope:registry.
func npmRegistryKey(k string) bool {
	if k == "registry" {
		return true
	}
	scope, rest, ok := strings.Cut(k, ":")
	return ok && rest == "registry" && strings.HasPrefix(scope, "@") && len(scope) > 1
}

// npmEnvEntries are the registry settings of the environment: npm reads
// npm_config_KEY in any case. The last of a name comes first (it wins).
func npmEnvEntries(environ []string) []npmrcEntry {
	var out []npmrcEntry
	for i := len(environ) - 1; i >= 0; i-- {
		k, v, _ := strings.Cut(environ[i], "=")
		lk := strings.ToLower(k)
		if !strings.HasPrefix(lk, "npm_config_") {
			continue
		}
		if key := lk[len("npm_config_"):]; npmRegistryKey(key) {
			out = append(out, npmrcEntry{Key: key, Value: v})
		}
	}
	return out
}

// npmLocalPrefix is npm's project directory: the nearest directory from
// cwd up holding package.json or node_modules, else cwd.
func npmLocalPrefix(cwd string) string {
	for d := cwd; ; {
		for _, n := range []string{"package.json", "node_modules"} {
			if _, err := os.Stat(filepath.Join(d, n)); err == nil {
				return d
			}
		}
		up := filepath.Dir(d)
		if up == d {
			return cwd
		}
		d = up
	}
}

// npmAnswer reads `npm config get registry globalconfig`'s key=value lines.
func npmAnswer(out string) (registry, global string) {
	for _, l := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(l), "=")
		switch k {
		case "registry":
			registry = v
		case "globalconfig":
			global = v
		}
	}
	return registry, global
}

// npmHosts follows npm's order: environment, project .npmrc, user .npmrc,
// global npmrc, npm's default (asked from npm, whose answer includes its
// built-in and global configuration).
func npmHosts(c *collector, cache *cache) {
	e := c.env
	type layer struct {
		from    string
		entries []npmrcEntry
	}
	var layers []layer
	layers = append(layers, layer{"the environment (npm_config_registry)", npmEnvEntries(e.Environ)})
	readFile := func(path, what string) {
		data, err := readConfig(path)
		if err != nil {
			return
		}
		entries := parseNpmrc(data, e.getenv)
		if e.Writable(path) {
			var urls []string
			for _, en := range entries {
				urls = append(urls, en.Value)
			}
			c.untrusted(path, urls)
			return
		}
		layers = append(layers, layer{e.tilde(path) + " " + what, entries})
	}
	readFile(filepath.Join(npmLocalPrefix(e.Cwd), ".npmrc"), "(project)")
	user := ""
	for _, kv := range e.Environ {
		if k, v, _ := strings.Cut(kv, "="); strings.EqualFold(k, "npm_config_userconfig") {
			user = v
		}
	}
	if user == "" && e.Home != "" {
		user = filepath.Join(e.Home, ".npmrc")
	}
	if user != "" {
		readFile(user, "(user)")
	}

	var answer string
	bin, haveNpm := findTool(c, "npm")
	if haveNpm {
		// npm's own answer without the user's configuration: what it uses
		// when nothing above sets the registry.
		env := scrubEnv(e.Environ, func(k string) bool { return strings.HasPrefix(strings.ToLower(k), "npm_config_") })
		env = append(env, "npm_config_userconfig="+os.DevNull, "npm_config_update_notifier=false")
		out, err := ask(c, cache, bin, nil, nil, func(a string) []string {
			_, g := npmAnswer(a)
			if g == "" {
				return nil
			}
			return []string{g}
		}, env, "config", "get", "registry", "globalconfig")
		if err != nil {
			c.note("npm: could not ask npm for its registry (%v); add --allow-domain HOST for it", err)
		}
		answer = out
	}
	def, global := npmAnswer(answer)
	if global != "" {
		readFile(global, "(global)")
	}

	// The highest layer setting a key wins, as in npm.
	seen := map[string]bool{}
	for _, l := range layers {
		for _, en := range l.entries {
			if seen[en.Key] {
				continue
			}
			seen[en.Key] = true
			// The setting reaches npm inside as a variable: the files are
			// masked there (they hold tokens), and a variable may not be
			// passed.
			if c.url(en.Value, l.from+" "+en.Key) {
				if u, err := url.Parse(en.Value); err == nil {
					u.User = nil
					c.setenv = append(c.setenv, "npm_config_"+en.Key+"="+u.String())
				}
			}
		}
	}
	if seen["registry"] {
		return
	}
	switch {
	case def != "":
		c.url(def, "npm's default registry (npm config get registry)")
	case !haveNpm:
		c.note("npm: no npm jail can ask and no registry configured (npm_config_registry, ~/.npmrc); add --allow-domain HOST for your registry")
	}
}
