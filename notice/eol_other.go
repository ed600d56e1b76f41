//go:build !linux

package notice

import "io"

func lineEnding(io.Writer) func() string { return func() string { return "\n" } }
