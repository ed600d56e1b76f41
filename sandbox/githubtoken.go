package sandbox

// This file: git over https to GitHub with the token the user passed.
// `--env GH_TOKEN` (or GITHUB_TOKEN) gives gh inside the user's token, but
// git's way to it, the credential helper `gh auth setup-git` writes, lives
// in the ~/.gitconfig jail keeps hidden: a push over https asked for a
// username no agent can type ("could not read Username for
// 'https://github.com'"), and gh auth setup-git inside could not write
// the hidden file. The run gives git a helper of its own, for
// https://github.com only, that answers with the token the variable holds
// when git asks: the token is not copied anywhere (the helper reads the
// variable), and no capability is added (the command holds the token
// already, and gh or curl pushes with it as well as git).

import (
	"sort"
	"strings"
)

// gitHubTokenVars are the variables gh reads its github.com token from,
// in its order.
var gitHubTokenVars = []string{"GH_TOKEN", "GITHUB_TOKEN"}

// gitHubHelper is the credential helper: git runs it with sh, the action
// as its argument (gitcredentials(7)); it answers "get" only.
const gitHubHelper = `!f() { test "$1" = get || exit 0; echo username=x-access-token; echo "password=${GH_TOKEN:-$GITHUB_TOKEN}"; }; f`

// withGitHubCredential adds the helper to penv, the sandbox's environment,
// as git's environment configuration (GIT_CONFIG_COUNT), when penv holds
// a GitHub token and no configuration of that kind: a GIT_CONFIG_COUNT or
// GIT_CONFIG_PARAMETERS the user set or passed stays theirs.
func withGitHubCredential(penv []string) []string {
	token := false
	for _, n := range gitHubTokenVars {
		token = token || lookupEnv(penv, n) != ""
	}
	if !token {
		return penv
	}
	for _, kv := range penv {
		if strings.HasPrefix(kv, "GIT_CONFIG_COUNT=") || strings.HasPrefix(kv, "GIT_CONFIG_PARAMETERS=") {
			return penv
		}
	}
	// Why only https://github.com: the token is GitHub's; git sends a
	// helper's answer to the host it asked for, and another host (an
	// allowed mirror, a server the agent stood up) must never get it.
	out := append(append([]string{}, penv...),
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=credential.https://github.com.helper",
		"GIT_CONFIG_VALUE_0="+gitHubHelper)
	sort.Strings(out)
	return out
}
