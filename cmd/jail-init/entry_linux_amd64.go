package main

import (
	_ "github.com/jail-sandbox/jail/prefault" // the entry's jail_prefault_entry

	"github.com/jail-sandbox/jail/ns"
)

// entry is the program's ELF entry when linked with -ldflags=-E=main.entry
// (make build does, on amd64): entry_linux_amd64.s.
func entry()

// entryPresets is 1 when the entry, before the Go runtime, emptied the
// bounding set, set and locked the securebits and set no_new_privs on
// init's one thread (init started without its execve): written by the
// entry's assembly only, after all three succeeded.
var entryPresets uint32

// presetWalls tells package ns what the entry raised already, for init's
// privilege drop (ns.EntryPreset).
func presetWalls() {
	if entryPresets == 1 {
		ns.EntryPreset()
	}
}
