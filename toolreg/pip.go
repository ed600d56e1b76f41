package toolreg

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// pipKeys are the pip options that name where packages come from.
var pipKeys = []string{"index-url", "extra-index-url", "find-links"}

// parsePipConf reads a pip configuration file (configparser's ini: [section]
// headers, key = value or key: value, indented continuation lines, '#' and
// ';' comments) and returns, for the keys pipKeys names, the values of the
// [install] section over those of [global], each split on white space.
func parsePipConf(data []byte) map[string][]string {
	sections := map[string]map[string]string{}
	var sec, key string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		raw := sc.Text()
		line := strings.TrimSpace(raw)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if raw[0] == ' ' || raw[0] == '\t' {
			if key != "" && sections[sec] != nil {
				sections[sec][key] += "\n" + line
			}
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				sec, key = "", ""
				continue
			}
			sec, key = strings.TrimSpace(line[1:end]), ""
			if sections[sec] == nil {
				sections[sec] = map[string]string{}
			}
			continue
		}
		i := strings.IndexAny(line, "=:")
		if i < 0 || sections[sec] == nil {
			key = ""
			continue
		}
		// pip accepts index_url for index-url.
		key = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(line[:i])), "_", "-")
		sections[sec][key] = strings.TrimSpace(line[i+1:])
	}
	out := map[string][]string{}
	for _, k := range pipKeys {
		for _, s := range []string{"global", "install"} {
			if v, ok := sections[s][k]; ok {
				out[k] = strings.Fields(v)
			}
		}
	}
	return out
}

// pipConfigFiles returns pip's configuration files in override order
// (global, user, site, PIP_CONFIG_FILE), as pip loads them.
func pipConfigFiles(e *Env) []string {
	env := e.getenv("PIP_CONFIG_FILE")
	if env == os.DevNull {
		return nil // pip loads no file at all
	}
	var files []string
	dirs := e.getenv("XDG_CONFIG_DIRS")
	if dirs == "" {
		dirs = "/etc/xdg"
	}
	for _, d := range strings.Split(dirs, ":") {
		if filepath.IsAbs(d) {
			files = append(files, filepath.Join(d, "pip", "pip.conf"))
		}
	}
	files = append(files, "/etc/pip.conf")
	envExists := false
	if env != "" {
		_, err := os.Stat(env)
		envExists = err == nil
	}
	if !envExists && e.Home != "" {
		files = append(files, filepath.Join(e.Home, ".pip", "pip.conf"))
		xdg := e.getenv("XDG_CONFIG_HOME")
		if !filepath.IsAbs(xdg) {
			xdg = filepath.Join(e.Home, ".config")
		}
		files = append(files, filepath.Join(xdg, "pip", "pip.conf"))
	}
	if v := e.getenv("VIRTUAL_ENV"); filepath.IsAbs(v) {
		files = append(files, filepath.Join(v, "pip.conf"))
	}
	if env != "" {
		files = append(files, env)
	}
	return files
}

// pipDefaultSnippet asks pip which index it uses when none is configured,
// and where that index keeps its files.
const pipDefaultSnippet = "from pip._internal.models.index import PyPI as p; print(p.simple_url); print(p.file_storage_domain)"

// pipHosts follows pip's order: files, then PIP_* variables, then pip's
// own default (asked from pip).
func pipHosts(c *collector, cache *cache) {
	e := c.env
	vals := map[string][]string{}
	from := map[string]string{}
	for _, f := range pipConfigFiles(e) {
		data, err := readConfig(f)
		if err != nil {
			continue
		}
		conf := parsePipConf(data)
		if e.Writable(f) {
			var urls []string
			for _, k := range pipKeys {
				urls = append(urls, conf[k]...)
			}
			c.untrusted(f, urls)
			continue
		}
		for k, v := range conf {
			vals[k], from[k] = v, e.tilde(f)+" "+k
		}
	}
	for _, k := range pipKeys {
		name := "PIP_" + strings.ToUpper(strings.ReplaceAll(k, "-", "_"))
		if v, ok := e.lookupEnv(name); ok {
			vals[k], from[k] = strings.Fields(v), name
		}
	}
	for _, k := range pipKeys {
		for _, u := range vals[k] {
			c.url(u, from[k])
		}
	}
	if _, ok := vals["index-url"]; ok {
		return
	}
	py, ok := pipPython(c)
	if !ok {
		c.note("pip: no pip jail can ask and no index configured (PIP_INDEX_URL, pip.conf); add --allow-domain HOST for your index and its file host")
		return
	}
	env := scrubEnv(e.Environ, func(k string) bool { return strings.HasPrefix(k, "PIP_") || k == "PYTHONPATH" || k == "PYTHONSTARTUP" })
	out, err := ask(c, cache, py, []string{"PYENV_VERSION=" + e.getenv("PYENV_VERSION")}, nil, nil, env, "-I", "-c", pipDefaultSnippet)
	lines := strings.Fields(out)
	if err != nil || len(lines) != 2 {
		c.note("pip: could not ask pip for its default index (%v); add --allow-domain HOST for your index and its file host", err)
		return
	}
	c.url(lines[0], "pip's default index")
	c.url("https://"+lines[1], "pip's default index's file host")
}

// pipPython is the interpreter pip runs with: its #! line's, else the
// python3 on the PATH (a version manager's shim is a shell script).
func pipPython(c *collector) (string, bool) {
	pip, ok := findTool(c, "pip3", "pip")
	if !ok {
		return "", false
	}
	if line := firstLine(pip); strings.HasPrefix(line, "#!") {
		fields := strings.Fields(line[2:])
		if len(fields) > 0 && strings.HasPrefix(filepath.Base(fields[0]), "python") && filepath.IsAbs(fields[0]) {
			if c.env.Writable(fields[0]) {
				return "", false
			}
			return fields[0], true
		}
	}
	return findTool(c, "python3")
}

// firstLine returns the first line of the regular file at path, at most
// 4 KiB. The pip found may be the workspace's (a venv's bin on the PATH):
// the open does not block on a FIFO the agent put there, nothing but a
// regular file is read, and a binary without a newline is not read whole.
func firstLine(path string) string {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	line, _ := bufio.NewReader(io.LimitReader(f, 4096)).ReadString('\n')
	return line
}
