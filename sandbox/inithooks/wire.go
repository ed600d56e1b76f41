package inithooks

import (
	"fmt"

	"github.com/jail-sandbox/jail/landlock"
	"github.com/jail-sandbox/jail/ns"
)

// The hooks' configurations travel in ns's wire format (ns.HookWriter),
// not JSON: init's first encoding/json use cost 1.5 to 6 ms of its start,
// between its exec and the agent. A new field of a configuration needs its
// tag here: TestHookWireCarriesEveryField fails on one that is lost, and
// FuzzHookWireMatchesJSON holds each to what JSON carried.

// Tags of NetConfig.
const (
	tNetMode = iota + 1
	tNetFake
	tNetSubnet
	tNetFallback
	tNetNoProxy
	tNetHostPorts
)

func (c NetConfig) Wire() []byte {
	w := ns.NewHookWriter()
	w.String(tNetMode, c.Mode)
	w.String(tNetFake, c.Fake)
	w.String(tNetSubnet, c.Subnet)
	w.Bool(tNetFallback, c.Fallback)
	w.Strings(tNetNoProxy, c.NoProxy)
	w.Uint16s(tNetHostPorts, c.HostPorts)
	return w.Done()
}

func (c *NetConfig) Unwire(b []byte) error {
	err := ns.ReadHook(b, func(t byte, r ns.HookReader) bool {
		switch t {
		case tNetMode:
			c.Mode = r.String()
		case tNetFake:
			c.Fake = r.String()
		case tNetSubnet:
			c.Subnet = r.String()
		case tNetFallback:
			c.Fallback = true
		case tNetNoProxy:
			c.NoProxy = r.Strings()
		case tNetHostPorts:
			c.HostPorts = r.Uint16s()
		default:
			return false
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("network configuration: %w", err)
	}
	return nil
}

// Tags of SeccompHook.
const (
	tSecAllowPtrace = iota + 1
	tSecReplace
	tSecExecNotify
	tSecExtra
	tSecExtraName
	tSecSimulateBusy
	tSecRequireNotify
	tSecNoInet
	tSecNoUnix
)

func (h SeccompHook) Wire() []byte {
	w := ns.NewHookWriter()
	w.Bool(tSecAllowPtrace, h.AllowPtrace)
	w.Bool(tSecReplace, h.Replace)
	w.Bool(tSecExecNotify, h.ExecNotify)
	w.Bytes(tSecExtra, h.Extra)
	w.String(tSecExtraName, h.ExtraName)
	w.Bool(tSecSimulateBusy, h.SimulateBusy)
	w.Bool(tSecRequireNotify, h.RequireNotify)
	w.Bool(tSecNoInet, h.NoInet)
	w.Bool(tSecNoUnix, h.NoUnix)
	return w.Done()
}

func (h *SeccompHook) Unwire(b []byte) error {
	err := ns.ReadHook(b, func(t byte, r ns.HookReader) bool {
		switch t {
		case tSecAllowPtrace:
			h.AllowPtrace = true
		case tSecReplace:
			h.Replace = true
		case tSecExecNotify:
			h.ExecNotify = true
		case tSecExtra:
			h.Extra = r.Bytes()
		case tSecExtraName:
			h.ExtraName = r.String()
		case tSecSimulateBusy:
			h.SimulateBusy = true
		case tSecRequireNotify:
			h.RequireNotify = true
		case tSecNoInet:
			h.NoInet = true
		case tSecNoUnix:
			h.NoUnix = true
		default:
			return false
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("seccomp configuration: %w", err)
	}
	return nil
}

// Tags of landlock.Rules.
const (
	tLLReadExec = iota + 1
	tLLReadOnly
	tLLReadWrite
	tLLDevIoctl
	tLLDenyTCP
	tLLConnectTCP
	tLLPinRoot
	tLLScope
	tLLRequire
	tLLMaxABI
)

func LandlockWire(r landlock.Rules) []byte {
	w := ns.NewHookWriter()
	w.Strings(tLLReadExec, r.ReadExec)
	w.Strings(tLLReadOnly, r.ReadOnly)
	w.Strings(tLLReadWrite, r.ReadWrite)
	w.Strings(tLLDevIoctl, r.DevIoctl)
	w.Bool(tLLDenyTCP, r.DenyTCP)
	w.Uint16s(tLLConnectTCP, r.ConnectTCP)
	w.Bool(tLLPinRoot, r.PinRoot)
	w.Bool(tLLScope, r.Scope)
	w.Int(tLLRequire, r.Require)
	w.Int(tLLMaxABI, r.MaxABI)
	return w.Done()
}

func LandlockUnwire(b []byte, rules *landlock.Rules) error {
	err := ns.ReadHook(b, func(t byte, r ns.HookReader) bool {
		switch t {
		case tLLReadExec:
			rules.ReadExec = r.Strings()
		case tLLReadOnly:
			rules.ReadOnly = r.Strings()
		case tLLReadWrite:
			rules.ReadWrite = r.Strings()
		case tLLDevIoctl:
			rules.DevIoctl = r.Strings()
		case tLLDenyTCP:
			rules.DenyTCP = true
		case tLLConnectTCP:
			rules.ConnectTCP = r.Uint16s()
		case tLLPinRoot:
			rules.PinRoot = true
		case tLLScope:
			rules.Scope = true
		case tLLRequire:
			rules.Require = r.Int()
		case tLLMaxABI:
			rules.MaxABI = r.Int()
		default:
			return false
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("landlock configuration: %w", err)
	}
	return nil
}
