package gitguard

import (
	"os"
	"slices"
	"testing"
)

// The user's own git config names directories and programs by absolute
// path: inside a writable tree they are protected even when no repository
// is there (a global core.hooksPath runs in every repository of the host;
// init.templateDir's hooks are copied into every new one).
func TestScanUserConfigPathsNoRepo(t *testing.T) {
	ws, home := tmp(t), tmp(t)
	os.MkdirAll(ws+"/githooks", 0o755)
	os.MkdirAll(ws+"/tmpl/hooks", 0o755)
	write(t, ws+"/bin/key.sh", "#!/bin/sh\n", 0o755)
	write(t, home+"/.gitconfig", "[core]\n\thooksPath = "+ws+"/githooks\n[init]\n\ttemplateDir = "+ws+"/tmpl\n"+
		"[gpg \"ssh\"]\n\tdefaultKeyCommand = "+ws+"/bin/key.sh\n[credential]\n\thelper = "+ws+"/bin/absent-helper\n", 0o644)
	p := scan(t, ws, func(in *Input) { in.UserConfigs = []string{home + "/.gitconfig"}; in.Home = home })
	ro := paths(p.ReadOnly, ws)
	for _, want := range []string{"githooks", "tmpl", "bin/key.sh"} {
		if !slices.Contains(ro, want) {
			t.Errorf("%s not read-only: %v", want, ro)
		}
	}
	if ab := paths(p.Absent, ws); !slices.Contains(ab, "bin/absent-helper") {
		t.Errorf("credential.helper's absent program not watched: %v", ab)
	}
}
