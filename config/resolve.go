package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jail-sandbox/jail/hostgit"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/statedir"
)

// ProjectFileName is a project's own file, read from the workspace once the
// user has trusted it (jail trust).
const ProjectFileName = ".jail.toml"

// Env is what the readers take from the process: where the user's files are
// and which host variables exist (for the --env warning).
type Env struct {
	Cwd       string
	Home      string
	ConfigDir string // $XDG_CONFIG_HOME/jail, else ~/.config/jail
	Lookup    func(name string) (string, bool)
}

// ProcessEnv returns the Env of this process.
func ProcessEnv() (Env, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return Env{}, fmt.Errorf("cannot read the current directory: %w", err)
	}
	home := os.Getenv("HOME")
	return Env{Cwd: cwd, Home: home, ConfigDir: configDir(os.Getenv("XDG_CONFIG_HOME"), home), Lookup: os.LookupEnv}, nil
}

// configDir follows the XDG spec: a relative XDG_CONFIG_HOME is ignored.
// The rule is statedir's, which the sandbox's plan hides by.
func configDir(xdg, home string) string {
	d, _ := statedir.ConfigFrom(func(k string) string {
		switch k {
		case "XDG_CONFIG_HOME":
			return xdg
		case "HOME":
			return home
		}
		return ""
	})
	return d
}

// UserConfigPath is the user's config file.
func (e Env) UserConfigPath() string {
	if e.ConfigDir == "" {
		return ""
	}
	return filepath.Join(e.ConfigDir, "config.toml")
}

// Profiles finds profiles by name; package profile implements it.
type Profiles interface {
	// Load returns the named profile, parsed with Parse(..., ProfileFile, ...).
	Load(name string) (*File, error)
}

// Request is what the command line asks for.
type Request struct {
	Flags      []Setting // the options given as flags, in order
	ConfigFile string    // --config
	NoProject  *bool     // --no-project-file, when given
	Env        Env
	Profiles   Profiles
	Trust      *TrustStore // nil: $ConfigDir/trust.json
}

// Result is the effective policy and what it was made from.
type Result struct {
	Policy  policy.Policy
	Origins Origins
	// Notes are one-line notices: unset --env names, settings keys with no
	// jail equivalent.
	Notes []string
	// Creates are the paths the profiles want created when missing.
	Creates []Create
	// Registries are the tools whose configuration names hosts to allow,
	// each once, from the profiles that asked.
	Registries []Registry
	// Args are the profiles' arguments per program, in profile order.
	Args []ProgramArgs
	// Files are the files read, in the order they were read.
	Files []string
	// PolicyFiles are the files read that the sandbox keeps read-only when
	// they lie in a writable tree (policy.Policy.PolicyFiles): every file
	// read but a trusted project file, which its trust covers.
	PolicyFiles []policy.PolicyFile
	// Workspace is the workspace the layers chose (the git top level of the
	// current directory when none did): where the project file was looked
	// for.
	Workspace string
}

// Resolve reads the layers and applies them in order, each overriding the
// one before (lists accumulate):
//
//	defaults < profiles < user config < trusted project file < --config < flags
//
// A settings file (settings key or --settings) sits just above the layer
// that names it (flags: just below them). Profiles named anywhere apply at
// the profile layer, each after the profiles it extends. Only what a layer
// sets counts: an option not given as a flag does not override a file.
func Resolve(req Request) (*Result, error) {
	env := req.Env
	r := &Result{Origins: Origins{}}
	var layers []layer // user, project, explicit, flags: in order

	read := func(path string, kind FileKind, mustExist bool, from string) (*File, error) {
		// --config may name a file in the workspace: read bounded, never
		// blocking on a FIFO the agent put there (readConfigFile).
		data, err := readConfigFile(path)
		if errors.Is(err, fs.ErrNotExist) && !mustExist {
			return nil, nil
		}
		if err != nil {
			return nil, &FileError{File: path, Reason: readReason(err)}
		}
		r.Files = append(r.Files, path)
		r.PolicyFiles = append(r.PolicyFiles, policy.PolicyFile{Path: path, From: from})
		return Parse(path, data, kind, Source{Kind: FromFile, File: path})
	}

	user, err := read(env.UserConfigPath(), UserConfig, false, "your config")
	if err != nil {
		return nil, err
	}
	var explicit *File
	if req.ConfigFile != "" {
		path := req.ConfigFile
		if !filepath.IsAbs(path) {
			path = filepath.Join(env.Cwd, path)
		}
		if explicit, err = read(path, ExplicitConfig, true, "--config"); err != nil {
			var fe *FileError
			if errors.As(err, &fe) && fe.Line == 0 {
				fe.Reason += " (given with --config)"
			}
			return nil, err
		}
	}
	flags := &File{Kind: ExplicitConfig}
	for _, s := range req.Flags {
		// Files named by flags are relative to the current directory; made
		// absolute here, they read the same in config show and the trail.
		if slices.Contains(pathKeys, s.Option.Name) && s.Value != "" {
			s.Value = absFrom(s, env)
		}
		flags.Settings = append(flags.Settings, s)
	}

	// The project file lives in the workspace, which the other layers choose.
	noProject := false
	for _, f := range []*File{user, explicit} {
		if f != nil && f.NoProject != nil {
			noProject = *f.NoProject
		}
	}
	if req.NoProject != nil {
		noProject = *req.NoProject
	}
	ws, wsSet := env.Cwd, false
	for _, f := range []*File{user, explicit, flags} {
		if f == nil {
			continue
		}
		for _, s := range f.Settings {
			if s.Option.Name == "workspace" {
				ws, wsSet = absFrom(s, env), true
			}
		}
	}
	trust := req.Trust
	if trust == nil {
		// No config directory (neither HOME nor XDG_CONFIG_HOME
		// absolute): a store without a path, which trusts nothing.
		// Joined with "", the store was ./trust.json: a file in the
		// workspace, the agent's to write (review14b).
		trust = &TrustStore{}
		if env.ConfigDir != "" {
			trust.Path = filepath.Join(env.ConfigDir, "trust.json")
		}
	}
	narrowed := false
	if !wsSet {
		// The sandbox makes the top level of the git work tree the
		// workspace (and says so); the project file is looked for there.
		ws = GitTopLevel(env)
		// Unless a trusted project lies between it and the current
		// directory: that project is the workspace, as it was when the
		// user trusted its file (its own work tree, or --workspace),
		// so that its restrictions hold (trustsub; a run there that
		// emptied its .git widened the workspace without them,
		// review14f). Narrower, never wider: nothing more is reachable.
		if !noProject && ws != "" {
			inner, err := trust.Inner(ws, filepath.Clean(env.Cwd))
			if err != nil {
				return nil, err
			}
			if inner != "" {
				r.Notes = append(r.Notes, fmt.Sprintf("workspace: %s, the trusted project holding the current directory (its %s applies), inside the git work tree %s (`workspace` %s for that tree)",
					inner, ProjectFileName, ws, ws))
				ws, narrowed = inner, true
			}
		}
	}
	var project *File
	if !noProject && ws != "" {
		path := filepath.Join(ws, ProjectFileName)
		if data, err := readProjectFile(path); err == nil {
			// The bytes checked are the bytes parsed: nothing can swap the
			// file between the check and the read.
			if err := trust.Check(path, data); err != nil {
				return nil, err
			}
			// A workspace jail chose, wider than a trusted project's
			// that holds the current directory: refused rather than run
			// without that project's restrictions (review14f).
			if !wsSet {
				if err := trust.CheckInside(ws, filepath.Clean(env.Cwd)); err != nil {
					return nil, err
				}
			}
			r.Files = append(r.Files, path)
			if project, err = Parse(path, data, ProjectConfig, Source{Kind: FromFile, File: path}); err != nil {
				return nil, err
			}
		} else if errors.Is(err, fs.ErrNotExist) {
			// A trusted file that is gone is a change like any other:
			// its restrictions must not vanish because the agent
			// deleted it (review14b).
			if err := trust.CheckAbsent(path); err != nil {
				return nil, err
			}
			// A workspace jail chose, narrower than a trusted
			// project's: refused rather than run without that
			// project's restrictions (trustfollow). A workspace the
			// user set is the user's choice.
			if !wsSet {
				if project, err = enclosingProject(r, trust, ws, env.Home); err != nil {
					return nil, err
				}
				// What is left: a trusted project holding the
				// current directory as the user reached it ($PWD, its
				// links kept) but not the resolved workspace (a
				// directory of the project replaced with a link out
				// of it): refused.
				if project == nil {
					if err := trust.CheckAbove(ws, filepath.Clean(env.Cwd), env.Home); err != nil {
						return nil, err
					}
				}
			}
		} else {
			// An unreadable project file is not skipped: it may hold the
			// project's restrictions.
			return nil, &FileError{File: path, Reason: readReason(err) + " (pass --no-project-file to run without it)"}
		}
	}
	for _, f := range []*File{user, project, explicit, flags} {
		if f == nil {
			continue
		}
		l := layer{file: f}
		for _, s := range f.Settings {
			if s.Option.Name != "settings" {
				continue
			}
			path := absFrom(s, env)
			// A settings file is often the agent's own (.claude/settings.json
			// in the workspace): a FIFO, a device link or a huge file there
			// is refused, not read (readConfigFile).
			data, err := readConfigFile(path)
			if err != nil {
				return nil, &settingsReadError{src: s.Source, err: readReason(err)}
			}
			r.Files = append(r.Files, path)
			from := "--settings"
			if s.Source.Kind != FromFlag {
				from = "settings in " + s.Source.where()
			}
			r.PolicyFiles = append(r.PolicyFiles, policy.PolicyFile{Path: path, From: from})
			sf, err := ParseSettings(path, data, env)
			if err != nil {
				return nil, err
			}
			l.settings = append(l.settings, sf)
		}
		layers = append(layers, l)
	}

	// The config directory is hidden inside; what its entries link to is
	// not: a trust store or a profile that is a symlink into a tree the
	// sandbox writes (a dotfiles repository as the workspace) is a policy
	// file of every later run (policyfiles).
	r.PolicyFiles = append(r.PolicyFiles, linkedConfigFiles(env.ConfigDir)...)

	// Profiles, from every layer, each after what it extends.
	var profiles []*File
	if err := collectProfiles(req.Profiles, layers2files(layers), &profiles); err != nil {
		return nil, err
	}

	p := policy.Policy{}
	for i := range policy.Options {
		o := &policy.Options[i]
		if o.Default != "" {
			_ = o.Set(&p, o.Default)
		}
	}
	apply := func(f *File) error {
		for _, s := range f.Settings {
			if err := s.Option.Set(&p, s.Value); err != nil {
				var fe *policy.FieldError
				if errors.As(err, &fe) {
					return fmt.Errorf("%s: %w", s.Source.where(), err)
				}
				return err
			}
			r.Origins.set(s.Option, s.Value, s.Source)
		}
		r.Notes = append(r.Notes, f.Notes...)
		return nil
	}
	for _, f := range profiles {
		if err := apply(f); err != nil {
			return nil, err
		}
		for _, c := range f.Creates {
			if !slices.ContainsFunc(r.Creates, func(o Create) bool { return o.Path == c.Path }) {
				r.Creates = append(r.Creates, c)
			}
		}
		r.Args = append(r.Args, f.Args...)
		// The first profile that names a refused name says why.
		for n, why := range f.Refused {
			if _, ok := p.Refused[n]; !ok {
				if p.Refused == nil {
					p.Refused = map[string]string{}
				}
				p.Refused[n] = why
			}
		}
		for _, g := range f.Registries {
			if !slices.ContainsFunc(r.Registries, func(o Registry) bool { return o.Tool == g.Tool }) {
				r.Registries = append(r.Registries, g)
			}
		}
	}
	for i, l := range layers {
		last := i == len(layers)-1 // the flags: their settings files go below them
		if !last {
			if err := apply(l.file); err != nil {
				return nil, err
			}
		}
		for _, sf := range l.settings {
			if err := apply(sf); err != nil {
				return nil, err
			}
		}
		if last {
			if err := apply(l.file); err != nil {
				return nil, err
			}
		}
	}
	if wsSet || narrowed {
		p.Workspace = ws // made absolute above, relative to its source
	}
	// Why: a workspace narrowed to a trusted project was chosen from the
	// current directory, not typed: the sandbox checks the links on the
	// way to it ($PWD) as for one it chooses (review15b).
	p.WorkspaceFromCwd = narrowed && !wsSet
	r.Workspace = ws
	p.Cwd = env.Cwd

	// Names passed with env that the host does not have: the user expected
	// something to pass. A profile lists optional ones (API keys when set).
	for _, n := range p.Env {
		src, _ := r.Origins.Lookup("env", n)
		if src.Kind == FromProfile || env.Lookup == nil {
			continue
		}
		if _, ok := env.Lookup(n); !ok {
			r.Notes = append(r.Notes, r.Origins.Note("env", n, "not set on the host, so nothing passes; set it, or drop it"))
		}
	}
	r.Policy = p
	return r, nil
}

// enclosingProject reads, checks and parses the trusted project file of
// the closest project above ws (a workspace jail chose, with no project
// file of its own), its relative paths made relative to its own directory
// (rebase); nil when there is none (trustsub). The file is held to what
// the workspace's own would be: changed or gone since it was trusted, the
// run is refused (its restrictions must not vanish with it).
func enclosingProject(r *Result, trust *TrustStore, ws, home string) (*File, error) {
	path, err := trust.Enclosing(ws, home)
	if err != nil || path == "" {
		return nil, err
	}
	data, err := readProjectFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &TrustError{File: path, Err: ErrGone}
	}
	if err != nil {
		return nil, &FileError{File: path, Reason: readReason(err) + " (pass --no-project-file to run without it)"}
	}
	if err := trust.Check(path, data); err != nil {
		return nil, err
	}
	f, err := Parse(path, data, ProjectConfig, Source{Kind: FromFile, File: path})
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	rebase(f, dir)
	r.Files = append(r.Files, path)
	r.Notes = append(r.Notes, fmt.Sprintf("%s applies: trusted for %s, which holds this workspace (%s); its relative paths are %s's", path, dir, ws, dir))
	return f, nil
}

// layer is one file (or the flags) and the settings files it names.
type layer struct {
	file     *File
	settings []*File
}

func layers2files(ls []layer) []*File {
	var out []*File
	for _, l := range ls {
		out = append(out, l.file)
		out = append(out, l.settings...)
	}
	return out
}

// collectProfiles appends the profiles named by files (and what they extend)
// to out, parents first, each once; a cycle is an error.
func collectProfiles(src Profiles, files []*File, out *[]*File) error {
	seen := map[string]bool{}
	var visit func(name string, stack []string, from Source) error
	visit = func(name string, stack []string, from Source) error {
		if slices.Contains(stack, name) {
			return &FileError{File: from.where(), Key: "extends", Reason: "profiles extend each other in a circle: " + strings.Join(append(stack, name), " -> ")}
		}
		if seen[name] {
			return nil
		}
		if src == nil {
			return fmt.Errorf("profile %s: no profiles available", name)
		}
		f, err := src.Load(name)
		if err != nil {
			var fe *FileError
			if errors.As(err, &fe) {
				return err
			}
			return &profileError{name: name, from: from, err: err}
		}
		for _, parent := range f.Extends {
			if err := visit(parent, append(stack, name), Source{Kind: FromProfile, Profile: name, File: f.Path, Line: f.ExtendsLine}); err != nil {
				return err
			}
		}
		seen[name] = true
		*out = append(*out, f)
		return nil
	}
	for _, f := range files {
		for _, s := range f.Settings {
			if s.Option.Name == "profile" {
				if err := visit(s.Value, nil, s.Source); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// profileError is a profile that cannot be found or read, with where it was
// named.
type profileError struct {
	name string
	from Source
	err  error
}

func (e *profileError) Error() string { return e.err.Error() }
func (e *profileError) Unwrap() error { return policy.ErrInvalid }

// OptionValue lets Explain say where the name came from.
func (e *profileError) OptionValue() (string, string, string) {
	return "profile", e.name, strings.TrimPrefix(e.err.Error(), "profile "+e.name+": ")
}

// settingsReadError is a settings file that cannot be read.
type settingsReadError struct {
	src Source
	err string
}

func (e *settingsReadError) Error() string { return "settings " + e.src.Raw + ": " + e.err }
func (e *settingsReadError) Unwrap() error { return policy.ErrInvalid }
func (e *settingsReadError) OptionValue() (string, string, string) {
	return "settings", e.src.Raw, e.err
}

// absFrom makes a path setting absolute: a flag's against the current
// directory, a file's against that file's directory (Parse did that for
// the settings, seccomp and audit keys). "~" is left for policy to expand.
func absFrom(s Setting, env Env) string {
	v := s.Value
	if v == "" || filepath.IsAbs(v) {
		return filepath.Clean(v)
	}
	if v == "~" || strings.HasPrefix(v, "~/") {
		return filepath.Join(env.Home, strings.TrimPrefix(v, "~"))
	}
	base := env.Cwd
	if s.Source.Kind != FromFlag && s.Source.File != "" {
		base = filepath.Dir(s.Source.File)
	}
	return filepath.Join(base, v)
}

func readReason(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// ProfileChain returns the named profiles and everything they extend, in the
// order they apply.
func ProfileChain(src Profiles, names []string) ([]*File, error) {
	f := &File{}
	for _, n := range names {
		f.Settings = append(f.Settings, Setting{Option: policy.Lookup("profile"), Value: n, Source: Source{Kind: FromFlag, Flag: "--profile", Raw: n}})
	}
	var out []*File
	err := collectProfiles(src, []*File{f}, &out)
	return out, err
}

// ProjectFile is the project file a run started in env.Cwd reads when no
// workspace is set: .jail.toml at the git top level, else in the current
// directory; a trusted project's between that and the current directory
// (Inner); where the workspace has none, the trusted one above it
// (Enclosing). jail trust names the same file, so that trusting from a
// subfolder trusts what the run will read (trustsub: re-trusting a
// changed enclosing file from a submodule).
func ProjectFile(env Env) string {
	ws := GitTopLevel(env)
	if env.ConfigDir == "" {
		return filepath.Join(ws, ProjectFileName)
	}
	trust := &TrustStore{Path: filepath.Join(env.ConfigDir, "trust.json")}
	if inner, err := trust.Inner(ws, filepath.Clean(env.Cwd)); err == nil && inner != "" {
		return filepath.Join(inner, ProjectFileName)
	}
	own := filepath.Join(ws, ProjectFileName)
	if _, err := os.Lstat(own); errors.Is(err, fs.ErrNotExist) {
		if f, err := trust.Enclosing(ws, env.Home); err == nil && f != "" {
			return f
		}
	}
	return own
}

// GitTopLevel is the workspace jail chooses without a workspace setting:
// the top level of the git work tree of the current directory, else the
// current directory (hostgit.TopLevel, as the sandbox decides it).
func GitTopLevel(env Env) string {
	cwd, err := filepath.EvalSymlinks(env.Cwd)
	if err != nil {
		return env.Cwd
	}
	home, err := filepath.EvalSymlinks(env.Home)
	if err != nil || env.Home == "" {
		home = ""
	}
	if top, _ := hostgit.TopLevel(cwd, home); top != "" {
		return top
	}
	return env.Cwd
}

// maxLinkedProfiles bounds the profiles directory's entries looked at a
// start (each an lstat).
const maxLinkedProfiles = 256

// linkedConfigFiles returns the trust store, the profiles directory and the
// user's profiles that are symlinks (followed by every later run's reads), each as a policy
// file: the sandbox makes what they point at read-only when it lies in a
// writable tree. The config directory itself is hidden inside, so a plain
// file there needs nothing.
func linkedConfigFiles(dir string) []policy.PolicyFile {
	if dir == "" {
		return nil
	}
	var out []policy.PolicyFile
	link := func(p, from string) {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			out = append(out, policy.PolicyFile{Path: p, From: from})
		}
	}
	link(filepath.Join(dir, "trust.json"), "your trust store")
	pd := filepath.Join(dir, "profiles")
	// Why: a profiles directory that is a link is all policy: a profile
	// the agent added there would shadow a built-in one of its name
	// (`-P claude` loading the agent's), so the directory is made
	// read-only whole, not only the profiles there now.
	link(pd, "your profiles directory")
	f, err := os.Open(pd)
	if err != nil {
		return out
	}
	defer f.Close()
	names, _ := f.Readdirnames(maxLinkedProfiles)
	slices.Sort(names)
	for _, n := range names {
		if strings.HasSuffix(n, ".toml") {
			link(filepath.Join(pd, n), "your profile "+strings.TrimSuffix(n, ".toml"))
		}
	}
	return out
}
