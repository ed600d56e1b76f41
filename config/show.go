package config

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/jail-sandbox/jail/internal/termsafe"
	"github.com/jail-sandbox/jail/policy"
)

// Show writes p as a config file: every option in help order under its
// group, what differs from the default as a setting, the rest as a
// commented-out default, each with its help line. Loading the output back
// (Parse) gives the same policy: the round trip is tested. header lines are
// written first, as comments.
func Show(w io.Writer, p *policy.Policy, header []string) error {
	var b strings.Builder
	b.WriteString("# jail configuration (jail config show): the effective options.\n")
	b.WriteString("# Save as ~/.config/jail/config.toml, or as .jail.toml in a project (then: jail trust).\n")
	b.WriteString("# Lines starting with \"# key =\" are defaults; the key is the flag without --.\n")
	for _, h := range header {
		// A header quotes files' bytes (a note naming a settings file's
		// key, a file the agent may have written): inert on a terminal
		// (review14b).
		b.WriteString("# " + termsafe.Escape(h) + "\n")
	}
	fmt.Fprintf(&b, "\nversion = %d\n", Version)
	for _, g := range policy.Groups {
		fmt.Fprintf(&b, "\n# %s\n", g)
		for i := range policy.Options {
			o := &policy.Options[i]
			if o.Group != g || o.Name == "workspace" {
				continue
			}
			def := o.IsDefault(p)
			if o.Hidden && def {
				continue
			}
			fmt.Fprintf(&b, "\n# %s\n", o.Help)
			line := o.Name + " = " + tomlValue(o, o.Format(p))
			if def {
				line = "# " + line
				if o.DefaultText != "" {
					line += "  # default: " + o.DefaultText
				}
			}
			b.WriteString(line + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// tomlValue renders the option's text values as a TOML value of its kind.
func tomlValue(o *policy.Option, vals []string) string {
	switch o.Kind {
	case policy.Bool, policy.Int, policy.Uint, policy.Float:
		return vals[0]
	case policy.List:
		q := make([]string, len(vals))
		for i, v := range vals {
			q[i] = quote(v)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	return quote(vals[0])
}

// quote writes a TOML basic string: JSON's escapes are a subset of TOML's.
func quote(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	// TOML wants DEL escaped too; JSON leaves it raw, and C1 and bidi
	// controls as well, which act on a terminal (U+009B is CSI to one
	// reading 8-bit controls): \uXXXX for each, TOML's escape too.
	out := strings.TrimSuffix(b.String(), "\n")
	if !strings.ContainsFunc(out, termsafe.Control) {
		return out
	}
	var e strings.Builder
	for _, r := range out {
		if termsafe.Control(r) {
			fmt.Fprintf(&e, `\u%04x`, r)
			continue
		}
		e.WriteRune(r)
	}
	return e.String()
}
