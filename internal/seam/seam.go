// Package seam holds the hooks tests set to hold a race's window open.
// Nothing but a test sets them (they are plain variables of the binary:
// no flag, file or environment variable of jail's reaches them); unset,
// each costs one nil check where it is called.
package seam

// MaskWatch, when set, runs in the supervisor after init has its spec
// (and mounts the sandbox's masks) and before the mask watch is armed,
// with init's pid: a test replaces a masked file there, as the host may
// at that moment.
var MaskWatch func(initPid int)
