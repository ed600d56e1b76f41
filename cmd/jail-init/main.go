// Command jail-init is the lean init program: the sandbox's init (ns.InitMain
// with package inithooks' hooks), and nothing else of jail. It links about
// half of jail's packages and none of the proxy's HTTP and TLS code, so it
// reaches main sooner than a re-exec of jail's own binary would.
//
// It is not installed on its own: `make build` builds it first and embeds it
// in jail's binary (package initbin), which keeps one copy of it in jail's
// state directory and execs that as init. A jail built without it (plain
// `go build ./cmd/jail`) re-execs itself as init, as before.
//
// On amd64, make build links it with an entry of its own (main.entry, in
// assembly) that runs before the Go runtime: exec'd with argv[0]
// ns.EntryArg0, it makes init's namespaces and clones init itself (which
// execs this program again, as init, or, started by root, goes on as init
// without the exec), so that the supervisor starts init
// without a fork of its own (see ns.Config.Entry).
package main

import (
	"os"

	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/sandbox/inithooks"
)

func main() {
	if len(os.Args) > 0 && os.Args[0] == ns.EntryArg0 {
		// The entry did not run (a build without -E main.entry, or another
		// arch): this is the supervisor's direct child, in no namespace of
		// its own, with the user's credentials. Nothing of init may run
		// here; the supervisor sees it exit and starts init the old way
		// (its trace says why). Not a word on the user's terminal: the
		// run goes on as before.
		os.Exit(2)
	}
	traceRuntime()
	_ = padLen()
	presetWalls()
	inithooks.Main()
}
