package sandbox

import (
	"slices"
	"strings"
	"testing"
)

func TestWithGitHubCredential(t *testing.T) {
	for _, tt := range []struct {
		name   string
		env    []string
		helper bool
	}{
		{"GH_TOKEN passed", []string{"GH_TOKEN=ghp_x", "PATH=/bin"}, true},
		{"GITHUB_TOKEN passed", []string{"GITHUB_TOKEN=ghs_x"}, true},
		{"no token", []string{"PATH=/bin", "GITLAB_TOKEN=x"}, false},
		{"an empty token", []string{"GH_TOKEN="}, false},
		{"the user's own environment configuration", []string{"GH_TOKEN=ghp_x", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=a.b", "GIT_CONFIG_VALUE_0=c"}, false},
		{"git -c's", []string{"GH_TOKEN=ghp_x", "GIT_CONFIG_PARAMETERS='a.b'='c'"}, false},
	} {
		got := withGitHubCredential(tt.env)
		has := slices.Contains(got, "GIT_CONFIG_KEY_0=credential.https://github.com.helper")
		if has != tt.helper {
			t.Errorf("%s: %q, want the helper %v", tt.name, got, tt.helper)
		}
		if !has && !slices.Equal(got, tt.env) {
			t.Errorf("%s: the environment changed: %q", tt.name, got)
		}
		for _, kv := range got {
			if strings.HasPrefix(kv, "GIT_CONFIG_VALUE_0=") && strings.Contains(kv, "ghp_x") {
				t.Errorf("%s: the token copied into the configuration: %q", tt.name, kv)
			}
		}
	}
}
