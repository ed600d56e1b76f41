package sandbox

import (
	"testing"

	"github.com/jail-sandbox/jail/ns"
)

// The watched mounts: masks, read-only binds and pins in a writable tree,
// and host sockets' masks anywhere; not binds, not masks in the read-only
// view or over a cache of jail's own.
func TestWatchedMasks(t *testing.T) {
	pl := &Plan{Writable: []string{"/ws"}, Mounts: []ns.Mount{
		{Kind: ns.KindBind, Path: "/ws", Dir: true},
		{Kind: ns.KindPin, Path: "/ws/.git", Dir: true, Why: "pinned"},
		{Kind: ns.KindReadOnly, Path: "/ws/.git/config", Why: "git: config"},
		{Kind: ns.KindMask, Path: "/ws/.env", Why: "secret"},
		{Kind: ns.KindMask, Path: "/etc/shadow", Why: "host secret"},
		{Kind: ns.KindMask, Path: "/var/run/x.sock", Why: whyHostSocket},
		{Kind: ns.KindMask, Path: "/ws/cache", Source: "/state/cache", Why: "cache"},
		{Kind: ns.KindMask, Path: "/wsx/.env", Why: "secret"},
	}}
	got := watchedMasks(pl)
	want := []string{"/ws/.git", "/ws/.git/config", "/ws/.env", "/var/run/x.sock"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i, p := range got {
		if p.Path != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}
