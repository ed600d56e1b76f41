package sandbox

import (
	"slices"
	"testing"

	"github.com/jail-sandbox/jail/policy"
)

func TestRefusalClientEnv(t *testing.T) {
	for _, c := range []struct {
		name string
		env  []string
		net  string
		want []string
	}{
		{"none mode sets it", []string{"HOME=/h"}, policy.NetNone, []string{"HOME=/h", "PIP_RETRIES=" + pipRetries}},
		{"allow mode sets it", nil, policy.NetAllow, []string{"PIP_RETRIES=" + pipRetries}},
		{"default mode sets it", nil, "", []string{"PIP_RETRIES=" + pipRetries}},
		{"the user's value wins", []string{"PIP_RETRIES=9", "X=1"}, policy.NetAllow, []string{"PIP_RETRIES=9", "X=1"}},
		{"an empty value is the user's too", []string{"PIP_RETRIES="}, policy.NetNone, []string{"PIP_RETRIES="}},
		{"a longer name is not it", []string{"PIP_RETRIES_X=1"}, policy.NetNone, []string{"PIP_RETRIES_X=1", "PIP_RETRIES=" + pipRetries}},
		{"host network: nothing is refused", []string{"HOME=/h"}, policy.NetHost, []string{"HOME=/h"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := refusalClientEnv(slices.Clone(c.env), c.net); !slices.Equal(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
