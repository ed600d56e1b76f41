package sandbox

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/netproxy"
	"github.com/jail-sandbox/jail/notice"
	"github.com/jail-sandbox/jail/policy"
	"github.com/jail-sandbox/jail/toolreg"
)

func refusedEv(name string, port uint16) netproxy.Event {
	return netproxy.Event{Name: name, Port: port, Hint: "`allow-domain` " + name}
}

// The end's line names, under the first profile whose registries allow
// them, the refused names a registry of a tool that ran is; no line for
// names no hint allows.
func TestRegistryNotes(t *testing.T) {
	node := policy.ProfileHint{Profile: "node", Tool: "npm", Caches: true, Domains: []string{"registry.npm.test:443", "npm.corp.test:8443"}}
	mine := policy.ProfileHint{Profile: "mynode", Tool: "npm", Domains: []string{"registry.npm.test:443", "other.corp.test:443"}}
	pip := policy.ProfileHint{Profile: "python", Tool: "pip", Caches: true, Domains: []string{"pypi.test:443", "files.pypi.test:443"}}
	for _, c := range []struct {
		name    string
		refused []netproxy.Event
		hints   []policy.ProfileHint
		want    []string
	}{
		{"one name", []netproxy.Event{refusedEv("registry.npm.test", 443), refusedEv("github.test", 443)}, []policy.ProfileHint{node},
			[]string{"registry.npm.test:443, refused in this run, is a registry npm is configured with: add `profile` node, which allows it and keeps caches of jail's own"}},
		{"another port", []netproxy.Event{refusedEv("registry.npm.test", 80), refusedEv("npm.corp.test", 443)}, []policy.ProfileHint{node}, nil},
		{"the first hint wins, the next takes the rest", []netproxy.Event{refusedEv("registry.npm.test", 443), refusedEv("other.corp.test", 443)}, []policy.ProfileHint{node, mine},
			[]string{
				"registry.npm.test:443, refused in this run, is a registry npm is configured with: add `profile` node, which allows it and keeps caches of jail's own",
				"other.corp.test:443, refused in this run, is a registry npm is configured with: add `profile` mynode, which allows it",
			}},
		{"two tools", []netproxy.Event{refusedEv("files.pypi.test", 443), refusedEv("pypi.test", 443), refusedEv("npm.corp.test", 8443)}, []policy.ProfileHint{node, pip},
			[]string{
				"files.pypi.test:443, pypi.test:443, refused in this run, are registries pip is configured with: add `profile` python, which allows them and keeps caches of jail's own",
				"npm.corp.test:8443, refused in this run, is a registry npm is configured with: add `profile` node, which allows it and keeps caches of jail's own",
			}},
		{"no hints", []netproxy.Event{refusedEv("registry.npm.test", 443)}, nil, nil},
	} {
		if got := registryNotes(c.refused, c.hints); !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	// More than three: three named, the rest counted.
	wild := policy.ProfileHint{Profile: "corp", Tool: "npm", Domains: []string{"*.corp.test"}}
	var many []netproxy.Event
	for i := range 5 {
		many = append(many, refusedEv(fmt.Sprintf("r%d.corp.test", i), 443))
	}
	got := registryNotes(many, []policy.ProfileHint{wild})
	if want := "r0.corp.test:443, r1.corp.test:443, r2.corp.test:443 and 2 more, refused in this run, are registries npm is configured with: add `profile` corp, which allows them"; len(got) != 1 || got[0] != want {
		t.Errorf("five names:\n got %q\nwant %q", got, want)
	}
}

// What the end's hint is made from: refused names an allow rule would let
// through, each once, bounded; the tools whose programs ran.
func TestRegistryHintInputs(t *testing.T) {
	r := &runner{pol: &policy.Policy{}}
	r.refusedName(netproxy.Event{Name: "raw", Port: 443})                  // no allow rule undoes it
	r.refusedName(netproxy.Event{Addr: "192.0.2.1", Port: 443, Hint: "x"}) // no name
	for range 2 {
		for i := range maxRefusedNames + 10 {
			r.refusedName(refusedEv(fmt.Sprintf("n%d.test", i), 443))
		}
	}
	if len(r.refused) != maxRefusedNames || r.refused[0].Name != "n0.test" {
		t.Errorf("kept %d refusals (first %q), want %d, first n0.test", len(r.refused), r.refused[0].Name, maxRefusedNames)
	}
	r.sawExec("/usr/bin/git", []string{"git", "fetch"})
	r.sawExec("/usr/bin/npm", []string{"npm", "install"})
	r.sawExec("/usr/bin/python3", []string{"python3", "-m", "pip", "install", "x"})
	want := toolBit(toolreg.NPM) | toolBit(toolreg.Pip)
	if got := r.toolsRan.Load(); got != want || want == 0 {
		t.Errorf("tools ran: %b, want %b", got, want)
	}
	for _, tool := range toolreg.Tools {
		if toolBit(tool) == 0 {
			t.Errorf("%s has no bit", tool)
		}
	}
}

// The end asks about the tools that ran only, says the notes, and asks
// nothing without a refusal, without a tool, under --quiet or --dry-run;
// with the execs unseen, the command's program is the tool that ran.
func TestSayRegistryHints(t *testing.T) {
	for _, c := range []struct {
		name      string
		pol       policy.Policy
		refused   bool
		seen      bool // the execs are seen
		ran       []string
		wantAsked []string
	}{
		{"npm ran", policy.Policy{}, true, true, []string{"/usr/bin/npm", "npm"}, []string{"npm"}},
		{"two tools", policy.Policy{}, true, true, []string{"/usr/bin/go", "go", "/usr/bin/pip3", "pip3"}, []string{"go", "pip"}},
		{"no tool ran", policy.Policy{Command: []string{"npm"}}, true, true, []string{"/usr/bin/git", "git"}, nil},
		{"no refusal", policy.Policy{}, false, true, []string{"/usr/bin/npm", "npm"}, nil},
		{"quiet", policy.Policy{Quiet: true}, true, true, []string{"/usr/bin/npm", "npm"}, nil},
		{"dry run", policy.Policy{DryRun: true}, true, true, []string{"/usr/bin/npm", "npm"}, nil},
		{"execs unseen: the command", policy.Policy{Command: []string{"/usr/bin/npm", "install"}}, true, false, nil, []string{"npm"}},
		{"execs unseen: another command", policy.Policy{Command: []string{"sh", "-c", "npm install"}}, true, false, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var asked []string
			pol := c.pol
			pol.RegistryHints = func(tools []string) []policy.ProfileHint {
				asked = tools
				return []policy.ProfileHint{{Profile: "node", Tool: "npm", Domains: []string{"registry.npm.test"}}}
			}
			var buf strings.Builder
			r := &runner{pol: &pol}
			r.notes = notice.New(&buf, notice.Options{Quiet: pol.Quiet})
			r.execsSeen.Store(c.seen)
			if c.refused {
				r.refusedName(refusedEv("registry.npm.test", 443))
			}
			for i := 0; i+1 < len(c.ran); i += 2 {
				r.sawExec(c.ran[i], []string{c.ran[i+1]})
			}
			r.sayRegistryHints()
			if !slices.Equal(asked, c.wantAsked) {
				t.Errorf("asked about %q, want %q", asked, c.wantAsked)
			}
			said := strings.Contains(buf.String(), "registry.npm.test:443, refused in this run, is a registry npm is configured with: add ") && strings.Contains(buf.String(), "profile node, which allows it")
			if said != (c.wantAsked != nil) {
				t.Errorf("said %v, want %v: %q", said, c.wantAsked != nil, buf.String())
			}
		})
	}
}
