//go:build linux

package tests

// `jail -- mvn package` was refused Maven's central repository and told
// to allow that one name: the artifacts then landed in the sandbox's
// empty home, gone at the end, and nothing named a profile (session 50,
// trying it as a user would; there was no Maven profile). -P maven keeps
// ~/.m2/repository of jail's own and allows what Maven is configured
// with; the end of a run that refused Maven's registry names it. A
// stand-in Maven installation, outside the workspace, carries the super
// POM whose central is the test's reserved name; its mvn connects there.

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRegistryNamesMaven(t *testing.T) {
	home, ws := workspace(t), workspace(t)
	inst := besideHome(t, "registrymaven-")
	for _, d := range []string{"bin", "lib", "conf"} {
		os.MkdirAll(filepath.Join(inst, d), 0o755)
	}
	mvn := "#!/bin/bash\n(exec 3<>/dev/tcp/central.hinted.invalid/443) 2>/dev/null\nexit 0\n"
	if err := os.WriteFile(filepath.Join(inst, "bin", "mvn"), []byte(mvn), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(inst, "lib", "maven-model-builder-3.9.9.jar"))
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	w, _ := z.Create("org/apache/maven/model/pom-4.0.0.xml")
	w.Write([]byte(`<project><repositories><repository><id>central</id><url>https://central.hinted.invalid/maven2</url></repository></repositories></project>`))
	z.Close()
	f.Close()
	os.Chmod(filepath.Join(inst, "lib", "maven-model-builder-3.9.9.jar"), 0o644)
	env := runOpts{dir: ws, env: []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"), "PATH=" + filepath.Join(inst, "bin") + ":/usr/bin:/bin"}}
	const hinted = "jail: central.hinted.invalid:443, refused in this run, is a registry maven is configured with: add --profile maven, which allows it and keeps caches of jail's own\n"
	r := run(t, env, "--", "mvn", "-B", "package")
	mustCode(t, r, 0)
	if !strings.Contains(r.stderr, "refused central.hinted.invalid:443") {
		t.Fatalf("no refusal: the stand-in mvn did not connect\nstderr:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, hinted) {
		t.Errorf("the maven profile not named\n want %s\nstderr:\n%s", hinted, r.stderr)
	}
	// With the profile, Maven's default is allowed at start, from the
	// installation the host's mvn runs.
	r = run(t, env, "-P", "maven", "--dry-run", "--", "mvn", "package")
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout+r.stderr, "central.hinted.invalid") {
		t.Errorf("-P maven does not allow Maven's default repository:\n%s\n%s", r.stdout, r.stderr)
	}
}
