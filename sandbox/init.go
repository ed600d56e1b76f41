package sandbox

import "jail/ns"

// IsInit tells main() that this process is a sandbox's init.
func IsInit() bool { return ns.IsInit() }

// InitMain runs the sandbox's init with every feature hook registered.
func InitMain() { ns.InitMain(initHooks()) }

func initHooks() ns.Hooks { return ns.Hooks{} }
