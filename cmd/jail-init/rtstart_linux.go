package main

import (
	"github.com/jail-sandbox/jail/cmd/jail-init/internal/rtstart"
	"github.com/jail-sandbox/jail/ns"
)

// traceRuntime gives init's trace when the Go runtime had started (package
// rtstart's stamp, 0 where it is not read): JAIL_TRACE's "init runtime".
func traceRuntime() { ns.InitRuntimeStarted(rtstart.Mono) }
