package sandbox

import (
	"fmt"
	"os"
	"strings"

	"github.com/jail-sandbox/jail/fsrules"
)

// reportCreated names, at exit, the protected paths that did not exist at
// start and exist now (issue 10, class 3: ~/.ssh/authorized_keys when ~/.ssh
// was absent, a new .zshenv in a writable home). Nothing could be mounted
// over them without creating them on the host, so the agent could write
// them; the user's shells and tools may load them later, outside the
// sandbox. jail does not remove them (they may be the agent's legitimate
// work): it says which they are, so the user looks before running anything.
func (r *runner) reportCreated() {
	if r.plan == nil {
		return
	}
	homes := userHomes(r.plan.Home)
	var made []string
	for _, a := range r.plan.Absent {
		// A new .env or key in a project is the agent's work and runs
		// nothing; one in a home (~/.npmrc) is configuration tools load.
		if a.Kind == fsrules.Hide && !a.Dir && enclosing(a.Path, homes) == "" {
			continue
		}
		if _, err := os.Lstat(a.Path); err == nil {
			made = append(made, a.Path)
		}
	}
	if len(made) == 0 {
		return
	}
	more := ""
	if len(made) > 10 {
		more = fmt.Sprintf(" and %d more (jail --dry-run lists them)", len(made)-10)
		made = made[:10]
	}
	r.notef("created inside the sandbox, unprotected because they did not exist at start (your shells and tools may load them; check them before you run anything): %s%s", strings.Join(made, " "), more)
}
