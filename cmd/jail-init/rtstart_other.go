//go:build !linux

package main

// traceRuntime: init's trace is Linux's only.
func traceRuntime() {}
