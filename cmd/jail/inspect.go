package main

import (
	"encoding/json"

	"github.com/jail-sandbox/jail"
)

// InspectOptions is jail inspect.
type InspectOptions struct {
	IO   *iostreams
	Name string
}

func newInspectCmd(f *factory, runF func(*InspectOptions) error) *command {
	opts := &InspectOptions{IO: f.IO}
	c := newCommand(f, "inspect", "jail inspect NAME", "print a running sandbox's policy and live facts as JSON")
	c.args = c.oneSandbox
	c.run = func(args []string) error {
		opts.Name = args[0]
		if runF != nil {
			return runF(opts)
		}
		sb, err := jail.Open(opts.Name)
		if err != nil {
			return err
		}
		info, err := sb.Inspect()
		if err != nil {
			return err
		}
		enc := json.NewEncoder(opts.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	}
	return c
}

// allowTerminal reads the allow-terminal option out of inspect's policy.
func allowTerminal(raw json.RawMessage) []string {
	var p struct {
		AllowTerminal []string `json:"allow_terminal"`
	}
	_ = json.Unmarshal(raw, &p)
	return p.AllowTerminal
}
