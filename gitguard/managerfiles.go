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
				continue
			}
			// The work tree's top (or above it) cannot be read-only: its
			// matches to come are observed instead.
			if rest, err := filepath.Rel(dir, p); err == nil {
				s.watchGlob(dir, filepath.ToSlash(rest), filepath.Base(r)+"'s extends names "+v+": the host's lefthook merges each match into its config and runs its commands")
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
// v`, `key = "v"`, `"key": "v",`, or a YAML plain scalar on the next,
// deeper line), a flow list on one line or more (`[a, 'b', "c"]`) or a
// YAML block list (`- a` lines). YAML anchors, aliases and tags are
// followed (`extends: *e` with `&e` elsewhere: lefthook 2.2.2 reads it).
// It reads the key at any depth: a name matched too often protects more,
// never less. A key written quoted with escapes ("ext\x65nds") or as a
// YAML explicit key (`? extends` and `: value` on the next line) is the
// key too: lefthook 2.2.1 reads both (leftovers19).
func managerValues(text, key string) []string {
	lines := strings.Split(text, "\n")
	var out []string
	budget := 256 // aliases followed: a config of many (or nested) aliases stays cheap
	for i := range lines {
		at := i
		rest, ok := keyAt(lines[i], key)
		if !ok {
			rest, ok = escapedKeyAt(lines[i], key)
		}
		if !ok {
			at, rest, ok = explicitKeyAt(lines, i, key)
		}
		if !ok {
			continue
		}
		for _, v := range valuesAt(lines, at, rest[1:], &budget) {
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// valuesAt reads the value that begins with v, the rest of lines[i] after a
// key's sign (or an anchor), as managerValues says. A quoted value is read
// as the parsers read it (quotedAt), on as many lines as it spans.
func valuesAt(lines []string, i int, v string, budget *int) []string {
	var out []string
	add := func(v string) {
		v = untagged(strings.TrimSpace(v))
		if strings.HasPrefix(v, "*") {
			// Why: an alias is the anchored node's value; read as a name,
			// the file lefthook extends with went unprotected (lane U).
			out = append(out, aliasValues(lines, v[1:], budget)...)
			return
		}
		if v != "" {
			out = append(out, v)
		}
	}
	// quoted reads the quoted value beginning s on line i; it reports
	// whether s began with a quote.
	quoted := func(s string) (rest string, end int, was bool) {
		if s == "" || s[0] != '"' && s[0] != '\'' {
			return s, i, false
		}
		vals, rest, end, ok := quotedAt(lines, i, s)
		if !ok {
			return "", i, true
		}
		out = append(out, vals...)
		return rest, end, true
	}
	v = untagged(strings.TrimSpace(uncomment(v)))
	if vals, _, ok := blockScalarAt(lines, i, v, indent(lines[i])); ok {
		return append(out, vals...)
	}
	if item, ok := strings.CutPrefix(v, "-"); ok && (item == "" || item[0] == ' ' || item[0] == '\t') {
		// A block list begun on this line (`? key` then `: - a`): its
		// first item here, the rest below.
		head := untagged(strings.TrimSpace(item))
		if vals, end, block := blockScalarAt(lines, i, head, indent(lines[i])); block {
			out = append(out, vals...)
			i = end
		} else if _, end, was := quoted(head); was {
			i = end
		} else {
			add(item)
		}
		v = ""
	}
	switch {
	case v == "":
		// A YAML block list below, or a plain scalar on the next line
		// deeper than the key's.
		for items := 0; i+1 < len(lines); {
			n := strings.TrimSpace(lines[i+1])
			if n == "" || strings.HasPrefix(n, "#") {
				i++
				continue
			}
			item, ok := strings.CutPrefix(n, "-")
			if !ok {
				if items == 0 && indent(lines[i+1]) > indent(lines[i]) {
					i++
					if _, _, was := quoted(untagged(n)); !was {
						add(uncomment(n))
					}
				}
				break
			}
			items++
			i++
			end := i
			head := untagged(strings.TrimSpace(uncomment(item)))
			if vals, e, block := blockScalarAt(lines, i, head, indent(lines[i])); block {
				out = append(out, vals...)
				end = e
			} else if _, end, ok = quoted(head); !ok {
				add(uncomment(item))
			}
			i = end
		}
	case strings.HasPrefix(v, "["):
		// Items up to the list's "]", across lines, quoted ones read
		// whole (a quoted "," or "]" is part of a name).
		rest := v[1:]
		for read := 0; read <= maxQuotedLines; {
			rest = strings.TrimLeft(rest, " \t,")
			if rest == "" || strings.HasPrefix(rest, "#") || strings.HasPrefix(rest, "//") {
				if i+1 >= len(lines) {
					break
				}
				i++
				read++
				rest = uncomment(lines[i])
				continue
			}
			if rest[0] == ']' {
				break
			}
			r, end, was := quoted(untagged(rest))
			if was {
				read += end - i
				i, rest = end, r
				continue
			}
			j := strings.IndexAny(rest, ",]")
			if j < 0 {
				j = len(rest)
			}
			add(rest[:j])
			rest = rest[j:]
		}
	default:
		if _, _, was := quoted(v); !was {
			add(strings.TrimRight(v, ",}]"))
		}
	}
	return out
}

// aliasValues returns the values of the nodes anchored as the alias that
// begins name (every anchor of that name: YAML takes the last one before
// the alias; more is protected, never less).
func aliasValues(lines []string, name string, budget *int) []string {
	if *budget <= 0 {
		return nil
	}
	*budget-- // each call reads every line
	if j := strings.IndexAny(name, " \t,]}"); j >= 0 {
		name = name[:j]
	}
	var out []string
	for i, l := range lines {
		for from := 0; name != ""; {
			j := strings.Index(l[from:], "&"+name)
			if j < 0 {
				break
			}
			from += j + 1 + len(name)
			if from < len(l) && !strings.ContainsRune(" \t,]}", rune(l[from])) {
				continue
			}
			out = append(out, valuesAt(lines, i, l[from:], budget)...)
		}
	}
	return out
}

// untagged drops a YAML node's leading tags and anchor (`!!str &a x` is x).
func untagged(v string) string {
	for strings.HasPrefix(v, "!") || strings.HasPrefix(v, "&") {
		j := strings.IndexAny(v, " \t")
		if j < 0 {
			return ""
		}
		v = strings.TrimLeft(v[j:], " \t")
	}
	return v
}

// indent is the width of l's leading blanks.
func indent(l string) int { return len(l) - len(strings.TrimLeft(l, " \t")) }

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

// escapedKeyAt is keyAt for key written as a quoted string with escapes
// (`"ext\u0065nds": [...]` in YAML, JSON or TOML): what follows the sign.
func escapedKeyAt(l, key string) (string, bool) {
	if !strings.Contains(l, `\`) {
		return "", false
	}
	for j := 0; j < len(l); j++ {
		if l[j] != '"' || j > 0 && !strings.ContainsRune(" \t{,-?", rune(l[j-1])) {
			continue
		}
		n, after, ok := closeQuote(l[j+1:], `"`)
		if !ok {
			return "", false
		}
		if v, err := unescape(l[j+1:j+1+n], false); err == nil && v == key {
			if rest := strings.TrimLeft(after, " \t"); rest != "" && (rest[0] == ':' || rest[0] == '=') {
				return rest, true
			}
		}
		j += n + 1
	}
	return "", false
}

// explicitKeyAt reads a YAML explicit key (`? key`, quoted or not) on
// lines[i] whose value line (`: value`) follows: that line and what
// follows its sign.
func explicitKeyAt(lines []string, i int, key string) (int, string, bool) {
	k, ok := strings.CutPrefix(strings.TrimSpace(uncomment(lines[i])), "?")
	if !ok {
		return 0, "", false
	}
	k = untagged(strings.TrimSpace(k))
	if k != key {
		if k == "" || k[0] != '"' && k[0] != '\'' {
			return 0, "", false
		}
		if vals, _, _, closed := quotedAt(lines, i, k); !closed || !slices.Contains(vals, key) {
			return 0, "", false
		}
	}
	for j := i + 1; j < len(lines); j++ {
		n := strings.TrimSpace(lines[j])
		if n == "" || strings.HasPrefix(n, "#") {
			continue
		}
		if strings.HasPrefix(n, ":") {
			return j, n, true
		}
		return 0, "", false
	}
	return 0, "", false
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

// uncomment drops a YAML/TOML/JSONC comment (" #" or " //" on) from a line,
// outside quoted text (a quote that opens a value: at the line's start or
// after a blank, "[", "{", ",", ":" or "="; `"hooks/a #b.yml"` is one name,
// lefthook 2.2.1 reads it so).
func uncomment(l string) string {
	var q byte
	for j := 0; j < len(l); j++ {
		c := l[j]
		switch {
		case q == '"' && c == '\\':
			j++
		case q != 0:
			if c == q {
				q = 0
			}
		case (c == '"' || c == '\'') && (j == 0 || strings.IndexByte(" \t[{,:=", l[j-1]) >= 0):
			q = c
		case (c == ' ' || c == '\t') && (strings.HasPrefix(l[j+1:], "#") || strings.HasPrefix(l[j+1:], "//")):
			return l[:j]
		}
	}
	return l
}
