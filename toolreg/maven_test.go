package toolreg

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeMaven installs a Maven at dir: bin/mvn, lib/ with a model builder
// jar holding a super POM of repos, conf/settings.xml of global.
func fakeMaven(t *testing.T, dir string, repos []string, global string) {
	t.Helper()
	for _, d := range []string{"bin", "lib", "conf"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	os.WriteFile(filepath.Join(dir, "bin", "mvn"), []byte("#!/bin/sh\n"), 0o755)
	f, err := os.Create(filepath.Join(dir, "lib", "maven-model-builder-3.9.9.jar"))
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	w, _ := z.Create("org/apache/maven/model/pom-4.0.0.xml")
	pom := "<project><repositories>"
	for _, r := range repos {
		pom += "<repository><id>central</id><url>" + r + "</url></repository>"
	}
	pom += "</repositories><pluginRepositories><pluginRepository><url>" + repos[0] + "</url></pluginRepository></pluginRepositories></project>"
	w.Write([]byte(pom))
	z.Close()
	f.Close()
	if global != "" {
		os.WriteFile(filepath.Join(dir, "conf", "settings.xml"), []byte(global), 0o644)
	}
}

const blocker = `<settings><mirrors><mirror><id>maven-default-http-blocker</id><mirrorOf>external:http:*</mirrorOf><url>http://0.0.0.0/</url><blocked>true</blocked></mirror></mirrors></settings>`

// Maven's registries: its own default (the super POM of the installation
// the host's mvn runs, through a symlink), a mirror of settings.xml in
// its place, the repositories of active profiles, a blocked mirror never;
// a project's POM and wrapper, which the sandbox can write, in a note.
func TestResolveMaven(t *testing.T) {
	for _, tt := range []struct {
		name     string
		user     string // ~/.m2/settings.xml
		pom      string // the project's pom.xml (writable)
		wrapper  string
		want     []string
		noteHas  []string
		writable bool // the user's settings.xml is writable
	}{
		{name: "default", want: []string{"repo.maven.apache.org:443"}},
		{name: "a mirror of everything", user: `<settings><mirrors><mirror><id>corp</id><mirrorOf>*</mirrorOf><url>https://nexus.corp.example/repository/maven/</url></mirror></mirrors></settings>`,
			want: []string{"nexus.corp.example:443"}},
		{name: "a mirror of all but central", user: `<settings><mirrors><mirror><mirrorOf>*,!central</mirrorOf><url>https://m.example/</url></mirror></mirrors></settings>`,
			want: []string{"m.example:443", "repo.maven.apache.org:443"}},
		{name: "active profiles", user: `<settings><profiles>
			<profile><id>a</id><activation><activeByDefault>true</activeByDefault></activation><repositories><repository><url>https://a.example/m2</url></repository></repositories></profile>
			<profile><id>b</id><pluginRepositories><pluginRepository><url>http://b.example:8081/p</url></pluginRepository></pluginRepositories></profile>
			<profile><id>c</id><repositories><repository><url>https://c.example/</url></repository></repositories></profile>
			</profiles><activeProfiles><activeProfile>b</activeProfile></activeProfiles></settings>`,
			want: []string{"a.example:443", "b.example:8081", "repo.maven.apache.org:443"}},
		{name: "settings the sandbox can write", writable: true, user: `<settings><mirrors><mirror><mirrorOf>central</mirrorOf><url>https://evil.example/</url></mirror></mirrors></settings>`,
			want: []string{"repo.maven.apache.org:443"}, noteHas: []string{"--allow-domain evil.example:443"}},
		{name: "settings that do not parse", user: `<settings><mirrors>`, want: []string{"repo.maven.apache.org:443"}, noteHas: []string{"cannot be read as settings"}},
		{name: "the project's own", pom: `<project><repositories><repository><url>https://proj.example/r</url></repository></repositories></project>`,
			wrapper: "distributionUrl=https\\://wrap.example/maven.zip\n",
			want:    []string{"repo.maven.apache.org:443"}, noteHas: []string{"--allow-domain proj.example:443", "--allow-domain wrap.example:443"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			inst := filepath.Join(t.TempDir(), "share", "maven")
			fakeMaven(t, inst, []string{"https://repo.maven.apache.org/maven2"}, blocker)
			os.Symlink(filepath.Join(inst, "bin", "mvn"), filepath.Join(f.bin, "mvn"))
			var userPath string
			if tt.user != "" {
				userPath = f.write(".m2/settings.xml", tt.user)
			}
			if tt.pom != "" {
				f.write(filepath.Join(f.cwd, "pom.xml"), tt.pom)
			}
			if tt.wrapper != "" {
				f.write(filepath.Join(f.cwd, ".mvn", "wrapper", "maven-wrapper.properties"), tt.wrapper)
			}
			env := f.env()
			env.Writable = func(p string) bool {
				return strings.HasPrefix(p, f.cwd+"/") || tt.writable && p == userPath
			}
			r := Resolve([]string{Maven}, env)
			if got := patterns(r); !slices.Equal(got, tt.want) {
				t.Errorf("hosts %v, want %v (notes %q)", got, tt.want, r.Notes)
			}
			notes := strings.Join(r.Notes, "\n")
			for _, w := range tt.noteHas {
				if !strings.Contains(notes, w) {
					t.Errorf("notes %q lack %q", r.Notes, w)
				}
			}
			if len(tt.noteHas) == 0 && len(r.Notes) > 0 {
				t.Errorf("notes %q, want none", r.Notes)
			}
		})
	}
}

// ~/.m2/settings.xml is hidden inside (its servers hold passwords): Maven
// there reads a copy of its mirrors and active profiles' repositories,
// with no server, password, proxy, property or URL user, and a note names
// the servers whose credentials stay outside.
func TestMavenSettingsCopy(t *testing.T) {
	f := newFake(t)
	inst := filepath.Join(t.TempDir(), "maven")
	fakeMaven(t, inst, []string{"https://repo.maven.apache.org/maven2"}, blocker)
	os.Symlink(filepath.Join(inst, "bin", "mvn"), filepath.Join(f.bin, "mvn"))
	user := f.write(".m2/settings.xml", `<?xml version="1.0"?>
<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0">
  <localRepository>/elsewhere/repo</localRepository>
  <servers>
    <server><id>corp</id><username>me</username><password>SECRET-PASSWORD</password></server>
    <server><id>unused</id><privateKey>/home/me/.ssh/id_rsa</privateKey><passphrase>SECRET-PHRASE</passphrase></server>
  </servers>
  <proxies><proxy><host>proxy.example</host><password>SECRET-PROXY</password></proxy></proxies>
  <mirrors>
    <mirror><id>corp</id><name>Corp &amp; co</name><mirrorOf>*</mirrorOf><url>https://u:SECRET-USERINFO@nexus.corp.example/maven/</url></mirror>
    <mirror><id>blocker</id><mirrorOf>external:http:*</mirrorOf><url>http://0.0.0.0/</url><blocked>true</blocked></mirror>
    <mirror><id>tok</id><mirrorOf>tok</mirrorOf><url>https://tok.example/m2?token=SECRET-QUERY</url></mirror>
    <mirror><id>bad</id><mirrorOf>bad</mirrorOf><url>https://u:SECRET-UNPARSED@bad example/</url></mirror>
  </mirrors>
  <profiles>
    <profile><id>snap</id>
      <properties><token>SECRET-PROPERTY</token></properties>
      <repositories><repository><id>snapshots</id><url>https://snap.example/m2</url><releases><enabled>false</enabled></releases><snapshots><enabled>true</enabled><updatePolicy>always</updatePolicy></snapshots></repository></repositories>
    </profile>
    <profile><id>idle</id><repositories><repository><id>idle</id><url>https://idle.example/</url></repository></repositories></profile>
    <profile><id>dflt</id><activation><activeByDefault>true</activeByDefault></activation><pluginRepositories><pluginRepository><id>plug</id><url>https://plug.example/</url></pluginRepository></pluginRepositories></profile>
  </profiles>
  <activeProfiles><activeProfile>snap</activeProfile></activeProfiles>
</settings>`)
	r := Resolve([]string{Maven}, f.env())
	if len(r.Files) != 1 || r.Files[0].Path != user {
		t.Fatalf("files %+v, want the copy at %s", r.Files, user)
	}
	data := string(r.Files[0].Data)
	for _, bad := range []string{"SECRET", "<server", "<proxy", "<password", "localRepository", "properties", "idle", "u:", "></"} {
		if strings.Contains(data, bad) {
			t.Errorf("the copy holds %q:\n%s", bad, data)
		}
	}
	// What Maven needs survives, parsed back as Maven would.
	s, err := parseMavenSettings([]byte(data))
	if err != nil {
		t.Fatalf("the copy does not parse: %v\n%s", err, data)
	}
	if len(s.Mirrors) != 2 || s.Mirrors[0].URL != "https://nexus.corp.example/maven/" || s.Mirrors[0].Name != "Corp & co" || s.Mirrors[0].MirrorOf != "*" || !s.Mirrors[1].Blocked {
		t.Errorf("mirrors %+v", s.Mirrors)
	}
	if len(s.Profiles) != 2 || !slices.Equal(s.ActiveProfiles, []string{"snap"}) || !s.Profiles[1].ActiveByDefault {
		t.Errorf("profiles %+v active %q", s.Profiles, s.ActiveProfiles)
	}
	if rp := s.Profiles[0].Repositories; len(rp) != 1 || rp[0].ID != "snapshots" || rp[0].Releases == nil || rp[0].Releases.Enabled != "false" || rp[0].Snapshots.UpdatePolicy != "always" {
		t.Errorf("the active profile's repository %+v", rp)
	}
	if !strings.HasPrefix(data, "<?xml") || !strings.Contains(data, "Written by jail from ~/.m2/settings.xml") {
		t.Errorf("the copy does not say what it is:\n%s", data)
	}
	notes := strings.Join(r.Notes, "\n")
	if len(r.Notes) != 2 || !strings.Contains(notes, "corp reached without credentials") || strings.Contains(notes, "unused") ||
		!strings.Contains(notes, "without 2 of its repository URLs") || strings.Contains(notes, "SECRET") {
		t.Errorf("notes %q: want one naming the server corp, one counting the URLs left out, no secret", r.Notes)
	}
	// The sandbox can write it: no copy (its hosts are not allowed either).
	e := f.env()
	e.Writable = func(p string) bool { return p == user }
	if r := Resolve([]string{Maven}, e); len(r.Files) != 0 {
		t.Errorf("a copy of a settings file the sandbox can write: %+v", r.Files)
	}
}

// A FIFO the agent made at the project's pom.xml is skipped, not waited
// on (every later start with the profile would hang).
func TestResolveMavenFIFO(t *testing.T) {
	f := newFake(t)
	inst := filepath.Join(t.TempDir(), "maven")
	fakeMaven(t, inst, []string{"https://repo.maven.apache.org/maven2"}, "")
	os.Symlink(filepath.Join(inst, "bin", "mvn"), filepath.Join(f.bin, "mvn"))
	if err := syscall.Mkfifo(filepath.Join(f.cwd, "pom.xml"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan Result, 1)
	go func() { done <- Resolve([]string{Maven}, f.env()) }()
	select {
	case r := <-done:
		if got := patterns(r); !slices.Equal(got, []string{"repo.maven.apache.org:443"}) {
			t.Fatalf("hosts %v", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Resolve waited on a FIFO at pom.xml")
	}
}

// Without a mvn to read the default from, nothing is guessed: a note
// names the flag.
func TestResolveMavenNoTool(t *testing.T) {
	f := newFake(t)
	r := Resolve([]string{Maven}, f.env())
	if len(r.Hosts) != 0 || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "--allow-domain HOST") {
		t.Fatalf("hosts %v notes %q", r.Hosts, r.Notes)
	}
}

func TestMirrorsCentral(t *testing.T) {
	for of, want := range map[string]bool{
		"*": true, "central": true, "external:*": true, "repo1,central": true, " * ": true,
		"*,!central": false, "external:http:*": false, "other": false, "": false,
	} {
		if got := mirrorsCentral(of); got != want {
			t.Errorf("%q: %v, want %v", of, got, want)
		}
	}
}

// FuzzMavenSettings: any settings file parses or fails without a panic.
func FuzzMavenSettings(f *testing.F) {
	f.Add([]byte(blocker))
	f.Add([]byte(`<settings><profiles><profile><id>a</id></profile></profiles></settings>`))
	f.Add([]byte(`<settings><servers><server><id>m</id><password>p</password></server></servers><mirrors><mirror><id>m</id><mirrorOf>*</mirrorOf><url>https://u:p@m.example/</url></mirror></mirrors><profiles><profile><id>a</id><repositories><repository><id>r</id><url>https://r.example/</url><snapshots><enabled>false</enabled></snapshots></repository></repositories></profile></profiles><activeProfiles><activeProfile>a</activeProfile></activeProfiles></settings>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if s, err := parseMavenSettings(data); err == nil {
			for _, m := range s.Mirrors {
				mirrorsCentral(m.MirrorOf)
			}
			// The copy of any settings Maven inside would read parses
			// back, with no server in it.
			c := &collector{env: &Env{Home: "/h"}, tool: Maven}
			mavenCopy(c, "/h/.m2/settings.xml", s)
			for _, f := range c.files {
				back, err := parseMavenSettings(f.Data)
				if err != nil || len(back.Servers) != 0 || bytes.Contains(f.Data, []byte("<server")) {
					t.Fatalf("copy %q: %v %+v", f.Data, err, back)
				}
			}
		}
		parseMavenPOM(data)
	})
}
