//go:build !linux || !amd64

package prefault

// Result says whether the program started at the entry: never here (the
// entry is amd64 Linux only).
func Result() (entered bool, err error) { return false, nil }

// HeapWindow says which part of the heap was made ahead at the start: none
// here.
func HeapWindow() (start, length uintptr, err error) { return 0, 0, nil }

// WriteResult says whether the program's data and bss were made ahead:
// never here.
func WriteResult() (entered bool, err error) { return false, nil }

// More makes the rest of the heap's window: nothing here.
func More() {}
