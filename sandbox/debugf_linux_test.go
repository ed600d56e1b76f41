package sandbox

import (
	"bytes"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/notice"
	"github.com/jail-sandbox/jail/policy"
)

// TestDebugfOnlyWhenShown: a debug notice (-v only, never recorded) is
// neither shown nor spelled (config.SpellFlags, whose first use compiles
// its patterns) without -v; with -v it is both. Two of them come at every
// start.
func TestDebugfOnlyWhenShown(t *testing.T) {
	saved := Spell
	defer func() { Spell = saved }()
	for _, verbose := range []bool{false, true} {
		spelled := 0
		Spell = func(s string) string { spelled++; return s }
		var buf bytes.Buffer
		r := &runner{pol: &policy.Policy{Verbose: verbose}}
		r.notes = notice.New(&buf, notice.Options{Verbose: verbose})
		r.debugf("limits: cgroup %s", "v1")
		shown := strings.Contains(buf.String(), "limits: cgroup v1")
		if shown != verbose || (spelled > 0) != verbose {
			t.Errorf("verbose %v: shown %v, spelled %d times", verbose, shown, spelled)
		}
	}
}
