//go:build jail_leaninit

package initbin

import _ "embed" // the lean init program, built by make build

// program is a []byte, not a string, for where the linker puts it: a
// string's bytes go to the read-only data, which package prefault maps in
// full at every start of jail (4 MB that only the copy's extraction reads,
// a quarter of what it would map); a []byte's go to the writable data,
// which it leaves to faults.
//
//go:embed jail-init
var program []byte

//go:embed jail-init.sum
var sum string

// entry is "main.entry" when make build linked the program with its own
// ELF entry (amd64: -ldflags=-E=main.entry), empty otherwise.
//
//go:embed jail-init.entry
var entry string
