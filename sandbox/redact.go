package sandbox

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/cgroup"
	"github.com/jail-sandbox/jail/policy"
)

// This file: the values of the variables the user hands the agent (--env,
// --setenv) are secrets by intent; the trail, its syslog copy and --dry-run
// carry their names only.
//
// jail's own records (the policy, the plan's environment, jail's argv) are
// redacted by structure, whatever the value. Text the agent produces (exec
// argv, paths, cwd, DNS names, HTTP Host in a refusal, error strings) is
// searched for each value of at least minRedactLen bytes, ASCII case
// folded (DNS lower-cases names); each occurrence becomes
// "[redacted $NAME]". Shorter values are not searched for: replacing every
// "1" or "on" would destroy the record, and they are no secret. A value
// the agent transforms (base64, split, reversed) cannot be recognised.

// minRedactLen is the shortest value searched for in agent-produced text.
const minRedactLen = 4

// RedactedMarker is what replaces a value in jail's own records.
const RedactedMarker = "[redacted]"

type secretVal struct{ name, value, marker string }

// redactor replaces secret values in trail records; nil redacts nothing.
type redactor struct {
	vals []secretVal // longest value first
}

// newRedactor collects the values of the variables named by --env and
// --setenv, as the agent receives them (agentEnv is the plan's environment).
func newRedactor(p *policy.Policy, agentEnv []string) *redactor {
	names := map[string]bool{}
	for _, n := range p.Env {
		names[n] = true
	}
	for _, kv := range p.SetEnv {
		if n, _, ok := strings.Cut(kv, "="); ok {
			names[n] = true
		}
	}
	x := &redactor{}
	for _, kv := range agentEnv {
		n, v, ok := strings.Cut(kv, "=")
		if ok && names[n] && len(v) >= minRedactLen {
			x.vals = append(x.vals, secretVal{name: n, value: v, marker: "[redacted $" + n + "]"})
		}
	}
	// --setenv values the agent does not receive (overridden) are still
	// the user's secrets.
	for _, kv := range p.SetEnv {
		n, v, _ := strings.Cut(kv, "=")
		if len(v) >= minRedactLen {
			x.vals = append(x.vals, secretVal{name: n, value: v, marker: "[redacted $" + n + "]"})
		}
	}
	sort.SliceStable(x.vals, func(i, j int) bool { return len(x.vals[i].value) > len(x.vals[j].value) })
	return x
}

// str returns s with every secret value replaced by its marker.
func (x *redactor) str(s string) string {
	if x == nil {
		return s
	}
	for _, v := range x.vals {
		s = replaceFold(s, v.value, v.marker)
	}
	return s
}

func (x *redactor) strs(ss []string) []string {
	if x == nil || len(ss) == 0 {
		return ss
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = x.str(s)
	}
	return out
}

// replaceFold replaces each occurrence of v in s, ASCII letters compared
// without case (a DNS name arrives lower-cased), with m.
func replaceFold(s, v, m string) string {
	if len(v) == 0 || len(s) < len(v) {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i+len(v) <= len(s); {
		if asciiEqualFold(s[i:i+len(v)], v) {
			b.WriteString(s[last:i])
			b.WriteString(m)
			i += len(v)
			last = i
			continue
		}
		i++
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func asciiEqualFold(a, b string) bool {
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// event redacts the free-text fields of an event before it is recorded.
func (x *redactor) event(ev audit.Event) audit.Event {
	if x == nil || len(x.vals) == 0 {
		return ev
	}
	switch e := ev.(type) {
	case audit.Exec:
		e.Path, e.Argv, e.Cwd, e.Reason = x.str(e.Path), x.strs(e.Argv), x.str(e.Cwd), x.str(e.Reason)
		return e
	case audit.Deny:
		e.Target, e.Reason = x.str(e.Target), x.str(e.Reason)
		return e
	case audit.DNS:
		e.Name, e.Reason = x.str(e.Name), x.str(e.Reason)
		return e
	case audit.Net:
		e.Name, e.Reason = x.str(e.Name), x.str(e.Reason)
		return e
	case audit.Kill:
		e.Reason = x.str(e.Reason)
		return e
	case audit.Exit:
		e.Error = x.str(e.Error)
		return e
	case audit.Quarantine:
		// The agent names what it plants, and a .git file's target is
		// in the reason.
		e.Path, e.Reason, e.Stored, e.Left, e.Error = x.str(e.Path), x.str(e.Reason), x.str(e.Stored), x.str(e.Left), x.str(e.Error)
		return e
	case audit.Notice:
		e.Text = x.str(e.Text)
		return e
	}
	return ev
}

// argv returns jail's own argv with --setenv values replaced (whatever
// their length) and every other secret value redacted.
func (x *redactor) argv(args []string) []string {
	out := make([]string, len(args))
	after := false
	for i, a := range args {
		switch {
		case after:
			out[i] = setenvName(a)
			after = false
		case a == "--":
			copy(out[i:], x.strs(args[i:]))
			return out
		case a == "--setenv" || a == "-setenv":
			out[i], after = a, true
		case strings.HasPrefix(a, "--setenv=") || strings.HasPrefix(a, "-setenv="):
			flag, kv, _ := strings.Cut(a, "=")
			out[i] = flag + "=" + setenvName(kv)
		default:
			out[i] = x.str(a)
		}
	}
	return out
}

func setenvName(kv string) string {
	n, _, ok := strings.Cut(kv, "=")
	if !ok {
		return kv
	}
	return n + "=" + RedactedMarker
}

// names returns the names of NAME=VALUE entries.
func envNames(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		n, _, _ := strings.Cut(kv, "=")
		out = append(out, n)
	}
	return out
}

// startPolicy is the policy and plan as the start event records them: the
// environment by name, --setenv by name, every other string (paths, the
// command) redacted. The result is the JSON tree of
// {"policy": p, "plan": plan, "cgroup": cg} with strings rewritten.
func (x *redactor) startPolicy(p *policy.Policy, plan *Plan, cg any) any {
	pc := *p
	pc.SetEnv = envNames(p.SetEnv)
	var planCopy *Plan
	if plan != nil {
		pl := *plan
		pl.Env = envNames(plan.Env)
		planCopy = &pl
	}
	b, err := marshalStart(pc, planCopy, cg)
	if err != nil {
		return map[string]string{"error": err.Error()}
	}
	if x == nil || len(x.vals) == 0 {
		// Nothing to search for (no --env/--setenv value long enough):
		// the tree would come back unchanged, so the trail takes these
		// bytes as they are instead of a decode and a second encode.
		return json.RawMessage(b)
	}
	return x.tree(b)
}

// startEncoding holds the encoders zjson_linux.go generates (package
// jsongen) for the start event's policy, plan and cgroup report: the
// bytes json.Marshal writes, without its reflection, which in a fresh
// process builds every encoder first (1-2.5 ms of the supervisor's CPU
// under an agent's profile, beside the agent's start; issue 16).
type startEncoding struct {
	policy func([]byte, *policy.Policy) ([]byte, error)
	plan   func([]byte, *Plan) ([]byte, error)
	cgroup func([]byte, *cgroup.Report) ([]byte, error)
}

// startEncoders is set by zjson_linux.go's init; nil without the file
// (removed to be made again when a type no longer fits it:
// TestJSONGenerated), and marshalStart is json.Marshal then.
var startEncoders *startEncoding

// generatedJSON is the sha256 of the source zjson_linux.go was generated
// as (its own sum left out), "" without it: TestJSONGenerated compares it
// with the source the types give now.
var generatedJSON string

// marshalStart is json.Marshal(map[string]any{"policy": p, "plan": plan,
// "cgroup": cg}), by the generated encoders when they are there and cg is
// a cgroup.Report. An error of theirs (a value JSON has no form for) is
// json.Marshal's own, which is what is returned then.
func marshalStart(p policy.Policy, plan *Plan, cg any) ([]byte, error) {
	e := startEncoders
	rep, ok := cg.(cgroup.Report)
	if e != nil && ok {
		// The bytes' size, about (a start's ~28 KB, a profile's ~62 KB):
		// one buffer, not a copy at each doubling.
		size := 4<<10 + len(p.Write)*200
		if plan != nil {
			size += len(plan.Mounts)*200 + len(plan.Absent)*160 + len(plan.Guarded)*800
		}
		b := make([]byte, 0, size)
		b = append(b, `{"cgroup":`...)
		b, err := e.cgroup(b, &rep)
		if err == nil {
			b = append(b, `,"plan":`...)
			if plan == nil {
				b = append(b, "null"...)
			} else {
				b, err = e.plan(b, plan)
			}
		}
		if err == nil {
			b = append(b, `,"policy":`...)
			b, err = e.policy(b, &p)
		}
		if err == nil {
			return append(b, '}'), nil
		}
	}
	return json.Marshal(map[string]any{"policy": p, "plan": plan, "cgroup": cg})
}

// preparedStartPolicy is startPolicy made ready for the start event
// (audit.Prepare): the bytes of its json.Marshal, when it has nothing to
// redact, are taken as they are, not checked and compacted again.
func (x *redactor) preparedStartPolicy(p *policy.Policy, plan *Plan, cg any) audit.Prepared {
	v := x.startPolicy(p, plan, cg)
	if b, ok := v.(json.RawMessage); ok {
		return audit.PrepareMarshalled(b) // startPolicy's own json.Marshal
	}
	return audit.Prepare(v)
}

// tree decodes b and redacts every string of it.
func (x *redactor) tree(b []byte) any {
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		return map[string]string{"error": err.Error()}
	}
	return x.walk(tree)
}

// walk rewrites every string value (not key) of a JSON tree.
func (x *redactor) walk(v any) any {
	if x == nil || len(x.vals) == 0 {
		return v
	}
	switch t := v.(type) {
	case string:
		return x.str(t)
	case []any:
		for i := range t {
			t[i] = x.walk(t[i])
		}
	case map[string]any:
		for k := range t {
			t[k] = x.walk(t[k])
		}
	}
	return v
}
