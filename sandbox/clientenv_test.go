package sandbox

import (
	"slices"
	"testing"

	"github.com/jail-sandbox/jail/policy"
)

func TestRefusalClientEnv(t *testing.T) {
	pip, cargo := "PIP_RETRIES="+pipRetries, "CARGO_NET_RETRY="+cargoNetRetry
	for _, c := range []struct {
		name string
		env  []string
		net  string
		want []string
	}{
		{"none mode sets them", []string{"HOME=/h"}, policy.NetNone, []string{"HOME=/h", pip, cargo}},
		{"allow mode sets them", nil, policy.NetAllow, []string{pip, cargo}},
		{"default mode sets them", nil, "", []string{pip, cargo}},
		{"the user's value wins", []string{"PIP_RETRIES=9", "X=1"}, policy.NetAllow, []string{"PIP_RETRIES=9", "X=1", cargo}},
		{"each user's value wins", []string{"CARGO_NET_RETRY=5", "PIP_RETRIES=9"}, policy.NetAllow, []string{"CARGO_NET_RETRY=5", "PIP_RETRIES=9"}},
		{"an empty value is the user's too", []string{"PIP_RETRIES=", "CARGO_NET_RETRY="}, policy.NetNone, []string{"PIP_RETRIES=", "CARGO_NET_RETRY="}},
		{"a longer name is not it", []string{"PIP_RETRIES_X=1"}, policy.NetNone, []string{"PIP_RETRIES_X=1", pip, cargo}},
		{"host network: nothing is refused", []string{"HOME=/h"}, policy.NetHost, []string{"HOME=/h"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := refusalClientEnv(slices.Clone(c.env), c.net); !slices.Equal(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
