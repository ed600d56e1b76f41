package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/netproxy"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/seccomp"
	"github.com/jail-sandbox/jail/statedir"
)

// Explain renders an error for the user: the CLI sets it to put each value's
// source in front (package config); the default names options by key.
var Explain = func(err error) string { return Spell(err.Error()) }

// Spell renders the `option` references of a message or notice (see
// policy.RefPattern) as its reader types them: the CLI sets it to spell
// flags; the default writes the bare key.
var Spell = func(s string) string {
	return policy.RefPattern().ReplaceAllString(s, "$1")
}

// Check runs every check of the user's values that needs no sandbox and no
// walk of the file trees: the options (policy.Check), the paths (they exist,
// none makes the host writable, no conflict with a read-only workspace), deny
// patterns and their conflicts with the visible paths, network rules,
// published ports, block-command patterns and the seccomp file. Run does the
// same checks again; Check lets a caller that knows where each value came
// from report a mistake with its source before anything starts.
//
// Errors are the packages' own types, each naming the option and the value
// (see policy.FieldError): *policy.FieldError, *policy.ConflictError,
// *fsrules.Error, *netproxy.ParseError (joined, one per bad rule),
// *seccomp.PatternError.
func Check(p *policy.Policy, env []string) error {
	if err := p.Check(); err != nil {
		return err
	}
	home := lookupEnv(env, "HOME")
	if r, err := filepath.EvalSymlinks(home); err == nil && home != "" {
		home = r
	} else {
		home = ""
	}
	ws, _, _, err := workspaceOf(p, home)
	if err != nil {
		return err
	}
	binds, raws, err := resolveRoots(p, ws)
	if err != nil {
		return err
	}
	if sd, err := statedir.From(func(k string) string { return lookupEnv(env, k) }); err == nil {
		if err := inStateDir(binds, resolveExisting(sd), raws); err != nil {
			return err
		}
	}
	if rd, ok := statedir.RuntimeFrom(func(k string) string { return lookupEnv(env, k) }); ok {
		if err := inJailDir(binds, resolveExisting(rd), "runtime directory (running sandboxes' control sockets)", raws); err != nil {
			return err
		}
	}
	in := fsrules.Input{Workspace: ws, Home: home, Deny: p.Deny, NoDefaultDeny: p.NoDefaultDeny, AllowGitConfig: p.AllowGitConfig}
	for _, b := range binds {
		if b.Kind == ns.KindBind {
			in.Writable = append(in.Writable, b.Path)
		} else {
			in.Readable = append(in.Readable, b.Path)
		}
	}
	if err := fsrules.Validate(in); err != nil {
		return asGiven(err, raws)
	}
	if p.Net == policy.NetAllow {
		if _, err := buildNetPolicy(p); err != nil {
			return err
		}
	}
	for _, spec := range append(slices.Clip(p.Publish), p.PublishIfFree...) {
		if _, err := netproxy.ParsePublish(spec); err != nil {
			return invalid(err)
		}
	}
	if _, err := seccomp.NewGuard(p.BlockCommand, false, ws, home); err != nil {
		return invalid(err)
	}
	switch {
	case p.SeccompFile != "":
		data, err := os.ReadFile(p.SeccompFile)
		if err != nil {
			return &policy.FieldError{Key: "seccomp", Value: p.SeccompFile, Reason: err.Error()}
		}
		if _, err := seccomp.ParsePolicy(p.SeccompFile, data); err != nil {
			return &policy.FieldError{Key: "seccomp", Value: p.SeccompFile, Reason: err.Error()}
		}
	case p.SeccompReplace:
		return &policy.FieldError{Key: "seccomp-replace", Reason: "needs `seccomp` FILE: the filter to use instead"}
	}
	return nil
}

// buildNetPolicy parses the network rules; errors name every bad rule.
func buildNetPolicy(p *policy.Policy) (*netproxy.Policy, error) {
	cfg, err := netproxy.BuildConfig(netproxy.Flags{
		AllowDomains: p.AllowDomain, DenyDomains: p.DenyDomain, AllowIPs: p.AllowIP,
		AddHosts: p.AddHost, HostPorts: p.AllowHostPort,
	})
	if err != nil {
		return nil, invalid(err)
	}
	return netproxy.NewPolicy(cfg)
}

// asGiven turns fsrules' error about a resolved path into one about the
// value as the user gave it, and a conflict with a user's deny pattern into
// a conflict of the two options, so each side can be traced to its source.
func asGiven(err error, raws map[string]string) error {
	var fe *fsrules.Error
	if !errors.As(err, &fe) {
		return invalid(err)
	}
	raw := fe.Value
	if r, ok := raws[fe.Value]; ok && r != "" {
		raw = r
	}
	if pat, ok := strings.CutPrefix(fe.Rule, "deny "); ok {
		return &policy.ConflictError{Key1: fe.Key, Value1: raw, Key2: "deny", Value2: pat,
			Reason: "it lies inside the denied path and deny wins: remove one of the two"}
	}
	_, _, reason := fe.OptionValue()
	return &policy.FieldError{Key: fe.Key, Value: raw, Reason: reason}
}
