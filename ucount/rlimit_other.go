//go:build !linux

package ucount

import "errors"

const rlimInfinity = ^uint64(0)

var rlimits []struct {
	res  int
	name string
	why  string
}

func getrlimit(int) (uint64, error) { return 0, errors.New("ucount: Linux only") }
