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
