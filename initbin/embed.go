//go:build jail_leaninit

package initbin

import _ "embed" // the lean init program, built by make build

//go:embed jail-init
var program string

//go:embed jail-init.sum
var sum string

// entry is "main.entry" when make build linked the program with its own
// ELF entry (amd64: -ldflags=-E=main.entry), empty otherwise.
//
//go:embed jail-init.entry
var entry string
