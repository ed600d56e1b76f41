package config

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/jail-sandbox/jail/netproxy"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/toolreg"
)

// FileKind is what a file is for; it decides which keys it may hold.
type FileKind int

// File kinds.
const (
	UserConfig     FileKind = iota // $XDG_CONFIG_HOME/jail/config.toml
	ProjectConfig                  // <workspace>/.jail.toml, once trusted
	ExplicitConfig                 // --config FILE
	ProfileFile                    // a profile (embedded or the user's)
)

func (k FileKind) String() string {
	return [...]string{"config file", "project file", "config file", "profile"}[k]
}

// Version is the schema version this jail reads; a file may say
// `version = 1`. A later schema bumps it and documents the migration here.
const Version = 1

// NoProjectKey is the reader's own key: never read a project's .jail.toml.
const NoProjectKey = "no-project-file"

// File is one parsed TOML file: settings in file order, and for a profile
// what a profile needs beyond options.
type File struct {
	Path     string
	Name     string // a profile's name
	Kind     FileKind
	Settings []Setting
	// NoProject is the no-project-file key (user and --config files).
	NoProject *bool
	// Notes are what the reader could not map (settings files).
	Notes []string

	// Profile only.
	Description string
	Extends     []string
	ExtendsLine int
	Why         map[string]string // a path or domain of the profile -> why it is there
	// Refused are names the profile's program reaches for that it does
	// without ([refused] "github.com" = "why"): their refusal says why,
	// not the flag that would allow them (which may open far more).
	Refused map[string]string
	Creates []Create
	// Registries are the tools whose own configuration names the hosts to
	// allow (package toolreg): registries = ["npm"].
	Registries []Registry
	// Args are arguments for a program, added right after the command's
	// name when the command is that program ([args] codex = ["-c", "..."]):
	// an agent's documented way of being told that jail is its sandbox.
	Args []ProgramArgs
}

// ProgramArgs are a profile's arguments for one program.
type ProgramArgs struct {
	Program string // the command's base name: "codex"
	Args    []string
	// Unless are prefixes of the user's own arguments that set what Args
	// set ("--sandbox", "-s", "sandbox_mode="): with one of them in the
	// command, Args are left out, so that the user's choice is the one
	// taken by a program that refuses an option given twice.
	Unless []string
	Source Source
}

// Registry is a tool a profile takes its registry hosts from.
type Registry struct {
	Tool   string // toolreg.NPM, ...
	Source Source
}

// Create is a path a profile creates on the host when it is missing, the
// way the agent expects it (an agent that finds a new empty file where it
// wants JSON may call it corrupt): only under the home directory, only when
// absent, never overwriting.
type Create struct {
	Path    string // "~/..." as written
	Dir     bool
	Content string
	Why     string
	Source  Source
}

// Setting is one value of one option from one source.
type Setting struct {
	Option *policy.Option
	Value  string // text, as Option.Set reads it
	Source Source
}

// keyRules says which keys a kind of file may not hold, and why.
func forbidden(kind FileKind, key string) string {
	switch {
	case kind == ProjectConfig && (key == "workspace"):
		return "a project file cannot move the workspace"
	case kind == ProjectConfig && (key == "settings" || key == "seccomp"):
		// The trust covers .jail.toml's own bytes only: a file it names could
		// be changed by the agent and widen the next run.
		return "a project file cannot name other files (the agent could change them after you trusted this one); set it in your config file or on the command line"
	case kind == ProfileFile && key == "workspace":
		return "a profile cannot choose the workspace"
	case kind == ProfileFile && key == "profile":
		return "a profile names the profiles it builds on with extends"
	case kind == ProfileFile && key == "settings":
		// Settings files are read from the user's, project's and --config
		// layers only: a profile's list was accepted and then never read,
		// so the restrictions a user put there silently did not apply.
		return "a profile cannot name settings files (they would not be read); put settings = [...] in your config file or pass --settings FILE"
	case key == NoProjectKey && (kind == ProjectConfig || kind == ProfileFile):
		return "only your config file or --config can turn project files off"
	}
	return ""
}

// pathKeys are options whose value is a file of the reader's side: relative
// values in a file are relative to that file's directory.
var pathKeys = []string{"settings", "seccomp", "audit"}

// Parse reads a TOML file of the given kind. Unknown keys, keys the kind may
// not hold and values of the wrong type are errors naming the file, the line
// and the key (*FileError). tmpl is the Source every setting starts from
// (FromFile, or FromProfile with the profile's name); its File is used in
// errors.
func Parse(path string, data []byte, kind FileKind, tmpl Source) (*File, error) {
	name := tmpl.File
	if name == "" {
		name = path
	}
	if tmpl.Kind == FromProfile && tmpl.File == "" {
		name = "profile " + tmpl.Profile + " (built in)"
	}
	var values map[string]any
	if err := toml.Unmarshal(data, &values); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, _ := de.Position()
			msg := de.Error()
			if k := de.Key(); len(k) > 0 {
				return nil, &FileError{File: name, Line: row, Key: strings.Join(k, "."), Reason: msg}
			}
			return nil, &FileError{File: name, Line: row, Reason: msg}
		}
		return nil, &FileError{File: name, Reason: err.Error()}
	}
	lines, err := keyLines(data)
	if err != nil {
		return nil, &FileError{File: name, Reason: err.Error()}
	}
	f := &File{Path: path, Kind: kind, Name: tmpl.Profile}
	bad := func(key string, line int, format string, a ...any) error {
		return &FileError{File: name, Line: line, Key: key, Reason: fmt.Sprintf(format, a...)}
	}
	// Keys in the file's order, so settings apply (and lists grow) as written.
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return lines[a] - lines[b] })
	for _, key := range keys {
		v, line := values[key], lines[key]
		if why := forbidden(kind, key); why != "" {
			return nil, bad(key, line, "%s", why)
		}
		switch key {
		case "version":
			if n, ok := v.(int64); !ok || n != Version {
				return nil, bad(key, line, "this jail reads version %d", Version)
			}
			continue
		case NoProjectKey:
			b, ok := v.(bool)
			if !ok {
				return nil, bad(key, line, "want true or false")
			}
			f.NoProject = &b
			continue
		}
		if kind == ProfileFile {
			done, err := f.profileKey(key, v, line, lines, bad, tmpl)
			if err != nil {
				return nil, err
			}
			if done {
				continue
			}
		}
		opt := policy.Lookup(key)
		if opt == nil {
			hint := ""
			if near := nearest(key); near != "" {
				hint = "; did you mean " + near + "?"
			}
			return nil, bad(key, line, "unknown key%s (jail --help lists every option; the key is the flag without --)", hint)
		}
		texts, elemLines, err := texts(opt, v)
		if err != nil {
			return nil, bad(key, line, "%v", err)
		}
		for i, t := range texts {
			src := tmpl
			src.File, src.Key, src.Line, src.Raw = tmpl.File, key, line, t
			if src.File == "" && tmpl.Kind != FromProfile {
				src.File = path
			}
			if elemLines != nil {
				if l := lines[key+"\x00"+strconv.Itoa(i)]; l > 0 {
					src.Line = l
				}
			}
			if slices.Contains(pathKeys, key) && t != "" && !filepath.IsAbs(t) && !strings.HasPrefix(t, "~") && path != "" {
				t = filepath.Join(filepath.Dir(path), t)
			}
			// A profile's caches are its own (per profile, so that one
			// toolchain's cache is shared by the agents that use it and
			// nothing else): the profile's name is the cache's NAME.
			if key == "cache" && kind == ProfileFile && tmpl.Profile != "" {
				if name, _, err := policy.ParseCache(t); err == nil && !strings.HasPrefix(t, name+":") {
					t = tmpl.Profile + ":" + t
				}
			}
			// Values are checked now, where the line is known.
			var scratch policy.Policy
			if err := opt.Set(&scratch, t); err != nil {
				reason := err.Error()
				var fe *policy.FieldError
				if errors.As(err, &fe) {
					reason = fe.Reason
				}
				return nil, bad(key, src.Line, "%q: %s", src.Raw, reason)
			}
			f.Settings = append(f.Settings, Setting{Option: opt, Value: t, Source: src})
		}
	}
	return f, nil
}

// profileKey handles the keys only a profile has; done is false for an
// ordinary option.
// stringTable reads a profile's table of strings ([why], [refused]):
// entry shows one for the error when v is not a table, want says what a
// value must be when one is not a string (or is blank, unless blankOK),
// an error at that entry's own line.
func stringTable(key string, v any, line int, lines map[string]int, bad func(string, int, string, ...any) error, entry, want string, blankOK bool) (map[string]string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, bad(key, line, "want a table: [%s] then %s", key, entry)
	}
	out := make(map[string]string, len(m))
	for k, r := range m {
		s, ok := r.(string)
		if !ok || !blankOK && strings.TrimSpace(s) == "" {
			return nil, bad(key+"."+k, lines[key+"\x00"+k], "%s", want)
		}
		out[k] = s
	}
	return out, nil
}

func (f *File) profileKey(key string, v any, line int, lines map[string]int, bad func(string, int, string, ...any) error, tmpl Source) (bool, error) {
	switch key {
	case "description":
		s, ok := v.(string)
		if !ok {
			return true, bad(key, line, "want a string")
		}
		f.Description = s
	case "extends":
		l, ok := v.([]any)
		if !ok {
			return true, bad(key, line, `want a list of profile names, e.g. extends = ["node"]`)
		}
		for _, e := range l {
			s, ok := e.(string)
			if !ok || s == "" {
				return true, bad(key, line, "want profile names (strings)")
			}
			f.Extends = append(f.Extends, s)
		}
		f.ExtendsLine = line
	case "why":
		m, err := stringTable(key, v, line, lines, bad, `"~/.cache/x" = "the reason"`, "want a string saying why", true)
		if err != nil {
			return true, err
		}
		f.Why = m
	case "refused":
		m, err := stringTable(key, v, line, lines, bad, `"github.com" = "what the program does without it"`, "want a string saying what the program does without it", false)
		if err != nil {
			return true, err
		}
		f.Refused = map[string]string{}
		for k, s := range m {
			n, ok := netproxy.NormalizeName(k)
			if !ok || strings.HasPrefix(k, "*") {
				return true, bad("refused."+k, lines["refused\x00"+k], "%q: want a host name (no pattern)", k)
			}
			f.Refused[n] = s
		}
	case "args":
		m, ok := v.(map[string]any)
		if !ok {
			return true, bad(key, line, `want a table: [args] then codex = ["-c", "key=value"]`)
		}
		progs := make([]string, 0, len(m))
		for k := range m {
			progs = append(progs, k)
		}
		slices.Sort(progs)
		for _, prog := range progs {
			// A list, or a table naming the list and the user's arguments
			// that leave it out: codex = {args = [...], unless = [...]}.
			l, ok := m[prog].([]any)
			var unless []any
			if t, isTable := m[prog].(map[string]any); isTable {
				l, ok = t["args"].([]any)
				if u, has := t["unless"]; has {
					var isList bool
					unless, isList = u.([]any)
					ok = ok && isList
				}
				for k := range t {
					ok = ok && (k == "args" || k == "unless")
				}
			}
			pl := lines["args\x00"+prog]
			if pl == 0 {
				pl = line
			}
			if !ok || prog == "" || strings.ContainsAny(prog, "/ ") {
				return true, bad("args."+prog, pl, `want a program's name and a list of arguments: codex = ["-c", "key=value"], or codex = {args = [...], unless = ["--flag"]}`)
			}
			pa := ProgramArgs{Program: prog, Source: tmpl}
			pa.Source.Line, pa.Source.Key = pl, "args."+prog
			strs := func(l []any, empty bool) ([]string, bool) {
				var out []string
				for _, e := range l {
					s, ok := e.(string)
					if !ok || s == "" && !empty {
						return nil, false
					}
					out = append(out, s)
				}
				return out, true
			}
			if pa.Args, ok = strs(l, true); !ok {
				return true, bad("args."+prog, pl, "want strings")
			}
			// An empty beginning would match every argument.
			if pa.Unless, ok = strs(unless, false); !ok {
				return true, bad("args."+prog, pl, "want strings in unless: the beginnings of the user's own arguments that set the same")
			}
			f.Args = append(f.Args, pa)
		}
	case "registries":
		l, ok := v.([]any)
		if !ok {
			return true, bad(key, line, `want a list of tools, e.g. registries = ["npm"] (one of %s)`, strings.Join(toolreg.Tools, ", "))
		}
		for _, e := range l {
			s, _ := e.(string)
			if !toolreg.Known(s) {
				return true, bad(key, line, "%v: jail reads the registry configuration of %s only", e, strings.Join(toolreg.Tools, ", "))
			}
			src := tmpl
			src.Line, src.Key, src.Raw = line, key, s
			f.Registries = append(f.Registries, Registry{Tool: s, Source: src})
		}
	case "create":
		l, ok := v.([]any)
		if !ok {
			return true, bad(key, line, `want [[create]] tables with path = "~/..."`)
		}
		for i, e := range l {
			m, ok := e.(map[string]any)
			cl := lines["create\x00"+strconv.Itoa(i)]
			if cl == 0 {
				cl = line
			}
			if !ok {
				return true, bad(key, cl, `want a table with path = "~/..."`)
			}
			c := Create{Source: tmpl}
			c.Source.Line, c.Source.Key = cl, key
			for k, fv := range m {
				var ok bool
				switch k {
				case "path":
					c.Path, ok = fv.(string)
				case "dir":
					c.Dir, ok = fv.(bool)
				case "content":
					c.Content, ok = fv.(string)
				case "why":
					c.Why, ok = fv.(string)
				default:
					return true, bad("create."+k, cl, "unknown key (path, dir, content, why)")
				}
				if !ok {
					return true, bad("create."+k, cl, "wrong type")
				}
			}
			if !strings.HasPrefix(c.Path, "~/") || strings.Contains(c.Path, "/../") || strings.HasSuffix(c.Path, "/..") {
				return true, bad("create.path", cl, "%q: a profile creates paths under the home directory only: write ~/...", c.Path)
			}
			if c.Dir && c.Content != "" {
				return true, bad("create.content", cl, "a directory has no content")
			}
			f.Creates = append(f.Creates, c)
		}
	default:
		return false, nil
	}
	return true, nil
}

// texts turns a TOML value into the option's text values, refusing a value
// of the wrong type with what the right one looks like.
func texts(o *policy.Option, v any) ([]string, []int, error) {
	example := func() string {
		ex := o.Example
		if ex == "" {
			ex = "..."
		}
		switch o.Kind {
		case policy.Bool:
			return o.Name + " = true"
		case policy.Int, policy.Uint, policy.Float:
			return o.Name + " = " + ex
		case policy.List:
			return o.Name + " = [" + strconv.Quote(ex) + "]"
		}
		return o.Name + " = " + strconv.Quote(ex)
	}
	wrong := func() ([]string, []int, error) {
		return nil, nil, fmt.Errorf("wrong type: write it like %s", example())
	}
	switch o.Kind {
	case policy.Bool:
		if b, ok := v.(bool); ok {
			return []string{strconv.FormatBool(b)}, nil, nil
		}
	case policy.String, policy.Enum, policy.Duration:
		if s, ok := v.(string); ok {
			return []string{s}, nil, nil
		}
	case policy.Size:
		switch x := v.(type) {
		case string:
			return []string{x}, nil, nil
		case int64:
			return []string{strconv.FormatInt(x, 10)}, nil, nil
		}
	case policy.Int, policy.Uint:
		if n, ok := v.(int64); ok {
			return []string{strconv.FormatInt(n, 10)}, nil, nil
		}
	case policy.Float:
		switch x := v.(type) {
		case int64:
			return []string{strconv.FormatInt(x, 10)}, nil, nil
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return wrong()
			}
			return []string{strconv.FormatFloat(x, 'g', -1, 64)}, nil, nil
		}
	case policy.List:
		l, ok := v.([]any)
		if !ok {
			return wrong()
		}
		out := make([]string, 0, len(l))
		for _, e := range l {
			s, ok := e.(string)
			if !ok {
				return wrong()
			}
			out = append(out, s)
		}
		return out, make([]int, len(out)), nil
	}
	if _, isTime := v.(time.Time); isTime {
		return nil, nil, fmt.Errorf("a date is not a value here: write it like %s", example())
	}
	return wrong()
}

// keyLines maps every top-level key (and "key\x00i" for the i-th element of
// an array, "table\x00key" for a key in a table, "create\x00i" for the i-th
// [[create]]) to its 1-based line.
func keyLines(data []byte) (map[string]int, error) {
	at := lineIndex(data)
	return keyLinesAt(data, func(_ *unstable.Parser, r unstable.Range) int { return at(r.Offset) })
}

// keyLinesAt is keyLines with the line of a range given by at (lineIndex's;
// its test gives the parser's Shape).
func keyLinesAt(data []byte, at func(*unstable.Parser, unstable.Range) int) (map[string]int, error) {
	lines := map[string]int{}
	var p unstable.Parser
	p.Reset(data)
	prefix := ""
	arrayTables := map[string]int{}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			parts, line := keyParts(&p, at, e)
			name := strings.Join(parts, ".")
			if e.Kind == unstable.ArrayTable {
				i := arrayTables[name]
				arrayTables[name] = i + 1
				lines[name+"\x00"+strconv.Itoa(i)] = line
				prefix = name + "\x00" + strconv.Itoa(i) + "\x00"
			} else {
				prefix = name + "\x00"
			}
			if _, ok := lines[name]; !ok {
				lines[name] = line
			}
		case unstable.KeyValue:
			parts, line := keyParts(&p, at, e)
			key := prefix + strings.Join(parts, ".")
			lines[key] = line
			if v := e.Value(); v.Kind == unstable.Array {
				c := v.Children()
				for i := 0; c.Next(); i++ {
					if n := c.Node(); n.Raw.Length > 0 {
						lines[key+"\x00"+strconv.Itoa(i)] = at(&p, n.Raw)
					} else {
						lines[key+"\x00"+strconv.Itoa(i)] = line
					}
				}
			}
		}
	}
	return lines, p.Error()
}

// keyParts returns the parts of an expression's dotted key and the line of
// its first part (at: keyLinesAt's).
func keyParts(p *unstable.Parser, at func(*unstable.Parser, unstable.Range) int, e *unstable.Node) ([]string, int) {
	var parts []string
	line := 0
	it := e.Key()
	for it.Next() {
		n := it.Node()
		parts = append(parts, string(n.Data))
		if line == 0 {
			line = at(p, n.Raw)
		}
	}
	return parts, line
}

// lineIndex returns the 1-based line of a byte offset into data, as the
// parser's Shape gives it (one plus the newlines before the offset), from
// the newlines' offsets found once. Why: Shape counts the newlines from the
// file's start at every call, both ends of the range; keyLines asks it of
// every key and array element, and for a built-in profile (a hundred of
// them in some 60 lines) that was a fifth of its parse, which every start
// with a profile pays before init's clone.
func lineIndex(data []byte) func(offset uint32) int {
	var nl []int
	for i, b := range data {
		if b == '\n' {
			nl = append(nl, i)
		}
	}
	return func(offset uint32) int {
		i, _ := slices.BinarySearch(nl, int(offset))
		return 1 + i
	}
}

// nearest suggests the option a mistyped key probably meant.
func nearest(key string) string {
	var names []string
	for i := range policy.Options {
		if o := &policy.Options[i]; !o.Hidden {
			names = append(names, o.Name)
		}
	}
	best := policy.Nearest(key, names)
	if best == "" {
		switch strings.ReplaceAll(key, "_", "-") {
		case "allowed-domains", "domains", "allow-domains":
			return "allow-domain"
		}
		if o := policy.Lookup(strings.ReplaceAll(key, "_", "-")); o != nil {
			return o.Name
		}
	}
	return best
}
