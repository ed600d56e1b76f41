//go:build linux

package tests

import (
	"regexp"
	"strings"
	"testing"
)

// Every mistake on the command line is one line on stderr, exit 125, naming
// the flag as the user types it (--flag) and saying what a valid value looks
// like; never the help text, never Go internals.
func TestCLIErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want []string // substrings of the one line
	}{
		{"duration without unit", []string{"--timeout", "10", "--", "true"}, []string{"--timeout 10", "unit", "10s"}},
		{"kill-grace without unit", []string{"--kill-grace", "3", "--", "true"}, []string{"--kill-grace 3", "unit"}},
		{"cpus not a number", []string{"--cpus", "abc", "--", "true"}, []string{"--cpus abc", "0.5"}},
		{"memory not a size", []string{"--memory", "lots", "--", "true"}, []string{"--memory lots", "512M"}},
		{"pids not a number", []string{"--pids", "many", "--", "true"}, []string{"--pids many", "whole number"}},
		{"net mode", []string{"--net", "bogus", "--", "true"}, []string{"--net bogus", "none, allow or host"}},
		{"domain as URL", []string{"--allow-domain", "https://example.com/", "--", "true"}, []string{"--allow-domain https://example.com/", "host name", "example.com"}},
		{"read-only with the workspace writable", []string{"--read-only", "-w", ".", "--", "true"}, []string{"--read-only", "--write .", "conflict"}},
		{"net none with an allow rule", []string{"--net", "none", "--allow-domain", "example.com", "--", "true"}, []string{"--net none", "--allow-domain example.com"}},
		{"tmp-size zero", []string{"--tmp-size", "0", "--", "true"}, []string{"--tmp-size 0"}},
		{"unknown flag", []string{"--bogus", "--", "true"}, []string{"--bogus", "jail --help"}},
		{"unknown short flag", []string{"-Z", "--", "true"}, []string{"-Z", "jail --help"}},
		{"flag without value", []string{"--", "true", "--timeout"}, nil}, // after --: the command's own flag; checked below
		{"missing value", []string{"--timeout"}, []string{"--timeout", "needs"}},
		{"command without --", []string{"ls"}, []string{"ls", "after --"}},
		{"no command", nil, []string{"no command"}},
		{"missing write path", []string{"-w", "/no/such/jail-path", "--", "true"}, []string{"--write /no/such/jail-path", "no such file"}},
		{"bad setenv", []string{"--setenv", "NOVALUE", "--", "true"}, []string{"--setenv NOVALUE", "NAME=VALUE"}},
		{"bad publish", []string{"-p", "x:y", "--", "true"}, []string{"--publish x:y"}},
		{"bad deny glob", []string{"--deny", "[", "--", "true"}, []string{"--deny ["}},
	}
	goInternals := regexp.MustCompile(`strconv|Parse(Int|Float|Duration)|invalid syntax|parse error`)
	singleDash := regexp.MustCompile(`(^|[\s(])-[a-z][a-z-]+`)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, runOpts{}, c.args...)
			if c.want == nil && c.args != nil {
				if r.code == 125 {
					t.Fatalf("a flag after -- was taken as jail's: %s", r.stderr)
				}
				return
			}
			if r.code != 125 {
				t.Fatalf("exit %d, want 125\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			line := strings.TrimSpace(r.stderr)
			if strings.Contains(line, "\n") || r.stdout != "" {
				t.Fatalf("want one line on stderr and nothing on stdout, got\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(line, w) {
					t.Errorf("%q lacks %q", line, w)
				}
			}
			if goInternals.MatchString(line) {
				t.Errorf("%q shows Go internals", line)
			}
			if m := singleDash.FindString(line); m != "" && !strings.Contains(strings.Join(c.args, " "), strings.TrimSpace(m)) {
				t.Errorf("%q spells a flag with one dash: %q", line, m)
			}
		})
	}
}

// A variable named with --env that the host does not have is a warning, not
// silence: the user expected something to pass.
func TestCLIEnvUnsetWarns(t *testing.T) {
	r := run(t, runOpts{}, "--env", "JAIL_TEST_SURELY_UNSET", "--", "true")
	mustCode(t, r, 0)
	if !strings.Contains(r.stderr, "--env JAIL_TEST_SURELY_UNSET") || !strings.Contains(r.stderr, "not set") {
		t.Fatalf("no warning for an unset --env name:\n%s", r.stderr)
	}
	r = run(t, runOpts{env: []string{"JAIL_TEST_SET=1"}}, "--env", "JAIL_TEST_SET", "--", "true")
	mustCode(t, r, 0)
	if strings.Contains(r.stderr, "JAIL_TEST_SET") {
		t.Fatalf("warned about a set variable:\n%s", r.stderr)
	}
}

func TestCLIVersionFlag(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		r := run(t, runOpts{}, args...)
		mustCode(t, r, 0)
		if !strings.HasPrefix(r.stdout, "jail ") || strings.TrimSpace(r.stdout) == "jail dev" {
			t.Errorf("%v: %q, want jail and a real version", args, r.stdout)
		}
	}
}

// --help shows every flag with its placeholder and default, -v included, in groups.
func TestCLIHelpShowsDefaults(t *testing.T) {
	r := run(t, runOpts{}, "--help")
	mustCode(t, r, 0)
	for _, w := range []string{"-v, --verbose", "--memory SIZE", "--pids N", "1024", "--tmp-size SIZE", "1G", "--kill-grace DURATION", "5s", "Network:", "Limits:", "--profile", "--config FILE", "--settings FILE"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("--help lacks %q", w)
		}
	}
}
