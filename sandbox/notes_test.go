package sandbox

import (
	"reflect"
	"testing"
)

func TestMergeRootNotes(t *testing.T) {
	roots := []string{"/w/a", "/w/b", "/w/a/sub", "/ws"}
	for _, tc := range []struct {
		name     string
		in, want []string
	}{
		{"none", nil, []string{}},
		{"same text, three roots", []string{
			"/w/a: .bashrc do not exist, so ...",
			"/w/a: .ssh/ do not exist, so nothing is masked",
			"/w/b: .bashrc do not exist, so ...",
			"/w/b: .ssh/ do not exist, so nothing is masked",
			"/ws: .bashrc do not exist, so ...",
		}, []string{
			"/w/a, /w/b, /ws: .bashrc do not exist, so ...",
			"/w/a, /w/b: .ssh/ do not exist, so nothing is masked",
		}},
		{"different lists stay apart", []string{
			"/w/a: .bashrc .profile do not exist",
			"/w/b: .bashrc do not exist",
		}, []string{
			"/w/a: .bashrc .profile do not exist",
			"/w/b: .bashrc do not exist",
		}},
		{"the longest root", []string{
			"/w/a/sub: x",
			"/w/a: x",
		}, []string{"/w/a/sub, /w/a: x"}},
		{"other notes keep their place", []string{
			"--deny *.key matched nothing (pattern /ws/**/*.key)",
			"/w/a: x",
			"/w/ab: x", // not a root (no prefix match on a partial name)
			"/w/b: x",
			"cgroup v1: the agent is moved in after start",
		}, []string{
			"--deny *.key matched nothing (pattern /ws/**/*.key)",
			"/w/a, /w/b: x",
			"/w/ab: x",
			"cgroup v1: the agent is moved in after start",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mergeRootNotes(tc.in, roots); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
