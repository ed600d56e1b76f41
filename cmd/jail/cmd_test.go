package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/jail-sandbox/jail/config"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/termfilter"
)

func testFactory() (*factory, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	f := &factory{
		IO:      &iostreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb},
		Env:     func() (config.Env, error) { return config.Env{Cwd: "/ws", Home: "/home/u"}, nil },
		Version: "v1.2.3",
	}
	return f, &out, &errb
}

// execCode runs a command as main does and returns the exit status and stderr.
func execCode(f *factory, c *command, args ...string) int {
	return exitCode(f.IO.ErrOut, c.exec(args))
}

// The run verb parses every option into the flag layer, in order, without
// running anything.
func TestRunParsing(t *testing.T) {
	cases := []struct {
		args    []string
		want    []string // key=value in order
		command []string
	}{
		{[]string{"--", "claude", "-p", "hi"}, nil, []string{"claude", "-p", "hi"}},
		{[]string{"-w", "a", "--write=b", "-r", "c", "--read-only", "-v", "--", "ls", "-la"},
			[]string{"write=a", "write=b", "read=c", "read-only=true", "verbose=true"}, []string{"ls", "-la"}},
		{[]string{"--memory", "2G", "--timeout=30m", "--cpus", "0.5", "--net", "allow", "-p", "8080:80", "-P", "review", "--", "x"},
			[]string{"memory=2G", "timeout=30m", "cpus=0.5", "net=allow", "publish=8080:80", "profile=review"}, []string{"x"}},
		{[]string{"--read-only=false", "--dry-run", "--", "--version"}, []string{"read-only=false", "dry-run=true"}, []string{"--version"}},
		{[]string{"--x-landlock-max-abi", "3", "--", "x"}, []string{"x-landlock-max-abi=3"}, []string{"x"}},
	}
	for _, c := range cases {
		f, _, _ := testFactory()
		var got *RunOptions
		cmd := newRunCmd(f, func(o *RunOptions) error { got = o; return nil })
		if code := execCode(f, cmd, c.args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, f.IO.ErrOut)
		}
		var kv []string
		for _, s := range got.Flags {
			kv = append(kv, s.Option.Name+"="+s.Value)
			if s.Source.Kind != config.FromFlag || s.Source.Flag != "--"+s.Option.Name {
				t.Errorf("%v: source %+v", c.args, s.Source)
			}
		}
		if !slices.Equal(kv, c.want) || !slices.Equal(got.Command, c.command) {
			t.Errorf("%v: flags %v command %v; want %v %v", c.args, kv, got.Command, c.want, c.command)
		}
	}
}

type usageCase struct {
	args []string
	want string
}

// checkRunUsage runs each case's command line, which must fail as a usage
// error printing want, run nothing and print nothing on stdout.
func checkRunUsage(t *testing.T, cases []usageCase) {
	t.Helper()
	for _, c := range cases {
		f, out, errb := testFactory()
		ran := false
		cmd := newRunCmd(f, func(*RunOptions) error { ran = true; return nil })
		if code := execCode(f, cmd, c.args...); code != exitSetup || ran || out.Len() != 0 || errb.String() != c.want {
			t.Errorf("%v: exit %d ran %v stdout %q\n got %q\nwant %q", c.args, code, ran, out, errb, c.want)
		}
	}
}

// Every mistake on the command line: one line, exit 125, the flag spelled
// as typed, the fix, never the help text.
func TestRunUsageErrors(t *testing.T) {
	cases := []usageCase{
		{[]string{"--timeout", "10", "--", "x"}, "jail: --timeout 10: add a unit, e.g. 10s or 5m\n"},
		{[]string{"--cpus", "abc", "--", "x"}, "jail: --cpus abc: not a number, e.g. 0.5\n"},
		{[]string{"--memory", "lots", "--", "x"}, "jail: --memory lots: not a size: use a number with a unit, e.g. 512M or 2G (units k, M, G, T)\n"},
		{[]string{"--pids", "many", "--", "x"}, "jail: --pids many: not a whole number, e.g. 1024\n"},
		{[]string{"--net", "bridge", "--", "x"}, "jail: --net bridge: want none, allow or host\n"},
		{[]string{"--read-only=maybe", "--", "x"}, "jail: --read-only maybe: want true or false\n"},
		{[]string{"--bogus", "--", "x"}, "jail: unknown flag --bogus (see jail --help)\n"},
		{[]string{"--memroy", "1G", "--", "x"}, "jail: unknown flag --memroy; did you mean --memory? (see jail --help)\n"},
		{[]string{"--allow-domian", "x", "--", "x"}, "jail: unknown flag --allow-domian; did you mean --allow-domain? (see jail --help)\n"},
		{[]string{"-Z", "--", "x"}, "jail: unknown flag -Z (see jail --help)\n"},
		{[]string{"--timeout"}, "jail: --timeout needs DURATION, e.g. --timeout 30m (see jail --help)\n"},
		// A value flag typed without its value before --: pflag took --
		// as the value, and the command's words were said to be no verb.
		{[]string{"--audit", "--", "true"}, "jail: --audit needs FILE before the --, e.g. --audit /var/log/jail/run.jsonl; without it: ~/.local/state/jail/audit/TIME-ID.jsonl (see jail --help)\n"},
		{[]string{"--memory", "--", "x"}, "jail: --memory needs SIZE before the --, e.g. --memory 2G (see jail --help)\n"},
		{[]string{"-r", "--", "x"}, "jail: --read needs PATH before the --, e.g. --read ~/.gitconfig (see jail --help)\n"},
		{[]string{"--config", "--", "x"}, "jail: --config needs FILE before the -- (see jail --help)\n"},
		{[]string{"ls"}, "jail: \"ls\" is not a jail verb; put the command after --: jail [flags] -- ls (see jail --help)\n"},
		{[]string{"-v", "ps"}, "jail: \"ps\" is a verb: put it first, as in jail ps (see jail --help)\n"},
		{nil, "jail: no command given: usage is jail [flags] -- COMMAND [ARG...] (see jail --help)\n"},
		{[]string{"--"}, "jail: no command after --: usage is jail [flags] -- COMMAND [ARG...] (see jail --help)\n"},
	}
	checkRunUsage(t, cases)
}

// TestRunUsageNamesProfileProgram: jail -P claude typed without -- claude
// shows the command meant, when a program of the profile's name is on PATH,
// and the plain usage when none is.
func TestRunUsageNamesProfileProgram(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	cases := []usageCase{
		{[]string{"-P", "claude"}, "jail: no command given: name the program after --, as in jail -P claude -- claude (see jail --help)\n"},
		{[]string{"--profile", "go,claude", "--"}, "jail: no command after --: name the program, as in jail -P claude -- claude (see jail --help)\n"},
		{[]string{"-P", "codex"}, "jail: no command given: usage is jail [flags] -- COMMAND [ARG...] (see jail --help)\n"},
	}
	checkRunUsage(t, cases)
}

func TestHelpAndVersion(t *testing.T) {
	f, out, _ := testFactory()
	if code := run(f, []string{"--help"}); code != 0 {
		t.Fatal(code)
	}
	help := out.String()
	for _, l := range runFlagLines() {
		if !strings.Contains(help, l.spec()) || (l.Default != "" && !strings.Contains(help, "(default: "+l.Default+")")) {
			t.Errorf("--help lacks %q with its default %q", l.spec(), l.Default)
		}
	}
	for _, w := range []string{"-v, --verbose", "-h, --help", "Network:\n", "Exit status:", "jail config show", ".ssh/"} {
		if !strings.Contains(help, w) {
			t.Errorf("--help lacks %q", w)
		}
	}
	if strings.Contains(help, "x-landlock") || strings.Contains(help, "x-force") {
		t.Error("--help lists a hidden testing flag")
	}
	for _, args := range [][]string{{"-h"}, {"help"}} {
		f2, out2, _ := testFactory()
		if run(f2, args) != 0 || out2.String() != help {
			t.Errorf("%v differs from --help", args)
		}
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		f, out, _ := testFactory()
		if run(f, args) != 0 || out.String() != "jail v1.2.3\n" {
			t.Errorf("%v: %q", args, out)
		}
	}
	f, out, _ = testFactory()
	if run(f, []string{"kill", "--help"}) != 0 || !strings.Contains(out.String(), "jail kill [--now] [--reason TEXT] NAME|ID|PID|all") || !strings.Contains(out.String(), "--now") {
		t.Errorf("kill --help: %q", out)
	}
}

// Each verb parses into its options without running anything.
func TestVerbParsing(t *testing.T) {
	f, _, _ := testFactory()
	var k *KillOptions
	if code := execCode(f, newKillCmd(f, func(o *KillOptions) error { k = o; return nil }), "--now", "abc", "123"); code != 0 || !k.Now || !slices.Equal(k.IDs, []string{"abc", "123"}) {
		t.Errorf("kill: %d %+v", code, k)
	}
	var a *AuditOptions
	if code := execCode(f, newAuditCmd(f, func(o *AuditOptions) error { a = o; return nil }), "trail.jsonl", "--json", "--type", "exec,net", "--type", "dns"); code != 0 ||
		!a.JSON || a.File != "trail.jsonl" || !slices.Equal(a.Types, []string{"exec", "net", "dns"}) {
		t.Errorf("audit: %d %+v", code, a)
	}
	for _, args := range [][]string{nil, {"--verify"}} { // no FILE: the newest trail
		if code := execCode(f, newAuditCmd(f, func(o *AuditOptions) error { a = o; return nil }), args...); code != 0 || a.File != "latest" {
			t.Errorf("audit %v: %d %+v", args, code, a)
		}
	}
	var tr *TrustOptions
	if code := execCode(f, newTrustCmd(f, func(o *TrustOptions) error { tr = o; return nil }), "--revoke", "x/.jail.toml"); code != 0 || !tr.Revoke || tr.File != "x/.jail.toml" {
		t.Errorf("trust: %d %+v", code, tr)
	}
	var p *ProfilesOptions
	if code := execCode(f, newProfilesCmd(f, func(o *ProfilesOptions) error { p = o; return nil }), "show", "a", "b"); code != 0 || !slices.Equal(p.Show, []string{"a", "b"}) {
		t.Errorf("profiles: %d %+v", code, p)
	}
	var co *ConfigOptions
	if code := execCode(f, newConfigCmd(f, func(o *ConfigOptions) error { co = o; return nil }), "show", "-w", "x", "--no-project-file", "--config", "c.toml"); code != 0 ||
		co.Verb != "show" || len(co.Flags) != 1 || co.ConfigFile != "c.toml" || co.NoProject == nil || !*co.NoProject {
		t.Errorf("config: %d %+v", code, co)
	}
	// No verb shows (a new user's `jail config`), flags and all.
	co = nil
	if code := execCode(f, newConfigCmd(f, func(o *ConfigOptions) error { co = o; return nil }), "-w", "x"); code != 0 || co == nil || co.Verb != "show" || len(co.Flags) != 1 {
		t.Errorf("config without a verb: %d %+v", code, co)
	}
	var cp *CompletionOptions
	if code := execCode(f, newCompletionCmd(f, func(o *CompletionOptions) error { cp = o; return nil }), "zsh"); code != 0 || cp.Shell != "zsh" {
		t.Errorf("completion: %d %+v", code, cp)
	}
	for _, c := range []struct {
		cmd  *command
		args []string
		want string
	}{
		{newKillCmd(f, nil), nil, "jail: kill: which sandbox?"},
		{newAuditCmd(f, nil), []string{"a", "b"}, "jail: audit: one FILE at a time"},
		{newAuditCmd(f, nil), []string{"--verify", "--json", "x"}, "jail: audit: --verify takes no other flag"},
		{newAuditCmd(f, nil), []string{"--type", "bogus", "x"}, "jail: audit: --type bogus: want one of"},
		{newTrustCmd(f, nil), []string{"--list", "x"}, "jail: trust: --list takes nothing else"},
		{newTrustCmd(f, nil), []string{"--prune", "x"}, "jail: trust: --prune takes nothing else"},
		{newTrustCmd(f, nil), []string{"--prune", "--revoke"}, "jail: trust: --prune takes nothing else"},
		{newProfilesCmd(f, nil), []string{"show"}, "jail: profiles: show which profile?"},
		{newConfigCmd(f, nil), []string{"shw"}, "jail: config: want show or path"},
		{newCompletionCmd(f, nil), []string{"tcsh"}, "jail: completion: want one of bash, zsh, fish"},
		{newPSCmd(f, nil), []string{"x"}, "jail: ps: takes no argument \"x\" (see jail ps --help)"},
		{newDoctorCmd(f, nil), []string{"--bogus"}, "jail: doctor: unknown flag --bogus (see jail doctor --help)"},
		{newKillCmd(f, nil), []string{"--reason", "--", "x"}, "jail: kill: --reason needs TEXT before the -- (see jail kill --help)"},
		{newAuditCmd(f, nil), []string{"--type", "--", "x"}, "jail: audit: --type needs TYPE before the -- (see jail audit --help)"},
		{newExecCmd(f, nil), []string{"-w", "--", "x", "true"}, "jail: exec: --workdir needs DIR before the -- (see jail exec --help)"},
		{newRunVerbCmd(f, nil), []string{"--name", "--", "true"}, "jail: run: --name needs NAME before the -- (see jail run --help)"},
	} {
		f, _, errb := testFactory()
		c.cmd.out = f.IO.Out
		if code := exitCode(errb, c.cmd.exec(c.args)); code != exitSetup || !strings.HasPrefix(errb.String(), c.want) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%s %v: exit %d %q, want %q", c.cmd.name, c.args, code, errb, c.want)
		}
	}
}

// Errors map to exit codes in one place.
func TestExitCode(t *testing.T) {
	var b bytes.Buffer
	for _, c := range []struct {
		err  error
		code int
		out  string
	}{
		{nil, 0, ""},
		{exitStatus(0), 0, ""},
		{exitStatus(124), 124, ""},
		{&usageError{msg: "x: y"}, 125, "jail: x: y\n"},
		{errors.New("two\nlines"), 125, "jail: two lines\n"},
		{&policy.FieldError{Key: "k", Value: "v", Reason: "r"}, 125, "jail: k \"v\": r\n"},
		// A file's bytes quoted in an error reach the terminal inert.
		{errors.New("f.toml:1: \x1b]52;c;eA==\a\u202e\u009b: unknown key"), 125, `jail: f.toml:1: \x1b]52;c;eA==\x07\u202e\x9b: unknown key` + "\n"},
	} {
		b.Reset()
		if code := exitCode(&b, c.err); code != c.code || b.String() != c.out {
			t.Errorf("%v: %d %q, want %d %q", c.err, code, b.String(), c.code, c.out)
		}
	}
}

func TestVersionFromBuildInfo(t *testing.T) {
	for _, c := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}}, "v0.3.1"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}}}, "devel-0123456789ab-dirty"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
	} {
		if got := versionFrom(&c.bi); got != c.want {
			t.Errorf("versionFrom = %q, want %q", got, c.want)
		}
	}
}

// Every option is a flag with a config key of the same name (the table),
// and the few flags without a key are about the command line itself.
func TestEveryFlagHasAKey(t *testing.T) {
	f, _, _ := testFactory()
	fs := newRunCmd(f, nil).flags
	n := 0
	fs.VisitAll(func(fl *pflag.Flag) {
		n++
		if policy.Lookup(fl.Name) != nil {
			return
		}
		switch fl.Name {
		case "config", "help", "version": // the command line itself
		case config.NoProjectKey: // a key of the reader's own
		default:
			t.Errorf("flag --%s has no config key", fl.Name)
		}
	})
	if n != len(policy.Options)+4 {
		t.Errorf("%d flags for %d options", n, len(policy.Options))
	}
	// And a config file takes every option as a key.
	for i := range policy.Options {
		o := &policy.Options[i]
		v := o.Example
		switch {
		case o.Kind == policy.Bool:
			v = "true"
		case o.Name == "workspace":
			v = "/w"
		case v == "":
			t.Errorf("%s: no example", o.Name)
			continue
		}
		doc := o.Name + " = " + tomlLiteral(o, v) + "\n"
		if _, err := config.Parse("/k.toml", []byte(doc), config.ExplicitConfig, config.Source{Kind: config.FromFile, File: "/k.toml"}); err != nil {
			t.Errorf("%s: %v", o.Name, err)
		}
	}
}

func tomlLiteral(o *policy.Option, v string) string {
	switch o.Kind {
	case policy.Bool, policy.Int, policy.Uint, policy.Float:
		return v
	case policy.List:
		return `["` + v + `"]`
	}
	return `"` + v + `"`
}

// Every option of the table parses as a flag (long and short), and a bad
// value of every kind is one line naming the flag.
func TestEveryOptionParses(t *testing.T) {
	for i := range policy.Options {
		o := &policy.Options[i]
		v := o.Example
		if o.Kind == policy.Bool {
			v = "true"
		} else if v == "" {
			v = "/some/dir"
		}
		forms := [][]string{{"--" + o.Name + "=" + v}}
		if o.Kind != policy.Bool {
			forms = append(forms, []string{"--" + o.Name, v})
		} else {
			forms = append(forms, []string{"--" + o.Name})
		}
		if o.Short != "" {
			if o.Kind == policy.Bool {
				forms = append(forms, []string{"-" + o.Short})
			} else {
				forms = append(forms, []string{"-" + o.Short, v})
			}
		}
		for _, form := range forms {
			f, _, errb := testFactory()
			var got *RunOptions
			cmd := newRunCmd(f, func(r *RunOptions) error { got = r; return nil })
			if code := execCode(f, cmd, append(form, "--", "x")...); code != 0 || len(got.Flags) != 1 || got.Flags[0].Option != o || got.Flags[0].Value != v {
				t.Errorf("%v: exit %d %s %+v", form, code, errb, got)
			}
		}
		bad := map[policy.Kind]string{policy.Bool: "maybe", policy.Enum: "bogus", policy.Size: "lots", policy.Duration: "10", policy.Int: "x", policy.Uint: "-1", policy.Float: "x"}[o.Kind]
		if bad == "" {
			continue
		}
		f, _, errb := testFactory()
		code := execCode(f, newRunCmd(f, func(*RunOptions) error { return nil }), "--"+o.Name+"="+bad, "--", "x")
		if code != exitSetup || !strings.HasPrefix(errb.String(), "jail: --"+o.Name+" "+bad+": ") || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("--%s=%s: exit %d %q", o.Name, bad, code, errb)
		}
	}
}

// Options whose values another package defines keep the same list.
func TestOptionValuesMatchTheirPackages(t *testing.T) {
	if got := policy.Lookup("allow-terminal").Values; !slices.Equal(got, termfilter.Classes) {
		t.Errorf("allow-terminal values %v, termfilter.Classes %v", got, termfilter.Classes)
	}
}
