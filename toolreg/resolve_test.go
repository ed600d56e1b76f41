package toolreg

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeTools is a host with made-up tools: each "binary" is a file in bin,
// and run answers for it as the real tool would, counting the asks.
type fakeTools struct {
	t       *testing.T
	home    string
	cwd     string
	bin     string
	asked   []string
	answers map[string]string // tool name -> answer
}

func newFake(t *testing.T, tools ...string) *fakeTools {
	f := &fakeTools{t: t, home: t.TempDir(), cwd: t.TempDir(), bin: t.TempDir(), answers: map[string]string{}}
	for _, n := range tools {
		if err := os.WriteFile(filepath.Join(f.bin, n), []byte("#!/usr/bin/python3\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *fakeTools) env(environ ...string) Env {
	return Env{
		Home: f.home, Cwd: f.cwd, Environ: append([]string{"HOME=" + f.home}, environ...),
		CacheFile: filepath.Join(f.home, "state", "registries.json"),
		LookPath: func(n string) (string, error) {
			p := filepath.Join(f.bin, n)
			if _, err := os.Stat(p); err != nil {
				return "", errors.New("not found")
			}
			return p, nil
		},
		Run: func(ctx context.Context, dir string, env []string, name string, args ...string) ([]byte, error) {
			if dir != "/" {
				f.t.Errorf("%s asked in %s, want /", name, dir)
			}
			tool := filepath.Base(name)
			f.asked = append(f.asked, tool)
			a, ok := f.answers[tool]
			if !ok {
				return nil, errors.New("exit status 1")
			}
			return []byte(a), nil
		},
	}
}

func (f *fakeTools) write(rel, content string) string {
	p := rel
	if !filepath.IsAbs(p) {
		p = filepath.Join(f.home, rel)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return p
}

func patterns(r Result) []string {
	var out []string
	for _, h := range r.Hosts {
		out = append(out, h.Pattern())
	}
	slices.Sort(out)
	return out
}

func TestResolveNpm(t *testing.T) {
	f := newFake(t, "npm")
	global := f.write("etc/npmrc", "@glob:registry=https://glob.test/\n")
	f.answers["npm"] = "registry=https://default.test/\nglobalconfig=" + global + "\n"
	// Nothing configured: npm's default and the global file's scope.
	r := Resolve([]string{NPM}, f.env())
	if got := patterns(r); !slices.Equal(got, []string{"default.test:443", "glob.test:443"}) {
		t.Errorf("default: %q (notes %q)", got, r.Notes)
	}
	// The user's .npmrc replaces the default; the environment wins over it.
	f.write(".npmrc", "registry=https://user.test/\n@corp:registry=https://corp.test:8443/\n")
	r = Resolve([]string{NPM}, f.env())
	if got := patterns(r); !slices.Equal(got, []string{"corp.test:8443", "glob.test:443", "user.test:443"}) {
		t.Errorf("user: %q", got)
	}
	r = Resolve([]string{NPM}, f.env("npm_config_registry=http://env.test:4873/"))
	if got := patterns(r); !slices.Equal(got, []string{"corp.test:8443", "env.test:4873", "glob.test:443"}) {
		t.Errorf("env: %q", got)
	}
}

// A project .npmrc the sandbox can write (the workspace) does not widen the
// allowlist: the agent could plant its own host there for the next run.
func TestResolveNpmUntrustedProjectFile(t *testing.T) {
	f := newFake(t, "npm")
	f.answers["npm"] = "registry=https://default.test/\nglobalconfig=/nonexistent\n"
	f.write(filepath.Join(f.cwd, "package.json"), "{}")
	f.write(filepath.Join(f.cwd, ".npmrc"), "registry=https://evil.test/\n")
	e := f.env()
	e.Writable = func(p string) bool { return strings.HasPrefix(p, f.cwd+"/") }
	r := Resolve([]string{NPM}, e)
	if got := patterns(r); !slices.Equal(got, []string{"default.test:443"}) {
		t.Errorf("got %q, want npm's default only", got)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "--allow-domain evil.test:443") {
		t.Errorf("notes %q: want one naming --allow-domain evil.test:443", r.Notes)
	}
	// Trusted (not writable), the same file counts.
	r = Resolve([]string{NPM}, f.env())
	if got := patterns(r); !slices.Equal(got, []string{"evil.test:443"}) {
		t.Errorf("trusted project file: %q", got)
	}
}

// The tool's answer is cached: a second start does not ask again until
// the binary or a file the answer depends on changes.
func TestResolveCache(t *testing.T) {
	f := newFake(t, "npm")
	global := f.write("etc/npmrc", "")
	f.answers["npm"] = "registry=https://default.test/\nglobalconfig=" + global + "\n"
	Resolve([]string{NPM}, f.env())
	Resolve([]string{NPM}, f.env())
	if len(f.asked) != 1 {
		t.Fatalf("asked npm %d times over two starts, want 1", len(f.asked))
	}
	// The global file changes: asked again.
	future := time.Now().Add(time.Hour)
	f.write("etc/npmrc", "registry=https://changed.test/\n")
	os.Chtimes(global, future, future)
	f.answers["npm"] = "registry=https://changed.test/\nglobalconfig=" + global + "\n"
	r := Resolve([]string{NPM}, f.env())
	if len(f.asked) != 2 || !slices.Equal(patterns(r), []string{"changed.test:443"}) {
		t.Errorf("after the global file changed: asked %d, hosts %q", len(f.asked), patterns(r))
	}
	// The binary changes: asked again.
	os.Chtimes(filepath.Join(f.bin, "npm"), future, future)
	Resolve([]string{NPM}, f.env())
	if len(f.asked) != 3 {
		t.Errorf("after npm changed: asked %d times, want 3", len(f.asked))
	}
	// A tool not named is never asked.
	Resolve([]string{Cargo}, f.env())
	if len(f.asked) != 3 {
		t.Errorf("a cargo profile asked npm")
	}
}

func TestResolveNoTool(t *testing.T) {
	f := newFake(t)
	// Cargo is never asked (its default, crates.io, is known: TestResolveCargo).
	r := Resolve([]string{NPM, Go, Pip}, f.env())
	if len(r.Hosts) != 0 {
		t.Errorf("hosts %q with no tool and no configuration", patterns(r))
	}
	if len(r.Notes) != 3 {
		t.Fatalf("notes %q: want one per tool", r.Notes)
	}
	for _, n := range r.Notes {
		if !strings.Contains(n, "--allow-domain") || strings.Contains(n, "\n") {
			t.Errorf("note %q: want one line naming --allow-domain", n)
		}
	}
}

func TestResolveGo(t *testing.T) {
	f := newFake(t, "go")
	f.answers["go"] = `{"GOPROXY": "https://goproxy.test,direct", "GOSUMDB": "sumdb.test", "GONOPROXY": "", "GOPRIVATE": "git.corp.test", "GOENV": "", "GOROOT": ""}`
	r := Resolve([]string{Go}, f.env())
	if got := patterns(r); !slices.Equal(got, []string{"git.corp.test:443", "goproxy.test:443", "sumdb.test:443"}) {
		t.Errorf("go env: %q %q", got, r.Notes)
	}
	// All set in the environment: go is not asked.
	n := len(f.asked)
	r = Resolve([]string{Go}, f.env("GOPROXY=https://env.test", "GOSUMDB=off", "GONOPROXY=", "GOPRIVATE="))
	if got := patterns(r); !slices.Equal(got, []string{"env.test:443"}) || len(f.asked) != n {
		t.Errorf("env: %q, asked %d more", got, len(f.asked)-n)
	}
}

func TestResolvePip(t *testing.T) {
	f := newFake(t, "pip3")
	f.answers["python3"] = "https://index.test/simple\nfiles.test\n"
	r := Resolve([]string{Pip}, f.env())
	if got := patterns(r); !slices.Equal(got, []string{"files.test:443", "index.test:443"}) {
		t.Errorf("default: %q %q", got, r.Notes)
	}
	f.write(".config/pip/pip.conf", "[global]\nindex-url = https://mirror.test/simple\nextra-index-url = https://extra.test/simple\n")
	r = Resolve([]string{Pip}, f.env())
	if got := patterns(r); !slices.Equal(got, []string{"extra.test:443", "mirror.test:443"}) {
		t.Errorf("pip.conf: %q", got)
	}
	r = Resolve([]string{Pip}, f.env("PIP_INDEX_URL=https://env.test/simple", "PIP_EXTRA_INDEX_URL="))
	if got := patterns(r); !slices.Equal(got, []string{"env.test:443"}) {
		t.Errorf("env: %q", got)
	}
	r = Resolve([]string{Pip}, f.env("PIP_CONFIG_FILE="+os.DevNull))
	if got := patterns(r); !slices.Equal(got, []string{"files.test:443", "index.test:443"}) {
		t.Errorf("PIP_CONFIG_FILE=%s: %q", os.DevNull, got)
	}
}

func TestResolveCargo(t *testing.T) {
	f := newFake(t)
	// Nothing configured, no record (a fresh host): crates.io, cargo's
	// default, without its API host.
	r := Resolve([]string{Cargo}, f.env())
	if got := patterns(r); !slices.Equal(got, []string{"index.crates.io:443", "static.crates.io:443"}) || len(r.Notes) != 0 {
		t.Errorf("nothing configured: %q %q", got, r.Notes)
	}
	// cargo's own record of a sparse index it used, with its config.json.
	f.write(".cargo/registry/index/index.test-1949cf8c6b5b557f/config.json", `{"dl": "https://dl.test/crates", "api": "https://api.test"}`)
	r = Resolve([]string{Cargo}, f.env())
	if got := patterns(r); !slices.Equal(got, []string{"api.test:443", "dl.test:443", "index.crates.io:443", "index.test:443", "static.crates.io:443"}) || len(r.Notes) != 0 {
		t.Errorf("record: %q %q", got, r.Notes)
	}
	// Source replacement wins over the record.
	f.write(".cargo/config.toml", "[source.crates-io]\nreplace-with = 'm'\n[source.m]\nregistry = 'sparse+https://m.test/index/'\n")
	r = Resolve([]string{Cargo}, f.env())
	if got := patterns(r); !slices.Equal(got, []string{"m.test:443"}) {
		t.Errorf("replacement: %q %q", got, r.Notes)
	}
	// A project's config in the workspace is not trusted.
	f.write(filepath.Join(f.cwd, ".cargo", "config.toml"), "[source.m]\nregistry = 'https://evil.test/'\n")
	e := f.env()
	e.Writable = func(p string) bool { return strings.HasPrefix(p, f.cwd+"/") }
	r = Resolve([]string{Cargo}, e)
	if got := patterns(r); !slices.Equal(got, []string{"m.test:443"}) || len(r.Notes) != 1 {
		t.Errorf("untrusted project config: %q %q", got, r.Notes)
	}
}

// ~/.npmrc is masked inside (it holds tokens): the registry it names
// reaches npm inside as a variable, without credentials.
func TestResolveNpmSetEnv(t *testing.T) {
	f := newFake(t, "npm")
	f.answers["npm"] = "registry=https://default.test/\nglobalconfig=/nonexistent\n"
	f.write(".npmrc", "registry=https://u:SECRET@user.test/npm/\n@corp:registry=https://corp.test/\n//user.test/:_authToken=SECRET\n")
	r := Resolve([]string{NPM}, f.env())
	slices.Sort(r.SetEnv)
	want := []string{"npm_config_@corp:registry=https://corp.test/", "npm_config_registry=https://user.test/npm/"}
	if !slices.Equal(r.SetEnv, want) {
		t.Errorf("SetEnv %q, want %q", r.SetEnv, want)
	}
	// Set in the environment: the variable's value wins.
	r = Resolve([]string{NPM}, f.env("npm_config_registry=https://env.test/"))
	if !slices.Contains(r.SetEnv, "npm_config_registry=https://env.test/") {
		t.Errorf("SetEnv %q with the registry set in the environment", r.SetEnv)
	}
}

// A tool that does not answer in time is given up at the timeout, even
// when a child it started holds its output open: the start (or the end's
// hint) waits for none of them.
func TestResolveTimeout(t *testing.T) {
	f := newFake(t)
	// The shell waits for its sleep; killed at the timeout, it leaves the
	// sleep holding the output pipe.
	if err := os.WriteFile(filepath.Join(f.bin, "npm"), []byte("#!/bin/sh\nsleep 5\necho registry=https://late.test/\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := f.env()
	e.Run = nil // the real exec
	e.Timeout = 200 * time.Millisecond
	start := time.Now()
	r := Resolve([]string{NPM}, e)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Resolve took %v with a 200ms timeout", took)
	}
	if len(r.Hosts) != 0 || len(r.Notes) == 0 {
		t.Errorf("a tool past its timeout: hosts %v, notes %q", r.Hosts, r.Notes)
	}
}

// TestResolveRunsWithoutWritablePlaces: each tool runs on the host with a
// PATH and loader variables that name no place the sandbox can write:
// npm's `#!/usr/bin/env node` looked node up on the user's PATH, and an
// activated venv of the workspace first there had the agent's node run
// outside jail. Go and python run the same way.
func TestResolveRunsWithoutWritablePlaces(t *testing.T) {
	for _, tool := range []string{NPM, Go, Pip} {
		t.Run(tool, func(t *testing.T) {
			f := newFake(t, "npm", "go", "pip3", "python3")
			f.answers["npm"] = "registry=https://default.test/\nglobalconfig=/nonexistent\n"
			f.answers["go"] = `{"GOPROXY":"https://proxy.test","GOSUMDB":"off"}`
			f.answers["python3"] = "https://index.test/simple\nfiles.test\n"
			venv := filepath.Join(f.cwd, ".venv", "bin")
			e := f.env("PATH="+venv+":"+f.bin+":/usr/bin", "LD_LIBRARY_PATH="+f.cwd+"/lib", "LD_PRELOAD="+f.cwd+"/x.so", "NODE_OPTIONS=--require "+f.cwd+"/x.js")
			e.Writable = func(p string) bool { return p == f.cwd || strings.HasPrefix(p, f.cwd+"/") }
			var ran [][]string
			inner := e.Run
			e.Run = func(ctx context.Context, dir string, env []string, name string, args ...string) ([]byte, error) {
				ran = append(ran, env)
				return inner(ctx, dir, env, name, args...)
			}
			Resolve([]string{tool}, e)
			if len(ran) == 0 {
				t.Fatal("the tool was not asked")
			}
			for _, env := range ran {
				for _, kv := range env {
					if strings.Contains(kv, f.cwd) {
						t.Errorf("%s ran with %s", tool, kv)
					}
				}
				if !slices.Contains(env, "PATH="+f.bin+":/usr/bin") {
					t.Errorf("%s ran without the PATH's other directories: %q", tool, env)
				}
			}
		})
	}
}

// TestResolvePastWritablePath: with an activated venv of the workspace
// first on PATH (pip3 and npm there, the sandbox's to write), the tools
// asked are the host's next ones on PATH, whose defaults are the same;
// where the only one is the workspace's, a note says so and nothing is
// asked. Before, the workspace's pip3 was found first and refused, and
// pip's default index was not allowed at all (`-P python` with an
// activated venv could not reach its index).
func TestResolvePastWritablePath(t *testing.T) {
	f := newFake(t, "pip3", "npm")
	f.answers["python3"] = "https://index.test/simple\nfiles.test\n"
	f.answers["npm"] = "registry=https://default.test/\nglobalconfig=/nonexistent\n"
	venv := filepath.Join(f.cwd, ".venv", "bin")
	if err := os.MkdirAll(venv, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"pip3", "npm"} {
		f.write(filepath.Join(venv, n), "#!/bin/sh\n")
		os.Chmod(filepath.Join(venv, n), 0o755)
	}
	env := func(path string) Env {
		e := f.env("PATH=" + path)
		e.LookPath = nil // the default: past what the sandbox can write
		e.Writable = func(p string) bool { return p == f.cwd || strings.HasPrefix(p, f.cwd+"/") }
		return e
	}
	r := Resolve([]string{Pip, NPM}, env(venv+":"+f.bin))
	if got := patterns(r); !slices.Equal(got, []string{"default.test:443", "files.test:443", "index.test:443"}) || len(r.Notes) != 0 {
		t.Errorf("past the venv: %q, notes %q", got, r.Notes)
	}
	n := len(f.asked)
	r = Resolve([]string{Pip, NPM}, env(venv))
	if len(f.asked) != n || len(patterns(r)) != 0 {
		t.Errorf("only the venv's: asked %q, found %q", f.asked[n:], patterns(r))
	}
	for _, tool := range []string{"pip3", "npm"} {
		if !slices.ContainsFunc(r.Notes, func(s string) bool {
			return strings.Contains(s, "the only "+tool+" on your PATH, "+filepath.Join(venv, tool)+", is in a place the sandbox can write")
		}) {
			t.Errorf("no note for the venv's %s: %q", tool, r.Notes)
		}
	}
}
