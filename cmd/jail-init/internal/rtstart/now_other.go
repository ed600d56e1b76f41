//go:build !(linux && amd64)

package rtstart

func now() int64 { return 0 }
