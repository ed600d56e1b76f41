//go:build !jail_leaninit

package initbin

// A plain `go build` embeds no lean init: Open says so.
var (
	program string
	sum     string
	entry   string
)
