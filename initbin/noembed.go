//go:build !jail_leaninit

package initbin

// A plain `go build` embeds no lean init: Open says so.
var (
	program []byte
	sum     string
	entry   string
)
