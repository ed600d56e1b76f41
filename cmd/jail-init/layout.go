package main

// rodataPad is empty but where make build sets it (-X, the count that
// internal/rodatapad prints): its bytes lengthen the lean init's read-only
// data so that its segment's mapping holds a whole 2 MiB-aligned range,
// which each start of init then maps by one page-table entry (package
// prefault's populate of the copy, which package initbin writes in 2 MiB
// folios: docs/performance.md, initfolio rows). The linker puts a -X
// string's bytes in the read-only data.
var rodataPad string

// padLen reads rodataPad, so that the linker keeps the variable and its -X
// bytes in the program (an unreferenced variable is dropped, and with it
// the padding). Not inlined: the read stays whatever its caller does with
// the result.
//
//go:noinline
func padLen() int { return len(rodataPad) }
