// Command jail-init is the lean init program: the sandbox's init (ns.InitMain
// with package inithooks' hooks), and nothing else of jail. It links about
// half of jail's packages and none of the proxy's HTTP and TLS code, so it
// reaches main sooner than a re-exec of jail's own binary would.
//
// It is not installed on its own: `make build` builds it first and embeds it
// in jail's binary (package initbin), which keeps one copy of it in jail's
// state directory and execs that as init. A jail built without it (plain
// `go build ./cmd/jail`) re-execs itself as init, as before.
package main

import "github.com/jail-sandbox/jail/sandbox/inithooks"

func main() { inithooks.Main() }
