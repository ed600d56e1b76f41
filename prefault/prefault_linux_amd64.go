package prefault

import "syscall"

// entryResult is written by the entry (prefault_linux_amd64.s) before the Go
// runtime starts: [0] is 1 once it ran, [1] and [2] are madvise's results
// (0 or -errno) for the text and for the read-only data, [3] and [4] those
// of the huge-page advice (an advice only: Result leaves them out), [5]
// and [6] those of the data's and the bss's populate (WriteResult).
var entryResult [7]int64

// Result says whether the program started at the entry and, if it did,
// the kernel's refusal of the advice (nil: its code and read-only data were
// mapped ahead).
func Result() (entered bool, err error) { return entryErr(entryResult[1:3]) }

// WriteResult says whether the program's writable data and bss were made
// ahead at the entry (nil) or why not; false when it did not start there.
func WriteResult() (entered bool, err error) { return entryErr(entryResult[5:7]) }

// entryErr is whether the entry ran and the first refusal among results.
func entryErr(results []int64) (entered bool, err error) {
	if entryResult[0] == 0 {
		return false, nil
	}
	for _, r := range results {
		if r < 0 {
			return true, syscall.Errno(-r)
		}
	}
	return true, nil
}
