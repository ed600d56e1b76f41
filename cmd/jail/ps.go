package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/jail-sandbox/jail"
	"github.com/jail-sandbox/jail/cgroup"
)

// PSOptions is jail ps.
type PSOptions struct{ IO *iostreams }

func newPSCmd(f *factory, runF func(*PSOptions) error) *command {
	opts := &PSOptions{IO: f.IO}
	c := newCommand(f, "ps", "jail ps", "list the running sandboxes")
	c.long = "NAME is the session's name (jail run --name), else its id; MEMORY and PIDS are in use now."
	c.run = func([]string) error {
		if runF != nil {
			return runF(opts)
		}
		list, err := jail.Running()
		if err != nil {
			return err
		}
		w := opts.IO.Out
		fmt.Fprintf(w, "%-20s %-8s %-9s %-8s %-5s %-6s %-8s %s\n", "NAME", "PID", "AGE", "MEMORY", "PIDS", "NET", "STATE", "COMMAND")
		for _, in := range list {
			name := in.Name
			if name == "" {
				name = in.ID
			}
			age := "?"
			if t, err := time.Parse(time.RFC3339, in.Started); err == nil {
				age = time.Since(t).Round(time.Second).String()
			}
			cmd := strings.Join(in.Command, " ")
			if cmd == "" {
				cmd = "(idle)"
			}
			fmt.Fprintf(w, "%-20s %-8d %-9s %-8s %-5d %-6s %-8s %s\n", name, in.Pid, age, cgroup.FormatSize(in.MemoryBytes), in.Pids, in.Net, in.State, cmd)
		}
		return nil
	}
	return c
}
