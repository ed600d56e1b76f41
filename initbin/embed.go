//go:build jail_leaninit

package initbin

import _ "embed" // the lean init program, built by make build

//go:embed jail-init
var program string

//go:embed jail-init.sum
var sum string
