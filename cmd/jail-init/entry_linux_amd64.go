package main

import _ "github.com/jail-sandbox/jail/prefault" // the entry's jail_prefault_entry

// entry is the program's ELF entry when linked with -ldflags=-E=main.entry
// (make build does, on amd64): entry_linux_amd64.s.
func entry()
