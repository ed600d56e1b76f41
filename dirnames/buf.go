package dirnames

import "sync"

// direntBufs are the getdents(2) buffers of jail's raw directory readers
// (the directory cache's reads, fsrules' link walk, the supervisor's
// symlink listing), shared and kept for the next listing: a 32 KiB slice
// made in each reader would be on its caller's stack, zeroed at every call
// and, the first time, faulted in (18-30 us a page on a paravirtualized VM)
// with the stack grown and copied for it. Only the bytes a getdents call
// returned are ever read from one.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// Buffer returns a getdents(2) buffer of 32 KiB for one reader at a time;
// give it back with Release when the listing is done.
func Buffer() *[]byte { return direntBufs.Get().(*[]byte) }

// Release returns a buffer Buffer gave.
func Release(b *[]byte) { direntBufs.Put(b) }
