// Package prefault maps a Go program's code and read-only data into its page
// tables with one system call at the program's ELF entry, before the Go
// runtime starts, instead of one page fault for every 64 KiB the program
// first touches (issue 16: on a virtual machine a fault costs 10-30 us, and
// jail's supervisor took ~150 of them in its code and read-only data on
// every start, ~40 more in the lean init).
//
// A program opts in by importing this package and starting at its entry,
// the global assembly symbol jail_prefault_entry: linked with
// -ldflags=-E=jail_prefault_entry (jail, by make build), or jumped to from
// an entry of the program's own (the lean init's, on its ordinary path). The
// entry calls madvise(MADV_POPULATE_READ) (Linux 5.14) over the text and
// over the read-only data with the pclntab, then jumps to the Go runtime's
// own entry with the stack and the registers as the kernel left them. Before
// it populates, it gives both mappings MADV_HUGEPAGE (the code's from the
// 2 MiB boundary at its start, the read-only data's up to its last one; never
// the data or bss): where the page cache lacks the file, the faults then read
// it in 2 MiB folios, which this start and every later one map by one
// page-table entry each instead of 512. Where
// the kernel refuses the advice (EINVAL before 5.14) nothing is mapped ahead
// and the program faults its pages in as before. The pages are the file's
// page cache, shared and read-only: nothing else differs. Result says what
// happened.
//
// The entry also makes the program's pointer-holding data and bss writable
// ahead (madvise MADV_POPULATE_WRITE: each page was a copy-on-write or a
// fresh-page fault from the runtime's first steps; WriteResult), and the
// package's init a window of the heap around its first object, sized by the
// program's link (heap_linux_amd64.go; HeapWindow, More). Pages made ahead
// are memory, not behaviour: a few hundred KiB to a few MiB more resident.
// amd64 only; elsewhere the package is empty and Result reports that the
// entry did not run.
package prefault
