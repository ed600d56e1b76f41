//go:build linux

package tests

// What a run writes into the sandbox's own home (an empty tmpfs) ends with
// it. An agent without a profile (Qwen Code, Amp) signs in and saves its
// settings there, and the next run asks again, with nothing said why
// (session 56, trying agents jail has no profile for). The end of such a
// run names what went, once for each workspace and name, with the flag
// that keeps a directory, and never offers --write for a path jail keeps
// read-only in the home (~/.gitconfig). What jail put there (the
// workspace, --write paths, a profile's state) and what ends as a matter
// of course (caches, histories) are not named.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHomeLeftSaid(t *testing.T) {
	home, state := workspace(t), workspace(t)
	env := []string{"HOME=" + home, "XDG_STATE_HOME=" + state}
	const line = "jail: the sandbox's home ended with the run, and what the run wrote there with it: "
	const writes = `mkdir -p ~/.qwen ~/.config/amp ~/.cache/x ~/.npm; echo '{}' > ~/.qwen/settings.json; echo h > ~/.bash_history; git config --global user.name x`
	ws := workspace(t)
	o := runOpts{dir: ws, env: env}
	r := sh(t, o, writes)
	mustCode(t, r, 0)
	want := line + "~/.config/amp/, ~/.gitconfig, ~/.qwen/ (a sign-in or settings saved there are gone); to keep one, make it in your home and give it: mkdir -p ~/.config/amp, then --write ~/.config/amp (what the agent writes there, your runs outside jail read too)"
	if !strings.Contains(r.stderr, want) || strings.Count(r.stderr, line) != 1 {
		t.Errorf("first run: want once\n  %s\nstderr:\n%s", want, r.stderr)
	}
	// Once for each workspace and name: a new name is said alone.
	r = sh(t, o, writes+"; mkdir ~/.newagent")
	mustCode(t, r, 0)
	if want := line + "~/.newagent/ ("; !strings.Contains(r.stderr, want) || strings.Count(r.stderr, line) != 1 {
		t.Errorf("second run: want only the new name\n  %s\nstderr:\n%s", want, r.stderr)
	}
	r = sh(t, o, writes)
	mustCode(t, r, 0)
	if strings.Contains(r.stderr, line) {
		t.Errorf("third run: said again\nstderr:\n%s", r.stderr)
	}

	for _, c := range []struct {
		name   string
		flags  []string
		script string
		want   string // "" for nothing said
	}{
		{"nothing written", nil, "true", ""},
		{"only caches and histories", nil, "mkdir -p ~/.cache/pip ~/.npm/_logs ~/go/pkg; echo x > ~/.python_history", ""},
		{"only what jail keeps read-only", nil, "git config --global user.name x",
			"~/.gitconfig (a sign-in or settings saved there are gone); jail keeps these read-only in your home: make such a change outside jail"},
		{"kept by --write", []string{"--write", "HOME/.qwen"}, "echo '{}' > ~/.qwen/settings.json", ""},
		{"dry run", []string{"--dry-run"}, "mkdir ~/.qwen", ""},
		{"quiet", []string{"--quiet"}, "mkdir ~/.qwen", ""},
		{"the home shown writable", []string{"--allow-writable-home", "--write", "HOME"}, "mkdir -p ~/.qwen-writable", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.MkdirAll(filepath.Join(home, ".qwen"), 0o755); err != nil {
				t.Fatal(err)
			}
			flags := make([]string, len(c.flags))
			for i, f := range c.flags {
				flags[i] = strings.ReplaceAll(f, "HOME", home)
			}
			r := sh(t, runOpts{dir: workspace(t), env: env}, c.script, flags...)
			mustCode(t, r, 0)
			switch {
			case c.want == "" && strings.Contains(r.stderr, line):
				t.Errorf("said\nstderr:\n%s", r.stderr)
			case c.want != "" && !strings.Contains(r.stderr, line+c.want):
				t.Errorf("want\n  %s%s\nstderr:\n%s", line, c.want, r.stderr)
			}
		})
	}
	// --quiet records nothing: the next run in that place says it.
	qws := workspace(t)
	mustCode(t, sh(t, runOpts{dir: qws, env: env}, "mkdir ~/.quietagent", "--quiet"), 0)
	if r := sh(t, runOpts{dir: qws, env: env}, "mkdir ~/.quietagent"); !strings.Contains(r.stderr, line+"~/.quietagent/") {
		t.Errorf("after --quiet: not said\nstderr:\n%s", r.stderr)
	}
}
