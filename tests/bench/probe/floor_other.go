//go:build !linux

package main

import "errors"

func allowAllFilter() error { return errors.New("seccomp is Linux-only") }
