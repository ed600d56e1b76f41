package main

// rodataPad holds padding (pad.go): empty but where make build replaces
// that file with one whose string is as long as internal/rodatapad says.
// Its bytes lengthen the lean init's read-only data so that its segment's
// mapping holds a whole 2 MiB-aligned range, which each start of init then
// maps by one page-table entry (package prefault's populate of the copy,
// which package initbin writes in 2 MiB folios: docs/performance.md,
// initfolio rows and session 34). The compiler puts a string constant's
// bytes in the read-only data, and a variable set to it needs no code at
// start.
var rodataPad = padding

// padLen reads rodataPad, so that the linker keeps the variable and its
// bytes in the program (an unreferenced variable is dropped, and with it
// the padding). Not inlined: the read stays whatever its caller does with
// the result.
//
//go:noinline
func padLen() int { return len(rodataPad) }
