package gitguard

import (
	"path/filepath"
	"slices"
	"strings"
)

// lefthookFiles protects what the lefthook configs of work tree w name
// beyond themselves: the files in their `extends:` (globs too, and the
// files those extend in turn) and their `source_dir`/`source_dir_local`
// (where `scripts:` run from). lefthook 2.2.2 runs each in a `git commit`
// (tried by hand): an agent's edit there runs in the host's next commit.
// hooks are the installed hooks' names (a source_dir at the top of the
// work tree protects its <hook>/ subdirectories only).
func (s *scanner) lefthookFiles(w string, configs, hooks []string) {
	at := func(v string) string {
		switch {
		case strings.HasPrefix(v, "~/") && s.in.Home != "":
			return filepath.Join(s.in.Home, v[2:])
		case filepath.IsAbs(v):
			return filepath.Clean(v)
		}
		return filepath.Join(w, v) // lefthook reads them from the repository's top
	}
	inside := func(p string) bool { return strings.HasPrefix(p, w+string(filepath.Separator)) }
	seen := map[string]bool{}
	var read func(p string, depth int)
	read = func(p string, depth int) {
		if depth > 10 || seen[p] {
			return
		}
		seen[p] = true
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			return
		}
		b, err := readSmall(r)
		if err != nil {
			return
		}
		text := string(b)
		for _, v := range managerValues(text, "extends") {
			p := at(v)
			if !strings.ContainsAny(v, "*?[{") {
				s.manage(p, false, "lefthook extends its config with it")
				read(p, depth+1)
				continue
			}
			// A glob: what matches now, and the directory the glob
			// lists (a file added there later is read too) when it lies
			// strictly inside the work tree.
			ms, _ := filepath.Glob(p)
			for _, m := range ms {
				s.manage(m, false, "lefthook extends its config with it (a glob in extends)")
				read(m, depth+1)
			}
			dir := p
			for strings.ContainsAny(dir, "*?[{") {
				dir = filepath.Dir(dir)
			}
			if inside(dir) {
				s.manage(dir, true, "lefthook extends its config with the files a glob names in it")
			}
		}
		for _, k := range []string{"source_dir", "source_dir_local"} {
			for _, v := range managerValues(text, k) {
				d := at(v)
				if inside(d) {
					s.manage(d, true, "lefthook runs the scripts in it ("+k+")")
					continue
				}
				if d == w {
					// Why: scripts are source_dir/<hook>/<script>; the
					// whole work tree read-only would stop the work.
					for _, h := range hooks {
						s.manage(filepath.Join(d, h), true, "lefthook runs the scripts in it ("+k+")")
					}
				}
			}
		}
	}
	for _, c := range configs {
		read(c, 0)
	}
}

// managerValues returns the values of key in a hook manager's config
// (lefthook's YAML, TOML, JSON, JSONC; overcommit's YAML), read by lines: a scalar (`key:
// v`, `key = "v"`, `"key": "v",`), a flow list on one line or more (`[a,
// 'b', "c"]`) or a YAML block list (`- a` lines). It reads the key at any
// depth: a name matched too often protects more, never less.
func managerValues(text, key string) []string {
	lines := strings.Split(text, "\n")
	var out []string
	add := func(v string) {
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for i := 0; i < len(lines); i++ {
		rest, ok := keyAt(lines[i], key)
		if !ok {
			continue
		}
		v := strings.TrimSpace(uncomment(rest[1:]))
		switch {
		case v == "":
			// A YAML block list below.
			for i+1 < len(lines) {
				n := strings.TrimSpace(lines[i+1])
				if n == "" || strings.HasPrefix(n, "#") {
					i++
					continue
				}
				item, ok := strings.CutPrefix(n, "-")
				if !ok {
					break
				}
				add(uncomment(item))
				i++
			}
		case strings.HasPrefix(v, "["):
			list := v
			for !strings.Contains(list, "]") && i+1 < len(lines) {
				i++
				list += "," + strings.TrimSpace(uncomment(lines[i]))
			}
			list = strings.TrimPrefix(list, "[")
			if j := strings.Index(list, "]"); j >= 0 {
				list = list[:j]
			}
			for _, item := range strings.Split(list, ",") {
				add(item)
			}
		case v[0] == '"' || v[0] == '\'':
			if j := strings.IndexByte(v[1:], v[0]); j >= 0 {
				add(v[1 : j+1])
			}
		default:
			add(strings.TrimRight(v, ",}"))
		}
	}
	return out
}

// keyAt finds key (bare or quoted, after the line's start, a space, "{" or
// ",") followed by ":" or "=" in line l, and returns what follows the sign.
func keyAt(l, key string) (string, bool) {
	for from := 0; ; {
		j := strings.Index(l[from:], key)
		if j < 0 {
			return "", false
		}
		j += from
		from = j + len(key)
		q, before := byte(0), j
		if before > 0 && (l[before-1] == '"' || l[before-1] == '\'') {
			q = l[before-1]
			before--
		}
		if before > 0 && !strings.ContainsRune(" \t{,", rune(l[before-1])) {
			continue
		}
		rest := l[from:]
		if q != 0 {
			if !strings.HasPrefix(rest, string(q)) {
				continue
			}
			rest = rest[1:]
		}
		rest = strings.TrimLeft(rest, " \t")
		if rest != "" && (rest[0] == ':' || rest[0] == '=') {
			return rest, true
		}
	}
}

// overcommitFiles protects what .overcommit.yml (and .local-overcommit.yml,
// merged into it) names in work tree w: its plugin_directory (the
// repository's own hooks, .rb files run in each hook; .git-hooks by
// default, protected by name) and its gemfile, which the installed hook
// hands to Bundler (Ruby code run) before overcommit checks any signature.
// A gemfile named Gemfile or gems.rb is the project's own bundle: project
// code the host runs with any `bundle exec`, left writable.
func (s *scanner) overcommitFiles(w string) {
	for _, f := range []string{".overcommit.yml", ".local-overcommit.yml"} {
		r, err := filepath.EvalSymlinks(filepath.Join(w, f))
		if err != nil {
			continue
		}
		b, err := readSmall(r)
		if err != nil {
			continue
		}
		for _, v := range managerValues(string(b), "plugin_directory") {
			if d := filepath.Join(w, v); strings.HasPrefix(d, w+string(filepath.Separator)) {
				s.manage(d, true, "overcommit runs the hook plugins in it (plugin_directory)")
			}
		}
		for _, v := range managerValues(string(b), "gemfile") {
			if v == "false" || filepath.Base(v) == "Gemfile" || filepath.Base(v) == "gems.rb" {
				continue
			}
			p := v
			if !filepath.IsAbs(p) {
				p = filepath.Join(w, v) // the hook runs in the work tree's top
			}
			s.manage(p, false, "overcommit's hooks load it with Bundler (gemfile)")
		}
	}
}

// uncomment drops a YAML/TOML/JSONC comment (" #" or " //" on) from a line.
func uncomment(l string) string {
	for _, c := range []string{" #", "\t#", " //", "\t//"} {
		if j := strings.Index(l, c); j >= 0 {
			l = l[:j]
		}
	}
	return l
}
