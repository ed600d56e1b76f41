//go:build linux

package tests

// git reads configuration from the environment too, above every file:
// GIT_CONFIG_COUNT with GIT_CONFIG_KEY_n/GIT_CONFIG_VALUE_n (git 2.31), and
// GIT_CONFIG_PARAMETERS (what `git -c` passes to the git commands it
// starts; some users export it). A core.hooksPath set there, in the
// environment jail and the user's later shell share, applies to every
// repository: relative, it names a directory in each work tree that the
// agent can fill with hooks the host's next `git commit` runs (session 18,
// lane O). jail reads that configuration as it reads the global files.

import (
	"strconv"
	"testing"
)

func TestGitEnvConfigHooksPath(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
	}{
		{"GIT_CONFIG_COUNT", map[string]string{"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.hooksPath", "GIT_CONFIG_VALUE_0": ".githooks"}},
		{"GIT_CONFIG_PARAMETERS", map[string]string{"GIT_CONFIG_PARAMETERS": `'color.ui'='auto' 'core.hooksPath'='.githooks'`}},
		{"GIT_CONFIG_PARAMETERS old form", map[string]string{"GIT_CONFIG_PARAMETERS": `'core.HooksPath=.githooks'`}},
		// git reads every pair GIT_CONFIG_COUNT names (up to INT_MAX): one
		// past a fixed cap applies all the same (review18f). 4,097: just past
		// the old cap of 4,096 (git itself takes ~1 s a command at this size).
		{"GIT_CONFIG_COUNT 4097", manyPairs(4097, "core.hooksPath", ".githooks")},
	} {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			attack := func(t *testing.T, h *gitHost, flags ...string) (string, result) {
				ws := workspace(t)
				h.repo(t, ws)
				// Made elsewhere and renamed into place: it appears whole.
				r := h.run(t, ws, `mkdir -p .cache/h && payload > .cache/h/pre-commit && chmod +x .cache/h/pre-commit && mv .cache/h .githooks && echo planted`, flags)
				mustCode(t, r, 0)
				return h.use(ws), r
			}
			h := newGitHost(t)
			hostLog, r := attack(t, h)
			h.expectSafe(t, r, hostLog, gitLastWorkspace(t, hostLog)+"/.githooks")
			gitControl(t, attack)
		})
	}
}

// manyPairs is GIT_CONFIG_COUNT=n with n-1 harmless pairs and key=value last.
func manyPairs(n int, key, value string) map[string]string {
	env := map[string]string{"GIT_CONFIG_COUNT": strconv.Itoa(n)}
	for i := 0; i < n-1; i++ {
		env["GIT_CONFIG_KEY_"+strconv.Itoa(i)] = "user.x" + strconv.Itoa(i)
		env["GIT_CONFIG_VALUE_"+strconv.Itoa(i)] = "v"
	}
	env["GIT_CONFIG_KEY_"+strconv.Itoa(n-1)] = key
	env["GIT_CONFIG_VALUE_"+strconv.Itoa(n-1)] = value
	return env
}
