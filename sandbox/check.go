package sandbox

import (
	"errors"
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
	_, err := check(p, env)
	return err
}

// checked is what check built on its way (the compiled file rules, the
// network policy, the exec guard) and the values it built each from. The
// plan and the run take each only for the very same values, and build
// their own otherwise: a start made them twice (check, then plan and run;
// 3.5% of a start's CPU, issue 16). A nil *checked has nothing.
type checked struct {
	roots *resolved      // the policy's paths resolved, with their inputs
	rules *fsrules.Rules // compared with the plan's values by fsrules

	net      *netproxy.Policy
	netFlags netproxy.Flags // what net was built from

	guard   *seccomp.Guard
	guardIn guardInput // what guard was built from
}

// guardInput are NewGuard's arguments.
type guardInput struct {
	patterns        []string
	defaults        bool
	workspace, home string
}

func (g guardInput) equal(o guardInput) bool {
	return g.defaults == o.defaults && g.workspace == o.workspace && g.home == o.home && slices.Equal(g.patterns, o.patterns)
}

// fsRules returns the compiled file rules (nil: none), for
// fsrules.Input.Rules, which uses them only for the values they were
// compiled from.
func (c *checked) fsRules() *fsrules.Rules {
	if c == nil {
		return nil
	}
	return c.rules
}

// netPolicy returns p's network policy: the checked one when it was built
// from p's values as they are now, else a new one.
func (c *checked) netPolicy(p *policy.Policy) (*netproxy.Policy, error) {
	if c != nil && c.net != nil && netFlagsEqual(c.netFlags, netFlags(p)) {
		return c.net, nil
	}
	return buildNetPolicy(p)
}

// newGuard returns seccomp.NewGuard(patterns, defaults, workspace, home):
// the checked guard when it was built from these very values, else a new
// one.
func (c *checked) newGuard(patterns []string, defaults bool, workspace, home string) (*seccomp.Guard, error) {
	in := guardInput{patterns, defaults, workspace, home}
	if c != nil && c.guard != nil && c.guardIn.equal(in) {
		return c.guard, nil
	}
	return seccomp.NewGuard(patterns, defaults, workspace, home)
}

// check is Check, returning what it built.
func check(p *policy.Policy, env []string) (*checked, error) {
	if err := expandSSHAgent(p, env); err != nil {
		return nil, err
	}
	if err := p.Check(); err != nil {
		return nil, err
	}
	res, err := resolvePolicy(p, env)
	if err != nil {
		return nil, err
	}
	home, ws, binds, raws := res.home, res.ws, res.binds, res.raws
	if sd, err := statedir.From(func(k string) string { return lookupEnv(env, k) }); err == nil {
		if err := inStateDir(binds, res.existingPath(sd), raws); err != nil {
			return nil, err
		}
	}
	if rd, ok := statedir.RuntimeFrom(func(k string) string { return lookupEnv(env, k) }); ok {
		if err := inJailDir(binds, res.existingPath(rd), "runtime directory (running sandboxes' control sockets)", raws); err != nil {
			return nil, err
		}
	}
	if cd, ok := statedir.ConfigFrom(func(k string) string { return lookupEnv(env, k) }); ok {
		if err := inJailDir(binds, res.existingPath(cd), configDirWhat, raws); err != nil {
			return nil, err
		}
	}
	in := fsrules.Input{Workspace: ws, Home: home, Deny: p.Deny, NoDefaultDeny: p.NoDefaultDeny, AllowGitConfig: p.AllowGitConfig, Lifted: res.lifts}
	for _, b := range binds {
		if b.Kind == ns.KindBind {
			in.Writable = append(in.Writable, b.Path)
		} else {
			in.Readable = append(in.Readable, b.Path)
		}
	}
	c := &checked{roots: res}
	if c.rules, err = fsrules.CheckRules(in); err != nil {
		return nil, asGiven(err, raws)
	}
	if p.Net == policy.NetAllow {
		if c.net, err = buildNetPolicy(p); err != nil {
			return nil, err
		}
		c.netFlags = netFlags(p)
	}
	for _, spec := range append(slices.Clip(p.Publish), p.PublishIfFree...) {
		if _, err := netproxy.ParsePublish(spec); err != nil {
			return nil, invalid(err)
		}
	}
	// Built as the run builds it (with the guard rails unless lifted),
	// for the run to take: the guard rails' own patterns are compiled at
	// their first use, so checking them costs nothing here.
	if c.guard, err = seccomp.NewGuard(p.BlockCommand, !p.NoGuardRails, ws, home); err != nil {
		return nil, invalid(err)
	}
	c.guardIn = guardInput{slices.Clone(p.BlockCommand), !p.NoGuardRails, ws, home}
	switch {
	case p.SeccompFile != "":
		data, err := seccomp.ReadPolicyFile(p.SeccompFile)
		if err != nil {
			return nil, &policy.FieldError{Key: "seccomp", Value: p.SeccompFile, Reason: err.Error()}
		}
		if _, err := seccomp.ParsePolicy(p.SeccompFile, data); err != nil {
			return nil, &policy.FieldError{Key: "seccomp", Value: p.SeccompFile, Reason: err.Error()}
		}
	case p.SeccompReplace:
		return nil, &policy.FieldError{Key: "seccomp-replace", Reason: "needs `seccomp` FILE: the filter to use instead"}
	}
	return c, nil
}

// buildNetPolicy parses the network rules; errors name every bad rule.
func buildNetPolicy(p *policy.Policy) (*netproxy.Policy, error) {
	cfg, err := netproxy.BuildConfig(netFlags(p))
	if err != nil {
		return nil, invalid(err)
	}
	// What the profiles' programs do without (said, never allowed).
	cfg.Refused = p.Refused
	return netproxy.NewPolicy(cfg)
}

// netFlags are p's network rules (copies: a later change of p's is not
// theirs).
func netFlags(p *policy.Policy) netproxy.Flags {
	return netproxy.Flags{
		AllowDomains: slices.Clone(p.AllowDomain), DenyDomains: slices.Clone(p.DenyDomain),
		AllowIPs: slices.Clone(p.AllowIP), AddHosts: slices.Clone(p.AddHost), HostPorts: slices.Clone(p.AllowHostPort),
	}
}

func netFlagsEqual(a, b netproxy.Flags) bool {
	return slices.Equal(a.AllowDomains, b.AllowDomains) && slices.Equal(a.DenyDomains, b.DenyDomains) &&
		slices.Equal(a.AllowIPs, b.AllowIPs) && slices.Equal(a.AddHosts, b.AddHosts) && slices.Equal(a.HostPorts, b.HostPorts)
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
