package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/jail-sandbox/jail/config"
	"github.com/jail-sandbox/jail/policy"
)

// command is one verb: its flags, its help and what it runs.
type command struct {
	name  string // "kill"; "" for the run verb
	usage string // "jail kill [--now] ID|PID|all ..."
	short string // one line for the verb list and the man page
	long  string // more help, after the usage
	flags *pflag.FlagSet
	// args checks the positional arguments (nil: none allowed).
	args func(args []string) error
	run  func(args []string) error
	// help prints the full help (nil: usage, long and the flags).
	help func(w io.Writer)
	// verbs lists sub-verbs for completion ("show" of config).
	verbs []string
	out   io.Writer // where help goes
}

func newCommand(f *factory, name, usage, short string) *command {
	fs := pflag.NewFlagSet("jail "+name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are ours to word; help is printed on request
	fs.SortFlags = false
	c := &command{name: name, usage: usage, short: short, flags: fs, out: f.IO.Out}
	fs.BoolP("help", "h", false, "show this help")
	return c
}

// exec parses args and runs the command.
func (c *command) exec(args []string) error {
	c.flags.VisitAll(func(f *pflag.Flag) {
		// A flag that takes a value refuses "--" as it (errDashValue).
		if _, ok := f.Value.(*optionValue); !ok && f.NoOptDefVal == "" {
			f.Value = dashValue{f.Value}
		}
	})
	if err := c.flags.Parse(args); err != nil {
		return c.flagError(err)
	}
	if h, _ := c.flags.GetBool("help"); h {
		c.printHelp(c.out)
		return nil
	}
	rest := c.flags.Args()
	if c.args != nil {
		if err := c.args(rest); err != nil {
			return err
		}
	} else if len(rest) > 0 {
		return c.usageErr("takes no argument %q", rest[0])
	}
	return c.run(rest)
}

// printHelp writes the help to w.
func (c *command) printHelp(w io.Writer) {
	if c.help != nil {
		c.help(w)
		return
	}
	fmt.Fprintf(w, "%s\n\nUsage:\n  %s\n", capitalize(c.short), c.usage)
	if c.long != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.long, "\n"))
	}
	fmt.Fprintf(w, "\nFlags:\n")
	writeFlagLines(w, verbFlagLines(c.flags))
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// seeHelp is how every usage error ends.
func (c *command) seeHelp() string {
	if c.name == "" {
		return "see jail --help"
	}
	return "see jail " + c.name + " --help"
}

// usageErr is a mistake on the command line: one line, exit 125.
// oneSandbox is the args check of the verbs that take exactly one
// sandbox NAME (attach, inspect, logs), like cobra's ExactArgs(1).
func (c *command) oneSandbox(args []string) error {
	if len(args) != 1 {
		return c.usageErr("give one sandbox NAME (jail ps lists them)")
	}
	return nil
}

func (c *command) usageErr(format string, a ...any) error {
	prefix := ""
	if c.name != "" {
		prefix = c.name + ": "
	}
	return &usageError{msg: prefix + fmt.Sprintf(format, a...) + " (" + c.seeHelp() + ")"}
}

// nearestFlag is the verb's shown flag nearest to a mistyped long name
// (--memroy: memory), "" for none.
func (c *command) nearestFlag(name string) string {
	var names []string
	c.flags.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	return policy.Nearest(name, names)
}

// flagError words pflag's errors for a person: the flag as they type it,
// what a value looks like, where to read more.
func (c *command) flagError(err error) error {
	var notExist *pflag.NotExistError
	var needsValue *pflag.ValueRequiredError
	var invalid *pflag.InvalidValueError
	var syntax *pflag.InvalidSyntaxError
	switch {
	case errors.As(err, &notExist):
		name := "--" + notExist.GetSpecifiedName()
		if s := notExist.GetSpecifiedShortnames(); s != "" {
			name = "-" + notExist.GetSpecifiedName()
		} else if near := c.nearestFlag(notExist.GetSpecifiedName()); near != "" {
			return c.usageErr("unknown flag %s; did you mean --%s?", name, near)
		}
		return c.usageErr("unknown flag %s", name)
	case errors.As(err, &needsValue):
		what, eg, _ := valueWhat(needsValue.GetFlag())
		return c.usageErr("--%s needs %s%s", needsValue.GetFlag().Name, what, eg)
	case errors.As(err, &invalid):
		f := invalid.GetFlag()
		if errors.Is(err, errDashValue) {
			// `jail --audit -- cmd`: pflag gave the flag "--" as its value,
			// and the command's words were then taken for a verb.
			// A default in words says what leaving the flag out does: the
			// trail of a bare --audit is written anyway.
			what, eg, def := valueWhat(f)
			if def != "" && def != "none" {
				eg += "; without it: " + def
			}
			return c.usageErr("--%s needs %s before the --%s", f.Name, what, eg)
		}
		var ov interface {
			OptionValue() (string, string, string)
		}
		if errors.As(err, &ov) {
			_, _, reason := ov.OptionValue()
			return &usageError{msg: fmt.Sprintf("--%s %s: %s", f.Name, invalid.GetValue(), reason)}
		}
		return c.usageErr("--%s %s: %v", f.Name, invalid.GetValue(), errors.Unwrap(err))
	case errors.As(err, &syntax):
		return c.usageErr("bad flag syntax %s", syntax.GetSpecifiedFlag())
	}
	return c.usageErr("%v", err)
}

// valueWhat says what flag f's value is ("SIZE"), an example where the
// option has one (", e.g. --memory 2G") and its default in words.
func valueWhat(f *pflag.Flag) (what, eg, def string) {
	what = "a value"
	if o := policy.Lookup(f.Name); o != nil && o.Placeholder != "" {
		what, def = o.Placeholder, o.DefaultText
		if o.Example != "" {
			eg = ", e.g. --" + f.Name + " " + o.Example
		}
	} else if name, _ := pflag.UnquoteUsage(f); name != "" {
		what = name
	}
	return what, eg, def
}

// errDashValue is a value flag given "--" as its value: the user left the
// value out before the command.
var errDashValue = errors.New("the value is --")

// dashValue wraps a pflag.Value of a flag that takes one, refusing "--"
// (errDashValue).
type dashValue struct{ pflag.Value }

func (v dashValue) Set(s string) error {
	if s == "--" {
		return errDashValue
	}
	return v.Value.Set(s)
}

// optionValue is the pflag.Value of one policy option: it checks the value
// at once (so the error is about the flag) and records it, in order, in the
// flag layer for package config.
type optionValue struct {
	opt     *policy.Option
	layer   *[]config.Setting
	scratch policy.Policy
}

func (v *optionValue) Set(s string) error {
	if s == "--" && v.opt.Kind != policy.Bool {
		return errDashValue
	}
	if err := v.opt.Set(&v.scratch, s); err != nil {
		return err
	}
	*v.layer = append(*v.layer, config.Setting{Option: v.opt, Value: s,
		Source: config.Source{Kind: config.FromFlag, Flag: "--" + v.opt.Name, Raw: s}})
	return nil
}

func (v *optionValue) String() string { return "" }

func (v *optionValue) Type() string {
	if v.opt.Kind == policy.Bool {
		return "bool"
	}
	return v.opt.Placeholder
}

// addOptions registers every policy option on fs, recording into layer.
func addOptions(fs *pflag.FlagSet, layer *[]config.Setting) {
	for i := range policy.Options {
		o := &policy.Options[i]
		f := fs.VarPF(&optionValue{opt: o, layer: layer}, o.Name, o.Short, o.Help)
		if o.Kind == policy.Bool {
			f.NoOptDefVal = "true"
		}
		f.Hidden = o.Hidden
	}
}
