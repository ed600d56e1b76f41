// Command leaninit is a measurement for tests/bench, not a part of jail: a
// program that links what the sandbox's init needs and nothing else (ns,
// landlock, seccomp, nsnet, encoding/json, x/sys/unix), with the functions
// init's hooks call kept in the binary, and that returns from main at once.
// The procstart section compares its start with `jail version`'s: what a
// separate, lean init program would save each run, today (see "Would a lean
// init program pay?" in docs/performance.md).
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/jail-sandbox/jail/landlock"
	"github.com/jail-sandbox/jail/netproxy/nsnet"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/seccomp"
)

// keep holds what sandbox/init.go's hooks call, so that the linker keeps
// it as it would in a real lean init.
var keep = []any{ns.InitMain, landlock.Rules.Apply, seccomp.Install, seccomp.ParsePolicy,
	nsnet.Setup, nsnet.SetupNone, nsnet.DialInSandbox, json.Unmarshal}

func main() {
	if len(os.Args) > 1 { // never, in the bench: keeps keep reachable
		fmt.Println(keep...)
	}
}
