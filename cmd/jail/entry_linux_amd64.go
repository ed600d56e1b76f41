package main

// make build links jail with -ldflags=-E=jail_prefault_entry (amd64): its
// code and read-only data are mapped in one system call before the Go
// runtime starts.
import _ "github.com/jail-sandbox/jail/prefault"
