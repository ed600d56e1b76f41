package sandbox

import (
	"slices"
	"testing"

	"github.com/jail-sandbox/jail/fsrules"
	"github.com/jail-sandbox/jail/ns"
	"github.com/jail-sandbox/jail/policy"
)

// The exit check's names: the built-ins' (none under --no-default-deny);
// kept are the masked files of those names; covered the directories inside
// a writable root the agent cannot write on the host (masked whole, a cache
// of jail's own, a private tmpfs), not one around a root; in degraded mode
// (no mounts) nothing is kept or covered.
func TestExitNames(t *testing.T) {
	masks := []fsrules.Mask{
		{Path: "/ws/a/rust-toolchain.toml", Kind: fsrules.ReadOnly, Rule: "default: rust-toolchain.toml"},
		{Path: "/ws/.env", Kind: fsrules.Hide, Rule: "default: .env"},
		{Path: "/ws/.vscode", Kind: fsrules.ReadOnly, Dir: true, Rule: "default: .vscode/"},
		{Path: "/elsewhere/.idea", Kind: fsrules.ReadOnly, Dir: true, Rule: "default: .idea/"},
	}
	hidden := []ns.Mount{{Kind: ns.KindTmpfs, Path: "/tmp"}, {Kind: ns.KindTmpfs, Path: "/ws/private"}}
	binds := []ns.Mount{{Kind: ns.KindBind, Path: "/ws"}, {Kind: ns.KindBind, Path: "/ws/cache", Source: "/state/cache"}}
	set := exitNames(&policy.Policy{}, masks, hidden, binds, []string{"/ws"}, false)
	if set.names[".tool-versions"] != "default: .tool-versions" || set.names[".envrc"] == "" || set.names[".env"] != "" || set.names[".git/config"] != "" {
		t.Errorf("names: %v", set.names)
	}
	if !set.kept["/ws/a/rust-toolchain.toml"] || len(set.kept) != 1 {
		t.Errorf("kept: %v", set.kept)
	}
	if want := []string{"/ws/.vscode", "/ws/private", "/ws/cache"}; !slices.Equal(set.covered, want) {
		t.Errorf("covered %v, want %v", set.covered, want)
	}
	if set := exitNames(&policy.Policy{}, masks, hidden, binds, []string{"/ws"}, true); len(set.names) == 0 || len(set.kept) != 0 || len(set.covered) != 0 {
		t.Errorf("degraded: %d names, kept %v, covered %v", len(set.names), set.kept, set.covered)
	}
	if set := exitNames(&policy.Policy{NoDefaultDeny: true}, masks, hidden, binds, []string{"/ws"}, false); set.names != nil {
		t.Errorf("--no-default-deny: %v", set.names)
	}
}
