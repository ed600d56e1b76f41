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
	inst := standInMaven(t)
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

// A user whose ~/.m2/settings.xml sends Maven to a mirror got, under
// -P maven, the mirror allowed and a Maven inside that never read the
// file (hidden: its servers hold passwords), so it went to central and
// was refused. Maven inside now reads a copy of the mirrors and active
// profiles' repositories, never a password; --read the file and the
// host's own is what Maven reads.
func TestMavenSettingsCopyInside(t *testing.T) {
	home, ws := workspace(t), workspace(t)
	inst := standInMaven(t)
	settings := filepath.Join(home, ".m2", "settings.xml")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	if err := os.WriteFile(settings, []byte(`<settings>
  <servers><server><id>corp</id><username>me</username><password>SECRET-PASSWORD</password></server></servers>
  <mirrors><mirror><id>corp</id><mirrorOf>*</mirrorOf><url>https://mirror.hinted.invalid/maven/</url></mirror></mirrors>
</settings>`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := runOpts{dir: ws, env: []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"), "PATH=" + filepath.Join(inst, "bin") + ":/usr/bin:/bin"}}
	r := run(t, env, "-P", "maven", "--", "cat", settings)
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout, "<url>https://mirror.hinted.invalid/maven/</url>") || strings.Contains(r.stdout, "SECRET") || strings.Contains(r.stdout, "<server") {
		t.Errorf("Maven inside does not read the mirror, or reads a password:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "corp reached without credentials; if the agent may have them, --read ~/.m2/settings.xml --no-default-deny-at ~/.m2/settings.xml") {
		t.Errorf("the server whose password stays outside is not named\nstderr:\n%s", r.stderr)
	}
	// The copy is read-only, and nothing was made on the host.
	r = run(t, env, "-P", "maven", "--", "sh", "-c", "echo x >> "+settings)
	if r.code == 0 {
		t.Errorf("the copy is writable inside")
	}
	if data, _ := os.ReadFile(settings); !strings.Contains(string(data), "SECRET-PASSWORD") {
		t.Errorf("the host's settings changed: %s", data)
	}
	// Shown from the host (the flags the note names), the host's own
	// file is what Maven reads.
	r = run(t, env, "-P", "maven", "--read", settings, "--no-default-deny-at", settings, "--", "cat", settings)
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout, "SECRET-PASSWORD") {
		t.Errorf("--read %s: not the host's file:\n%s", settings, r.stdout)
	}
}

// standInMaven makes a Maven installation outside the workspace whose
// super POM's central is a reserved name, and whose mvn connects there.
func standInMaven(t *testing.T) string {
	t.Helper()
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
	return inst
}
