package sandbox

import (
	"testing"

	"github.com/jail-sandbox/jail/policy"
)

func TestListenHintWanted(t *testing.T) {
	for _, tt := range []struct {
		name     string
		p        policy.Policy
		degraded bool
		port     uint16
		want     bool
	}{
		{"a dev server", policy.Policy{Net: policy.NetNone}, false, 5173, true},
		{"with an allowlist", policy.Policy{Net: policy.NetAllow}, false, 8000, true},
		{"the last port below the ephemeral range", policy.Policy{}, false, ephemeralFrom - 1, true},
		{"an ephemeral port", policy.Policy{}, false, ephemeralFrom, false},
		{"port 0", policy.Policy{}, false, 0, false},
		{"net host", policy.Policy{Net: policy.NetHost}, false, 5173, false},
		{"degraded: the host's loopback", policy.Policy{}, true, 5173, false},
		{"published", policy.Policy{Publish: []string{"8080:5173"}}, false, 5173, false},
		{"published on another port", policy.Policy{Publish: []string{"5173:8080"}}, false, 5173, true},
		{"published if free", policy.Policy{PublishIfFree: []string{"127.0.0.1:1455:1455/tcp"}}, false, 1455, false},
	} {
		if got := listenHintWanted(&tt.p, tt.degraded, tt.port); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
