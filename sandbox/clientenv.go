package sandbox

import (
	"slices"
	"strings"

	"github.com/jail-sandbox/jail/policy"
)

// pipRetries is the PIP_RETRIES jail sets inside (pip's default is 5).
//
// Why (issue 12, "refusals are fast and named"): pip's urllib3 retries every
// failure to reach an https:// index, whatever it is (a refused CONNECT
// tunnel with jail's 403, a TLS access_denied alert, a reset, a DNS
// failure), with backoff 0, 0.5, 1, 2, 4 s: a refused index took 7.5 s more
// than pip's own start, and over TLS only a certificate jail does not have
// (and never forges) could give pip an HTTP answer it does not retry. One
// retry keeps pip's first, immediate one, so an allowed host's dropped
// connection is still tried again, and drops the 7.5 s of backoff that only
// ever delays a refusal (a refused index now fails within pip's own start
// plus two round trips; pip itself takes 1-4 s to start on a loaded
// machine, so even 0.5 s more would miss "under 5 s"). The refusal is named
// on each retry line and in the final error.
const pipRetries = "1"

// cargoNetRetry is the CARGO_NET_RETRY jail sets inside (cargo's default
// is 3).
//
// Why (the same): cargo takes a refused CONNECT (jail's 403) for a
// spurious network error and retries it with growing sleeps: a refused
// crates.io index took 11 s (three "spurious network error" warnings)
// where one retry fails it in 1.4 s, and none in 0.1 s. One retry, as for
// pip, keeps a second chance for an allowed registry's dropped connection.
const cargoNetRetry = "1"

// refusalClients are the variables refusalClientEnv sets: clients that
// retry any failure, jail's refusals among them.
var refusalClients = []string{"PIP_RETRIES=" + pipRetries, "CARGO_NET_RETRY=" + cargoNetRetry}

// refusalClientEnv adds the settings that make clients which retry any
// failure give up on jail's refusals quickly, unless the user's own
// environment (--setenv, or --env passing the host's value) sets them: the
// user's choice wins. With --net host nothing is refused, so nothing is set.
func refusalClientEnv(env []string, net string) []string {
	if net == policy.NetHost {
		return env
	}
	for _, set := range refusalClients {
		name, _, _ := strings.Cut(set, "=")
		if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") }) {
			env = append(env, set)
		}
	}
	return env
}
