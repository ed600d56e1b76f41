// Package proctest finds host processes by their command line, for the
// tests of kills (the root package's Cmd.Signal, tests/'s jail exec): what
// a kill must end is found by the argv it was started with. Stop stops a
// process whole (every thread), for the tests that hold jail's supervisor
// or init still.
package proctest

import (
	"os"
	"strconv"
	"strings"

	"github.com/jail-sandbox/jail/procstat"
)

// Pids lists the live host pids whose command line is argv exactly. A
// zombie (killed, not yet reaped) is left out: its kill is done.
func Pids(argv ...string) []int {
	want := strings.Join(argv, "\x00") + "\x00"
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err != nil || string(b) != want {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if st, err := procstat.Parse(b); err == nil && st.State == 'Z' {
				continue
			}
		}
		out = append(out, pid)
	}
	return out
}
