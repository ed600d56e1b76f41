package ns

import (
	"testing"
)

// What init set up on MsgNetwork must be what its spec asks for.
func TestCheckEarlyNetwork(t *testing.T) {
	early := &earlyNetwork{cfg: []byte("tproxy")}
	tests := []struct {
		name  string
		hooks map[string][]byte
		early *earlyNetwork
		ok    bool
	}{
		{"no early network", map[string][]byte{HookNetwork: []byte("x")}, nil, true},
		{"the same", map[string][]byte{HookNetwork: []byte("tproxy")}, early, true},
		{"another", map[string][]byte{HookNetwork: []byte("none")}, early, false},
		{"none in the spec", map[string][]byte{}, early, false},
		{"an empty one", map[string][]byte{HookNetwork: nil}, early, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkEarlyNetwork(&Spec{Hooks: tt.hooks}, tt.early)
			if (err == nil) != tt.ok {
				t.Fatalf("checkEarlyNetwork: %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

// An init that is not born inside its cgroup (BeforeSpec joins it at
// Finish) does nothing of the sandbox's before that: it is sent no network
// configuration ahead of its spec. One born inside is, once.
func TestNetworkNotBeforeCgroup(t *testing.T) {
	st := begin(t, Config{BeforeSpec: func(int) error { return nil }})
	defer st.Abort()
	if sent, err := st.Network([]byte("cfg")); sent || err != nil {
		t.Fatalf("Network with BeforeSpec: sent %v, %v; want nothing sent", sent, err)
	}
	st2 := begin(t, Config{})
	defer st2.Abort()
	if sent, err := st2.Network([]byte("cfg")); !sent || err != nil {
		t.Fatalf("Network: sent %v, %v", sent, err)
	}
	if sent, _ := st2.Network([]byte("cfg")); sent {
		t.Fatalf("Network sent twice")
	}
}
