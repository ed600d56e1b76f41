package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/policy"
)

// flagLine is one flag as --help, the man page, README and the completions
// show it.
type flagLine struct {
	Short, Long string
	Placeholder string
	Help        string
	Default     string // shown as "(default: X)"; "" for none
	Group       string
	Values      []string // allowed values, for completion
	Repeatable  bool
}

// cliOptions are the run verb's flags that are about the command line
// itself, not the policy: they have no config key (a file cannot name
// another file to read, ask for help or a version).
var cliOptions = []flagLine{
	{Long: "config", Placeholder: "FILE", Group: policy.GroupConfig, Help: "read FILE too (above your config file and the project's, below flags)"},
	{Long: "no-project-file", Group: policy.GroupConfig, Help: "do not read the workspace's .jail.toml (also a config key)"},
	{Short: "h", Long: "help", Group: policy.GroupOutput, Help: "show this help"},
	{Long: "version", Group: policy.GroupOutput, Help: "print the version and exit"},
}

// runFlagLines lists every visible flag of the run verb, by group, in table
// order: the one source for --help, the man page, README and completion.
func runFlagLines() []flagLine {
	var out []flagLine
	for _, g := range policy.Groups {
		for i := range policy.Options {
			o := &policy.Options[i]
			if o.Group != g || o.Hidden {
				continue
			}
			def := o.DefaultText
			if o.Default != "" {
				def = o.Default
			}
			out = append(out, flagLine{Short: o.Short, Long: o.Name, Placeholder: o.Placeholder, Help: o.Help,
				Default: def, Group: g, Values: o.Values, Repeatable: o.Kind == policy.List})
		}
		for _, c := range cliOptions {
			if c.Group == g {
				out = append(out, c)
			}
		}
	}
	return out
}

// verbFlagLines lists a verb's flags (from its pflag set).
func verbFlagLines(fs *pflag.FlagSet) []flagLine {
	var out []flagLine
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		// The placeholder is the `WORD` in the usage (pflag's convention).
		ph, usage := pflag.UnquoteUsage(f)
		if f.NoOptDefVal != "" {
			ph = ""
		}
		if o := policy.Lookup(f.Name); o != nil {
			ph = o.Placeholder
		}
		out = append(out, flagLine{Short: f.Shorthand, Long: f.Name, Placeholder: ph, Help: usage})
	})
	return out
}

// spec is "-w, --write PATH".
func (l flagLine) spec() string {
	s := "    --" + l.Long
	if l.Short != "" {
		s = "-" + l.Short + ", --" + l.Long
	}
	if l.Placeholder != "" {
		s += " " + l.Placeholder
	}
	return s
}

func (l flagLine) helpText() string {
	h := l.Help
	if l.Default != "" {
		h += " (default: " + l.Default + ")"
	}
	return h
}

// writeFlagLines writes aligned "  spec  help" lines.
func writeFlagLines(w io.Writer, lines []flagLine) { writeFlagLinesWidth(w, lines, specWidth(lines)) }

// specWidth is the column the help starts at: the longest spec, at most 30.
func specWidth(lines []flagLine) int {
	width := 0
	for _, l := range lines {
		width = max(width, len(l.spec()))
	}
	return min(width, 30)
}

func writeFlagLinesWidth(w io.Writer, lines []flagLine, width int) {
	for _, l := range lines {
		fmt.Fprintf(w, "  %-*s  %s\n", width, l.spec(), l.helpText())
	}
}

const intro = `jail runs a command in a sandbox: new user, mount, pid, ipc, uts, cgroup and
network namespaces; the host read-only, the workspace writable, $HOME empty,
secrets hidden, no network, every capability dropped.`

const examples = `  jail -P claude -- claude            an agent CLI in the current directory, with its state and API
  jail -- claude                      the same agent with no network and an empty home
  jail -r ~/datasets -- python3 x.py  make one path of $HOME visible, read-only
  jail -P go -- go test ./...         Go's module proxy and caches of jail's own
  jail --allow-domain api.example.com -- curl https://api.example.com/
  jail --read-only -- ls -la          nothing writable but /tmp
  jail --env GITHUB_TOKEN -- gh pr list   pass one secret, by name
  jail --profile review -- claude     apply a profile (jail profiles lists them)
  jail --dry-run -- true              print every mount and rule, run nothing`

const exitText = `0-255: the command's own status; 128+N if it died of signal N; 124 when
--timeout fired; 125 when jail could not do what was asked (a bad flag, file or
policy, a failed setup: one line on stderr says why and what to do); 126 not
executable (or refused by the guard rail); 127 not found.`

// rootHelp is jail --help.
func rootHelp(w io.Writer, f *factory) {
	fmt.Fprintf(w, "%s\n\nUsage:\n  jail [flags] -- COMMAND [ARG...]\n  jail VERB [flags] [ARG...]\n\nVerbs:\n", intro)
	for _, v := range verbOrder {
		c := verbs[v](f)
		fmt.Fprintf(w, "  %-11s %s\n", v, c.short)
	}
	fmt.Fprintf(w, "\nExamples:\n%s\n", examples)
	lines := runFlagLines()
	width := specWidth(lines)
	for _, g := range policy.Groups {
		var gl []flagLine
		for _, l := range lines {
			if l.Group == g {
				gl = append(gl, l)
			}
		}
		fmt.Fprintf(w, "\n%s:\n", g)
		writeFlagLinesWidth(w, gl, width)
	}
	fmt.Fprint(w, "\nConfiguration: every flag is also a key of the same name in\n~/.config/jail/config.toml, in a project's .jail.toml (read once trusted:\njail trust) and in --config FILE; flags win. jail config show prints one.\n")
	fmt.Fprint(w, "\nBuilt-in protections (lifted by --no-default-deny; git ones by --allow-git-config).\n"+
		"A name absent at start is watched, and moved to the quarantine if it appears (not a\n"+
		"new secret file outside a home, such as a project's .env); the control files of every\n"+
		"git dir in a writable tree are read-only too (README: git):\n")
	for _, b := range fsrules.Builtins {
		kind := "unreadable"
		if b.Kind == fsrules.ReadOnly {
			kind = "read-only "
		}
		fmt.Fprintf(w, "  %s  %-22s %s\n", kind, b.Name, b.Why)
	}
	fmt.Fprintf(w, "\nExit status: %s\n", exitText)
}

func newHelpCmd(f *factory) *command {
	c := newCommand(f, "help", "jail help [VERB]", "show help, for jail or a verb")
	c.args = func(args []string) error {
		if len(args) > 1 {
			return c.usageErr("takes one verb")
		}
		return nil
	}
	c.run = func(args []string) error {
		if len(args) == 1 {
			mk, ok := verbs[args[0]]
			if !ok {
				return c.usageErr("no verb %q", args[0])
			}
			v := mk(f)
			v.printHelp(f.IO.Out)
			return nil
		}
		rootHelp(f.IO.Out, f)
		return nil
	}
	return c
}

// readmeFlags writes README's flag tables (between its flags markers).
func readmeFlags(w io.Writer) {
	lines := runFlagLines()
	md := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	for i, g := range policy.Groups {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "**%s**\n\n| flag | default | meaning |\n| --- | --- | --- |\n", g)
		for _, l := range lines {
			if l.Group != g {
				continue
			}
			def := ""
			if l.Default != "" {
				def = md(l.Default)
			}
			fmt.Fprintf(w, "| `%s` | %s | %s |\n", md(strings.TrimSpace(l.spec())), def, md(l.Help))
		}
	}
}
