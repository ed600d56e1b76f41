//go:build linux

package tests

// End-to-end and adversarial tests of the filesystem policy (issue 3): the
// built-in secret masks and write protections, --deny globs, --max-file-size,
// --dry-run, --require-landlock, bad input and Landlock as a second wall (the
// startup cost of deny patterns is measured by `make bench`, section deny).
//
// Every attack is paired with a control run (the same script with the
// protection lifted, e.g. --no-default-deny) that must show the attack working:
// a test whose attack cannot succeed anyway proves nothing.

import (
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fsSecretPrefix starts every planted secret. Scripts mention only the
// prefix, never a whole secret, so a secret in the output is a real leak.
const fsSecretPrefix = "JAILFSSECRET"

func fsSecret(name string) string {
	return fmt.Sprintf("%s-%s-%08x", fsSecretPrefix, strings.NewReplacer("/", "_", ".", "_").Replace(name), rand.Uint32())
}

// fsWrite creates root/rel with content (parents 0755) and mode.
func fsWrite(t testing.TB, root, rel, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, mode) // umask
	return p
}

// fsSecrets plants one secret per relative path and returns path -> secret.
func fsSecrets(t testing.TB, root string, rels ...string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, r := range rels {
		s := fsSecret(r)
		fsWrite(t, root, r, s+"\n", 0o644)
		m[r] = s
	}
	return m
}

// fsReadAll is a shell snippet that tries every way we know to read each
// path named in its arguments and prints whatever it gets.
const fsReadAll = `
for f in "$@"; do
  echo "== $f"
  cat "$f" 2>&1
  dd if="$f" status=none 2>&1
  tail -c 200 "$f" 2>&1
  perl -e 'open(F, "<", $ARGV[0]) or die "perl: $!\n"; print <F>' "$f" 2>&1
  cp "$f" /tmp/fscopy 2>&1 && cat /tmp/fscopy; rm -f /tmp/fscopy
  chmod 0644 "$f" 2>/dev/null; cat "$f" 2>/dev/null
done
true
`

// fsLeaks returns the secrets (by name) found in s.
func fsLeaks(s string, secrets map[string]string) []string {
	var out []string
	for name, sec := range secrets {
		if strings.Contains(s, sec) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// fsTree lists every entry under root (relative, with a trailing / for
// directories and " -> target" for symlinks).
func fsTree(t testing.TB, root string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case d.IsDir():
			rel += "/"
		case d.Type()&fs.ModeSymlink != 0:
			tg, _ := os.Readlink(p)
			rel += " -> " + tg
		}
		out = append(out, rel)
		return nil
	})
	return out
}

func fsReadFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// fsHome returns the test process's own home directory as jail sees it
// ($HOME, made by TestMain in main_test.go; never the real one).
func fsHome(t testing.TB) string {
	t.Helper()
	needVisibleHome(t)
	h := os.Getenv("HOME")
	if h == "" {
		t.Fatal("HOME is not set")
	}
	if r, err := filepath.EvalSymlinks(h); err == nil {
		h = r
	}
	return h
}

// fsPlantHome creates dir/file in the test home with a secret, never
// touching anything that already exists: if dir exists, the file gets a
// unique name (still matching the built-in patterns). Everything is removed
// at cleanup. Directory and file are world-readable, so that as root (the
// sandbox runs as host nobody) only jail's rules can hide them, not the modes.
func fsPlantHome(t testing.TB, home, dir, file string) (path, secret string) {
	t.Helper()
	d := filepath.Join(home, dir)
	if _, err := os.Lstat(d); err != nil {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatalf("create %s: %v", d, err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
	} else {
		file = fmt.Sprintf("%s.jailfs-%08x", file, rand.Uint32())
	}
	path = filepath.Join(d, file)
	if _, err := os.Lstat(path); err == nil {
		t.Fatalf("%s exists; refusing to overwrite it", path)
	}
	secret = fsSecret(dir + "/" + file)
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(d, 0o755)    // umask
	os.Chmod(path, 0o644) // umask
	t.Cleanup(func() { os.Remove(path) })
	return path, secret
}

// fsLandlockABI asks the kernel for its Landlock ABI (0: none).
func fsLandlockABI() int {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, 1 /* LANDLOCK_CREATE_RULESET_VERSION */)
	if e != 0 {
		return 0
	}
	return int(v)
}

// --- built-in secret masks ------------------------------------------------

// Every built-in "unreadable anywhere" name, planted in the workspace (at the
// top and deep in the tree), is unreadable by every read path we know; the
// same script without the protection reads them all (control).
func TestFSBuiltinSecretsUnreadable(t *testing.T) {
	ws := workspace(t)
	rels := []string{
		".env", ".env.local", "sub/.env.production", "deep/a/b/c/d/server.pem",
		"api.key", "id_rsa", "backup/id_ed25519.old", ".netrc", ".git-credentials",
		".npmrc", ".pypirc", ".docker/config.json", ".kube/config",
		".ssh/config", "nested/.ssh/id_rsa_other", ".aws/credentials", ".gnupg/private-keys",
	}
	secrets := fsSecrets(t, ws, rels...)
	fsWrite(t, ws, "plain.txt", "visible\n", 0o644)
	before := fsTree(t, ws)

	script := fsReadAll + `
echo "== grep"; grep -rao '` + fsSecretPrefix + `[A-Za-z0-9_-]*' . 2>/dev/null
echo "== tar"; tar cf - . 2>/dev/null | grep -ao '` + fsSecretPrefix + `[A-Za-z0-9_-]*'
echo "== plain"; cat plain.txt
`
	args := append([]string{"--", "/bin/sh", "-c", script, "sh"}, rels...)

	r := run(t, runOpts{dir: ws}, args...)
	mustCode(t, r, 0)
	if l := fsLeaks(r.stdout+r.stderr, secrets); len(l) > 0 {
		t.Errorf("built-in masks leak %v:\n%s", l, r.stdout)
	}
	if !strings.Contains(r.stdout, "visible") {
		t.Errorf("an ordinary file of the workspace is unreadable:\n%s", r.stdout)
	}
	// Writing a secret file must not work either (and must not reach the host).
	w := sh(t, runOpts{dir: ws}, `for f in .env deep/a/b/c/d/server.pem .ssh/config; do echo PWNED > "$f"; echo PWNED >> "$f"; done; rm -rf .ssh .aws 2>/dev/null; true`)
	mustCode(t, w, 0)
	for _, rel := range []string{".env", "deep/a/b/c/d/server.pem", ".ssh/config", ".aws/credentials"} {
		if got := fsReadFile(t, filepath.Join(ws, rel)); got != secrets[rel]+"\n" {
			t.Errorf("masked %s changed on the host: %q", rel, got)
		}
	}
	// Nothing created on the host (no placeholders, no mount points).
	if after := fsTree(t, ws); strings.Join(before, "\n") != strings.Join(after, "\n") {
		t.Errorf("the workspace changed on the host:\nbefore %v\nafter  %v", before, after)
	}

	// Control: without the built-ins the very same script reads every secret.
	c := run(t, runOpts{dir: ws}, append([]string{"--no-default-deny"}, args...)...)
	mustCode(t, c, 0)
	if l := fsLeaks(c.stdout, secrets); len(l) != len(secrets) {
		t.Fatalf("control (--no-default-deny) read only %v of %d secrets: the attack is broken\n%s%s", l, len(secrets), c.stdout, c.stderr)
	}
}

// ~/.ssh/id_rsa and ~/.aws/credentials, made visible with -r ~/.ssh, -r ~/.aws
// or -r ~, stay unreadable: either jail refuses the flag (125, naming it) or
// the files are masked. Without the built-ins -r ~ shows them (control).
func TestFSHomeSecrets(t *testing.T) {
	home := fsHome(t)
	sshKey, sshSecret := fsPlantHome(t, home, ".ssh", "id_rsa")
	awsCred, awsSecret := fsPlantHome(t, home, ".aws", "credentials")
	secrets := map[string]string{"~/.ssh/id_rsa": sshSecret, "~/.aws/credentials": awsSecret}
	homeBefore := fsTree(t, filepath.Join(home, ".ssh"))
	ws := workspace(t)
	script := fsReadAll + `echo "== ls"; ls -la "$HOME" "$HOME/.ssh" "$HOME/.aws" 2>&1; true`
	args := func(flags ...string) []string {
		return append(append(flags, "--", "/bin/sh", "-c", script, "sh"), sshKey, awsCred)
	}

	for _, flags := range [][]string{{}, {"-r", home}, {"-r", filepath.Join(home, ".ssh")}, {"-r", filepath.Join(home, ".aws")}, {"-r", sshKey}} {
		t.Run(strings.Join(append([]string{"flags"}, flags...), " "), func(t *testing.T) {
			r := run(t, runOpts{dir: ws}, args(flags...)...)
			if l := fsLeaks(r.stdout+r.stderr, secrets); len(l) > 0 {
				t.Fatalf("home secrets leak %v (exit %d):\n%s", l, r.code, r.stdout)
			}
			switch r.code {
			case 0:
			case 125:
				// Refusing -r ~/.ssh is fine; refusing the home itself is not.
				if len(flags) == 0 || flags[1] == home {
					t.Fatalf("exit 125: %s", r.stderr)
				}
				if len(flags) == 0 || !strings.Contains(r.stderr, flags[1]) || !strings.Contains(r.stderr, map[string]string{"-r": "--read", "-w": "--write"}[flags[0]]) {
					t.Fatalf("refused with a message that names neither the flag nor the path: %q", r.stderr)
				}
			default:
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
	if after := fsTree(t, filepath.Join(home, ".ssh")); strings.Join(homeBefore, "\n") != strings.Join(after, "\n") {
		t.Errorf("~/.ssh changed on the host: %v -> %v", homeBefore, after)
	}
	if got := fsReadFile(t, sshKey); got != sshSecret+"\n" {
		t.Errorf("~/.ssh key changed on the host: %q", got)
	}

	c := run(t, runOpts{dir: ws}, args("--no-default-deny", "-r", home)...)
	mustCode(t, c, 0)
	if l := fsLeaks(c.stdout, secrets); len(l) != 2 {
		t.Fatalf("control (--no-default-deny -r ~) read only %v: the attack is broken\n%s%s", l, c.stdout, c.stderr)
	}
	// Control: with $HOME naming another directory and no built-ins, the
	// files are readable through the host's read-only view, so what hides
	// them in the runs above is jail's rules, not where the test home lies.
	c = run(t, runOpts{dir: ws, env: []string{"HOME=/nonexistent-jail-home", "XDG_STATE_HOME=" + t.TempDir()}}, args("--no-default-deny")...)
	mustCode(t, c, 0)
	if l := fsLeaks(c.stdout, secrets); len(l) != 2 {
		t.Fatalf("control (--no-default-deny, $HOME elsewhere) read only %v: the test home is not visible\n%s%s", l, c.stdout, c.stderr)
	}
}

// --- built-in write protections --------------------------------------------

// fsProtected are planted in the workspace by the write-protection tests.
var fsProtected = map[string]string{
	".git/hooks/pre-commit":   "#!/bin/sh\necho original hook\n",
	".git/config":             "[core]\n\trepositoryformatversion = 0\n",
	".gitmodules":             "[submodule \"x\"]\n\tpath = x\n",
	".bashrc":                 "# original bashrc\n",
	".profile":                "# original profile\n",
	".zshrc":                  "# original zshrc\n",
	".mcp.json":               "{}\n",
	".vscode/tasks.json":      "{}\n",
	".idea/workspace.xml":     "<x/>\n",
	".claude/commands/c.md":   "original command\n",
	".claude/agents/a.md":     "original agent\n",
	"sub/project/.git/config": "[core]\n",
}

func fsPlantProtected(t testing.TB, ws string) {
	for rel, c := range fsProtected {
		mode := os.FileMode(0o644)
		if strings.Contains(rel, "hooks/") {
			mode = 0o755
		}
		fsWrite(t, ws, rel, c, mode)
	}
	os.MkdirAll(filepath.Join(ws, ".git/objects"), 0o755)
	fsWrite(t, ws, ".git/HEAD", "ref: refs/heads/main\n", 0o644)
}

// fsPlanted reports protected paths whose host content is no longer the
// original one (or that became something other than a regular file), and
// files created in protected directories.
func fsPlanted(t testing.TB, ws string, only func(rel string) bool) []string {
	t.Helper()
	var bad []string
	for rel, want := range fsProtected {
		if only != nil && !only(rel) {
			continue
		}
		p := filepath.Join(ws, rel)
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			bad = append(bad, fmt.Sprintf("%s: %v %v", rel, err, fi))
			continue
		}
		if got := fsReadFile(t, p); got != want {
			bad = append(bad, fmt.Sprintf("%s = %q", rel, got))
		}
	}
	for _, dir := range []string{".git/hooks", ".vscode", ".claude/commands", ".claude/agents"} {
		if only != nil && !only(dir+"/") {
			continue
		}
		ents, _ := os.ReadDir(filepath.Join(ws, dir))
		for _, e := range ents {
			rel := dir + "/" + e.Name()
			if _, ok := fsProtected[rel]; !ok {
				bad = append(bad, "created "+rel)
			}
		}
	}
	sort.Strings(bad)
	return bad
}

const fsWriteAttack = `
for f in "$@"; do
  echo PWNED >> "$f"
  echo PWNED > "$f"
  printf PWNED | dd of="$f" conv=notrunc status=none
  perl -e 'open(F, "+<", $ARGV[0]) or die "perl: $!\n"; print F "PWNED"' "$f"
  truncate -s 0 "$f"
  rm -f "$f"
  mv -f "$f" "$f.moved"
  ln -sf /tmp/evil "$f"
  ln -f /tmp/evil "$f"
done 2>/dev/null
echo PWNED > /tmp/evil
for d in .git/hooks .vscode .claude/commands .claude/agents; do
  echo PWNED > "$d/new-file"
  cp /tmp/evil "$d/post-checkout"
  mv -f "$d" "$d.moved"
  rm -rf "$d"
done 2>/dev/null
echo "== read"; cat .git/config .bashrc .git/hooks/pre-commit
true
`

// Appending to, overwriting, truncating, deleting or replacing each built-in
// read-only file (.git/hooks/*, .git/config, .gitmodules, shell rc files,
// .mcp.json, .vscode/, .idea/, .claude/commands|agents/) fails and leaves the
// host untouched, while the files stay readable. Controls: --no-default-deny
// lets the same attack through; --allow-git-config lifts only the git rules.
func TestFSWriteProtections(t *testing.T) {
	var files []string
	for rel := range fsProtected {
		files = append(files, rel)
	}
	sort.Strings(files)
	args := func(flags ...string) []string {
		return append(append(flags, "--", "/bin/sh", "-c", fsWriteAttack, "sh"), files...)
	}

	ws := workspace(t)
	fsPlantProtected(t, ws)
	r := run(t, runOpts{dir: ws}, args()...)
	mustCode(t, r, 0)
	if bad := fsPlanted(t, ws, nil); len(bad) > 0 {
		t.Errorf("write protections bypassed:\n  %s", strings.Join(bad, "\n  "))
	}
	for _, want := range []string{fsProtected[".git/config"], fsProtected[".bashrc"], "original hook"} {
		if !strings.Contains(r.stdout, strings.TrimSpace(want)) {
			t.Errorf("protected files must stay readable; output lacks %q:\n%s", want, r.stdout)
		}
	}

	t.Run("control --no-default-deny", func(t *testing.T) {
		ws := workspace(t)
		fsPlantProtected(t, ws)
		mustCode(t, run(t, runOpts{dir: ws}, args("--no-default-deny")...), 0)
		if bad := fsPlanted(t, ws, nil); len(bad) < len(fsProtected) {
			t.Fatalf("control: the attack changed only %d of %d files: it is broken\n%v", len(bad), len(fsProtected), bad)
		}
	})

	t.Run("--allow-git-config", func(t *testing.T) {
		ws := workspace(t)
		fsPlantProtected(t, ws)
		mustCode(t, run(t, runOpts{dir: ws}, args("--allow-git-config")...), 0)
		isGit := func(rel string) bool {
			return strings.Contains(rel, ".git/") || rel == ".gitmodules"
		}
		if bad := fsPlanted(t, ws, func(rel string) bool { return !isGit(rel) }); len(bad) > 0 {
			t.Errorf("--allow-git-config lifted non-git protections:\n  %s", strings.Join(bad, "\n  "))
		}
		for _, rel := range []string{".git/config", ".git/hooks/pre-commit", ".gitmodules"} {
			if got := fsReadFile(t, filepath.Join(ws, rel)); got == fsProtected[rel] {
				t.Errorf("--allow-git-config: %s still not writable", rel)
			}
		}
	})
}

// Renaming a protected file fails; renaming the directory that holds it, then
// planting a fresh copy at the original path, must not work either: after
// jail exits the host's .git/hooks/pre-commit (run by the user's next git
// commit) must be the original one.
func TestFSRenameProtectedParent(t *testing.T) {
	ws := workspace(t)
	fsPlantProtected(t, ws)
	secrets := fsSecrets(t, ws, "conf/.env", "keys/deep/server.pem")
	script := `
mv .bashrc bashrc.x 2>&1; mv .git/config .git/config.x 2>&1; mv .env.x .env 2>/dev/null
mv conf/.env conf/env.txt 2>&1; cat conf/env.txt 2>&1
mv keys keys2 2>&1; cat keys2/deep/server.pem 2>&1; mkdir -p keys/deep; cat keys/deep/server.pem 2>&1
# the parent of protected paths
mv .git .git.old 2>&1 && mkdir -p .git/hooks && printf '#!/bin/sh\necho PWNED\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && printf '[core]\n\thooksPath = /tmp\n' > .git/config && echo PLANTED-GIT
mv .claude .claude.old 2>&1 && mkdir -p .claude/commands && echo PWNED > .claude/commands/c.md && echo PLANTED-CLAUDE
mv sub sub.old 2>&1 && mkdir -p sub/project/.git && echo PWNED > sub/project/.git/config && echo PLANTED-SUB
true`
	r := sh(t, runOpts{dir: ws}, script)
	mustCode(t, r, 0)
	if l := fsLeaks(r.stdout+r.stderr, secrets); len(l) > 0 {
		t.Errorf("rename exposes secrets %v:\n%s", l, r.stdout)
	}
	if bad := fsPlanted(t, ws, nil); len(bad) > 0 {
		t.Errorf("renaming a parent directory defeats the write protections (agent output:\n%s)\nhost now has:\n  %s", r.stdout, strings.Join(bad, "\n  "))
	}
}

// chmod, chown, touch, truncate, xattrs, writes, unlink and rename of a file
// made visible with -r (and of a file in a --read-only workspace) all fail and
// change nothing on the host. Control: the same attack under -w changes it.
func TestFSReadOnlyMetadata(t *testing.T) {
	attack := `
f=$1
chmod 0777 "$f"; chmod u+s "$f"
chown "$(id -u):$(id -g)" "$f"
touch "$f"; touch -d 2001-01-01 "$f"; touch -a "$f"
truncate -s 0 "$f"; truncate -s 1M "$f"
printf '' > "$f"; echo PWNED >> "$f"
python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.jailfs", b"PWNED")' "$f"
perl -e 'utime(0, 0, $ARGV[0]) or die; truncate($ARGV[0], 1) or die' "$f"
mv "$f" "$f.moved"; rm -f "$f"
ln "$f" "$(dirname "$f")/hardlink"
true`
	// ctime catches every metadata change (chmod, chown, utime, xattr, link
	// count) and is not moved by our own reads.
	type snap struct {
		mode         os.FileMode
		mtime, ctime int64
		data         string
		xattr        int
	}
	take := func(p string) snap {
		fi, err := os.Lstat(p)
		if err != nil {
			return snap{data: err.Error()}
		}
		st := fi.Sys().(*syscall.Stat_t)
		n, _ := unix.Getxattr(p, "user.jailfs", nil)
		return snap{fi.Mode(), fi.ModTime().UnixNano(), st.Ctim.Nano(), fsReadFile(t, p), n}
	}
	plant := func(dir string) string {
		p := fsWrite(t, dir, "file.txt", "original content\n", 0o644)
		old := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
		os.Chtimes(p, old, old)
		return p
	}

	cases := []struct {
		name  string
		flags func(dir string) []string
		ws    bool // the file is in the workspace
	}{
		{"-r dir", func(d string) []string { return []string{"-r", d} }, false},
		{"-r file", func(d string) []string { return []string{"-r", filepath.Join(d, "file.txt")} }, false},
		{"--read-only workspace", func(string) []string { return []string{"--read-only"} }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := workspace(t)
			ws := workspace(t)
			if c.ws {
				dir = ws
			}
			p := plant(dir)
			before := take(p)
			tree := fsTree(t, dir)
			r := run(t, runOpts{dir: ws}, append(c.flags(dir), "--", "/bin/sh", "-c", attack, "sh", p)...)
			mustCode(t, r, 0)
			if after := take(p); after != before {
				t.Errorf("read-only file changed on the host:\nbefore %+v\nafter  %+v\nagent stderr:\n%s", before, after, r.stderr)
			}
			if after := fsTree(t, dir); strings.Join(tree, ",") != strings.Join(after, ",") {
				t.Errorf("read-only directory changed: %v -> %v", tree, after)
			}
		})
	}
	// Built-in read-only files inside the writable workspace: same attack.
	t.Run("built-in .bashrc and .git/config", func(t *testing.T) {
		ws := workspace(t)
		fsPlantProtected(t, ws)
		for _, rel := range []string{".bashrc", ".git/config"} {
			p := filepath.Join(ws, rel)
			old := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
			os.Chtimes(p, old, old)
			before := take(p)
			mustCode(t, run(t, runOpts{dir: ws}, "--", "/bin/sh", "-c", attack, "sh", p), 0)
			if after := take(p); after != before {
				t.Errorf("%s changed on the host:\nbefore %+v\nafter  %+v", rel, before, after)
			}
		}
	})
	t.Run("control -w", func(t *testing.T) {
		dir := workspace(t)
		p := plant(dir)
		before := take(p)
		mustCode(t, run(t, runOpts{}, "-w", dir, "--", "/bin/sh", "-c", attack, "sh", p), 0)
		if after := take(p); after == before {
			t.Fatalf("control: the attack did not change a writable file: it is broken")
		}
	})
}

// --- symlinks and hard links --------------------------------------------------

// Symlinks and hard links toward secrets, planted on the host before jail
// starts or made by the agent, never reach the secret's content.
func TestFSSymlinkHardlinkTricks(t *testing.T) {
	ws := workspace(t)
	outside := workspace(t) // made visible read-only with -r
	secrets := fsSecrets(t, ws, ".env", ".ssh/id_rsa", "notes/plain.txt")
	secrets["outside/secret.pem"] = fsSecret("outside/secret.pem")
	fsWrite(t, outside, "secret.pem", secrets["outside/secret.pem"]+"\n", 0o644)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Host-side tricks, in place before jail starts.
	must(os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	must(os.Symlink(".env", filepath.Join(ws, "innocent.txt")))               // innocent name -> secret
	must(os.Symlink(".ssh", filepath.Join(ws, "keys")))                       // innocent dir -> secret dir
	must(os.Symlink("notes/plain.txt", filepath.Join(ws, ".env.production"))) // secret name -> innocent file
	must(os.Symlink(filepath.Join(outside, "secret.pem"), filepath.Join(ws, "cert.txt")))
	must(os.Link(filepath.Join(ws, ".env"), filepath.Join(ws, "hardlink.txt")))
	must(os.Link(filepath.Join(outside, "secret.pem"), filepath.Join(ws, "cert-copy.txt")))
	must(os.Symlink(filepath.Join(ws, ".env"), filepath.Join(outside, "abs-link")))

	script := `
# agent-made links
ln -s .env l-sym 2>/dev/null; ln .env l-hard 2>/dev/null
ln -s "$PWD/.ssh/id_rsa" l-key 2>/dev/null; ln .ssh/id_rsa l-key-hard 2>/dev/null
ln -s "/proc/self/root$PWD/.env" l-proc 2>/dev/null
cp -a .env l-copy 2>/dev/null; cp -al .ssh l-tree 2>/dev/null
set -- innocent.txt keys/id_rsa .env.production notes/plain.txt cert.txt hardlink.txt cert-copy.txt ` +
		`"$0/abs-link" "$0/secret.pem" l-sym l-hard l-key l-key-hard l-proc l-copy l-tree/id_rsa ` +
		`"/proc/self/root$PWD/.env" "/proc/1/root$PWD/.env" "/proc/self/cwd/.env" ./sub/../.env "$PWD//.env"
` + fsReadAll
	r := run(t, runOpts{dir: ws}, "-r", outside, "--", "/bin/sh", "-c", script, outside)
	mustCode(t, r, 0)
	if l := fsLeaks(r.stdout+r.stderr, secrets); len(l) > 0 {
		t.Errorf("link tricks leak %v:\n%s", l, r.stdout)
	}

	c := run(t, runOpts{dir: ws}, "--no-default-deny", "-r", outside, "--", "/bin/sh", "-c", script, outside)
	mustCode(t, c, 0)
	if l := fsLeaks(c.stdout, secrets); len(l) != len(secrets) {
		t.Fatalf("control (--no-default-deny) read only %v: the attack is broken\n%s", l, c.stdout)
	}
}

// Unmounting a mask, or hiding it under a new mount namespace, must fail.
func TestFSUnmaskAttempts(t *testing.T) {
	ws := workspace(t)
	secrets := fsSecrets(t, ws, ".env", "deep/x.pem")
	script := `
umount .env 2>/dev/null; umount -l deep/x.pem 2>/dev/null
perl -e 'syscall(166, $_, 2) for @ARGV' .env deep/x.pem 2>/dev/null
unshare -Urm sh -c 'umount -l .env; umount -l deep/x.pem; cat .env deep/x.pem' 2>/dev/null
unshare -m sh -c 'umount -l .env; cat .env' 2>/dev/null
mount --move .env /tmp 2>/dev/null
cat .env deep/x.pem 2>/dev/null
true`
	r := sh(t, runOpts{dir: ws}, script)
	mustCode(t, r, 0)
	if l := fsLeaks(r.stdout+r.stderr, secrets); len(l) > 0 {
		t.Fatalf("a mask was removed, leaking %v:\n%s", l, r.stdout)
	}
}

// --- --max-file-size ------------------------------------------------------------

// Writing past --max-file-size fails with EFBIG, the file stops at the limit,
// and the agent goes on running (SIGXFSZ is ignored, not fatal).
func TestFSMaxFileSize(t *testing.T) {
	script := `
head -c 1000 /dev/zero > small; echo "small=$(wc -c < small)"
head -c 2M /dev/zero > big; echo "head=$?"
echo "size=$(wc -c < big)"
perl -e 'open(F, ">>", "big") or die; defined(syswrite(F, "x")) ? print "perl=ok\n" : print "perl=errno" . ($!+0) . "\n"'
sh -c 'head -c 3M /dev/zero > /tmp/big2'; echo "tmp=$?"
echo alive`
	ws := workspace(t)
	r := sh(t, runOpts{dir: ws}, script, "--max-file-size", "1M")
	mustCode(t, r, 0)
	for _, want := range []string{"small=1000", "size=1048576", "perl=errno27", "alive"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--max-file-size 1M: output lacks %q\nstdout:\n%s\nstderr:\n%s", want, r.stdout, r.stderr)
		}
	}
	if strings.Contains(r.stdout, "head=0") || strings.Contains(r.stdout, "tmp=0") {
		t.Errorf("a 2M/3M write succeeded under --max-file-size 1M:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "File too large") {
		t.Errorf("expected EFBIG (File too large) on stderr:\n%s", r.stderr)
	}
	if fi, err := os.Stat(filepath.Join(ws, "big")); err != nil || fi.Size() > 1<<20 {
		t.Errorf("host file: %v %v", fi, err)
	}

	c := sh(t, runOpts{}, script)
	mustCode(t, c, 0)
	if !strings.Contains(c.stdout, "size=2097152") || !strings.Contains(c.stdout, "perl=ok") {
		t.Fatalf("control (no limit): %s", c.stdout)
	}
}

// --- --deny globs -------------------------------------------------------------

// --deny with relative, ** , ?, [...] and absolute patterns hides exactly the
// matching paths (the others stay readable), and deny wins over --write and
// --read.
func TestFSDenyGlobs(t *testing.T) {
	ws := workspace(t)
	ext := workspace(t) // made visible with -r and -w
	denied := fsSecrets(t, ws, "secrets/a.txt", "secrets/nested/b.txt", "data/x.db",
		"data/deep/er/y.db", "top.sqlite", "k1.txt", "out/locked.txt")
	for k, v := range fsSecrets(t, ext, "private/p.txt", "public/deep/t.tok", "rw/hidden.txt") {
		denied["ext/"+k] = v
	}
	visible := fsSecrets(t, ws, "sub/top2.sqlite", "ka.txt", "keep.txt", "data/x.dbx", "out/other.txt")
	for k, v := range fsSecrets(t, ext, "public/q.txt", "rw/shown.txt") {
		visible["ext/"+k] = v
	}
	paths := []string{}
	for k := range denied {
		paths = append(paths, k)
	}
	for k := range visible {
		paths = append(paths, k)
	}
	sort.Strings(paths)
	for i, p := range paths {
		if strings.HasPrefix(p, "ext/") {
			paths[i] = filepath.Join(ext, strings.TrimPrefix(p, "ext/"))
		}
	}
	flags := []string{
		"-r", ext, "-w", filepath.Join(ext, "rw"), "-w", filepath.Join(ws, "out"),
		"--deny", "secrets", // a directory, relative
		"--deny", "**/*.db", // any depth
		"--deny", "*.sqlite", // top level of the workspace only
		"--deny", "k[0-9].t?t", // classes and ?
		"--deny", "out/locked.txt", // inside a --write path
		"--deny", filepath.Join(ext, "private"), // absolute
		"--deny", filepath.Join(ext, "**/*.tok"), // absolute with **
		"--deny", filepath.Join(ext, "rw/hidden.txt"), // inside a --write path, absolute
	}
	script := fsReadAll + `
ls secrets 2>&1; echo PWNED > secrets/new 2>&1
for f in out/locked.txt "$EXT/rw/hidden.txt"; do echo PWNED >> "$f"; echo PWNED > "$f"; done 2>/dev/null
echo written > out/other.txt; echo written > "$EXT/rw/shown.txt"
true`
	args := append(append(flags, "--setenv", "EXT="+ext, "--", "/bin/sh", "-c", script, "sh"), paths...)
	r := run(t, runOpts{dir: ws}, args...)
	mustCode(t, r, 0)
	if l := fsLeaks(r.stdout+r.stderr, denied); len(l) > 0 {
		t.Errorf("--deny globs leak %v:\n%s", l, r.stdout)
	}
	if l := fsLeaks(r.stdout, visible); len(l) != len(visible) {
		t.Errorf("--deny hides too much: only %v of %d non-matching files readable\n%s", l, len(visible), r.stdout)
	}
	for _, p := range []string{filepath.Join(ws, "out/locked.txt"), filepath.Join(ext, "rw/hidden.txt")} {
		if got := fsReadFile(t, p); !strings.HasPrefix(got, fsSecretPrefix) {
			t.Errorf("deny must win over --write: %s = %q", p, got)
		}
	}
	if _, err := os.Lstat(filepath.Join(ws, "secrets/new")); err == nil {
		t.Errorf("a file was created inside a denied directory")
	}
	for _, p := range []string{filepath.Join(ws, "out/other.txt"), filepath.Join(ext, "rw/shown.txt")} {
		if got := fsReadFile(t, p); got != "written\n" {
			t.Errorf("--write beside a denied file is not writable: %s = %q", p, got)
		}
	}

	// Control: without the --deny flags everything denied above is readable.
	var ctl []string
	for i := 0; i < len(flags); i += 2 {
		if flags[i] != "--deny" {
			ctl = append(ctl, flags[i], flags[i+1])
		}
	}
	fsWrite(t, ws, "out/locked.txt", denied["out/locked.txt"]+"\n", 0o644)
	fsWrite(t, ext, "rw/hidden.txt", denied["ext/rw/hidden.txt"]+"\n", 0o644)
	c := run(t, runOpts{dir: ws}, append(append(ctl, "--setenv", "EXT="+ext, "--", "/bin/sh", "-c", fsReadAll, "sh"), paths...)...)
	mustCode(t, c, 0)
	if l := fsLeaks(c.stdout, denied); len(l) != len(denied) {
		t.Fatalf("control (no --deny) read only %v of %d: the attack is broken\n%s%s", l, len(denied), c.stdout, c.stderr)
	}
}

// --- --dry-run, --require-landlock, bad input ------------------------------------

// --dry-run prints the masks, the read-only protections, user denies, notes
// and the Landlock rules, and runs nothing.
func TestFSDryRun(t *testing.T) {
	ws := workspace(t)
	fsPlantProtected(t, ws)
	fsSecrets(t, ws, ".env", "deep/k.pem", "private/x.txt")
	r := run(t, runOpts{dir: ws}, "--dry-run", "--deny", "private", "--deny", "nomatch-*.zz", "--", "/bin/sh", "-c", "touch ran")
	mustCode(t, r, 0)
	out := r.stdout + r.stderr
	lines := strings.Split(out, "\n")
	has := func(words ...string) bool {
		for _, l := range lines {
			ok := true
			for _, w := range words {
				ok = ok && strings.Contains(strings.ToLower(l), strings.ToLower(w))
			}
			if ok {
				return true
			}
		}
		return false
	}
	for _, want := range [][]string{
		{"mask", filepath.Join(ws, ".env")},
		{"mask", filepath.Join(ws, "deep/k.pem")},
		{"mask", filepath.Join(ws, "private"), "deny private"},
		{"read-only", filepath.Join(ws, ".git/config")},
		{"read-only", filepath.Join(ws, ".git/hooks")},
		{"read-only", filepath.Join(ws, ".bashrc")},
		{"nomatch-*.zz"},
		{"landlock", "read"},
		{"landlock", ws},
	} {
		if !has(want...) {
			t.Errorf("--dry-run has no line with %q", want)
		}
	}
	if _, err := os.Lstat(filepath.Join(ws, "ran")); err == nil {
		t.Errorf("--dry-run ran the command")
	}
}

// --require-landlock N above the kernel's ABI exits 125 with a reason and
// runs nothing; at or below the ABI it runs.
func TestFSRequireLandlock(t *testing.T) {
	ws := workspace(t)
	abi := fsLandlockABI()
	t.Logf("kernel Landlock ABI %d", abi)
	r := run(t, runOpts{dir: ws}, "--require-landlock", "99", "--", "/bin/sh", "-c", "touch ran")
	mustCode(t, r, 125)
	if !strings.Contains(strings.ToLower(r.stderr), "landlock") || !strings.Contains(r.stderr, "99") {
		t.Errorf("no reason given: %q", r.stderr)
	}
	if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); n > 3 {
		t.Errorf("a setup error should be a line or two:\n%s", r.stderr)
	}
	if _, err := os.Lstat(filepath.Join(ws, "ran")); err == nil {
		t.Errorf("the command ran despite the failed requirement")
	}
	if abi > 0 {
		mustCode(t, run(t, runOpts{dir: ws}, "--require-landlock", fmt.Sprint(abi), "--", "/bin/true"), 0)
	} else {
		mustCode(t, run(t, runOpts{dir: ws}, "--require-landlock", "1", "--", "/bin/true"), 125)
	}
}

// Conflicting or malformed filesystem flags exit 125 naming the flag (and
// the path), before anything runs; a glob matching nothing is only a warning.
func TestFSBadInput(t *testing.T) {
	ws := workspace(t)
	os.MkdirAll(filepath.Join(ws, "sub/inner"), 0o755)
	fsPlantProtected(t, ws)
	fsSecrets(t, ws, ".ssh/id_rsa")
	cases := []struct {
		name  string
		args  []string
		words []string
	}{
		{"deny root", []string{"--deny", "/"}, []string{"--deny", "/"}},
		{"deny root glob", []string{"--deny", "/**"}, []string{"--deny"}},
		{"write under deny", []string{"-w", "sub/inner", "--deny", "sub"}, []string{"--write", "sub"}},
		{"write equals deny", []string{"-w", "sub", "--deny", "sub/**"}, []string{"--write", "sub"}},
		{"read under deny", []string{"-r", "sub/inner", "--deny", "sub"}, []string{"--read", "sub"}},
		{"deny the workspace", []string{"--deny", ws}, []string{"--deny"}},
		{"write into .git/hooks", []string{"-w", ".git/hooks"}, []string{"--write", ".git/hooks"}},
		{"read a built-in secret dir", []string{"-r", ".ssh"}, []string{"--read", ".ssh"}},
		{"deny escapes workspace", []string{"--deny", "../x"}, []string{"--deny", "../x"}},
		{"deny malformed", []string{"--deny", "a[b"}, []string{"--deny", "a[b"}},
		{"max-file-size garbage", []string{"--max-file-size", "lots"}, []string{"max-file-size"}},
		{"max-file-size negative", []string{"--max-file-size", "-1"}, []string{"max-file-size"}},
		{"require-landlock garbage", []string{"--require-landlock", "x"}, []string{"require-landlock"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, runOpts{dir: ws}, append(c.args, "--", "/bin/sh", "-c", "touch ran")...)
			mustCode(t, r, 125)
			for _, w := range c.words {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr does not name %q: %q", w, r.stderr)
				}
			}
			if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); n > 3 {
				t.Errorf("a setup error should be a line or two:\n%s", r.stderr)
			}
			if _, err := os.Lstat(filepath.Join(ws, "ran")); err == nil {
				t.Fatalf("the command ran")
			}
		})
	}
	t.Run("deny matching nothing warns", func(t *testing.T) {
		r := run(t, runOpts{dir: ws}, "--deny", "no-such-*.zz", "--", "/bin/true")
		mustCode(t, r, 0)
		if !strings.Contains(r.stderr, "no-such-*.zz") {
			t.Errorf("no warning on stderr for a --deny that matches nothing: %q", r.stderr)
		}
	})
}

// --- Landlock, the second wall ------------------------------------------------------

// Landlock is on and independent of the mounts: the private tmpfs on /run is
// mounted read-write and owned by the agent (mount and DAC allow a write), but
// it is not a writable path of the policy, so only Landlock can refuse the
// write, with EACCES. The reverse wall (mount read-only where Landlock allows,
// EROFS) is .git/config in the writable workspace.
func TestFSLandlockWall(t *testing.T) {
	ws := workspace(t)
	fsPlantProtected(t, ws)
	abi := fsLandlockABI()
	script := `
for d in /run /var/spool /var/mail; do
  [ -d "$d" ] || continue
  opts=$(awk -v d="$d" '$5 == d { o = $6 } END { print o }' /proc/self/mountinfo)
  case "$opts" in rw*) ;; *) echo "$d: not mounted rw ($opts)"; continue ;; esac
  [ -w "$d" ] || { echo "$d: not writable by DAC"; continue; }
  perl -e 'if (open(F, ">", $ARGV[0])) { print "$ARGV[1]: created\n" } else { print "$ARGV[1]: errno" . ($!+0) . "\n" }' "$d/jailfs-probe" "$d"
  perl -e 'if (mkdir($ARGV[0])) { print "$ARGV[1]: mkdir ok\n" } else { print "$ARGV[1]: mkdir errno" . ($!+0) . "\n" }' "$d/jailfs-dir" "$d"
done
perl -e 'if (open(F, ">>", ".git/config")) { print "gitconfig: opened\n" } else { print "gitconfig: errno" . ($!+0) . "\n" }'
echo ok > ws-file && echo "ws: written"
`
	r := sh(t, runOpts{dir: ws}, script)
	mustCode(t, r, 0)
	t.Logf("kernel Landlock ABI %d; probe:\n%s", abi, r.stdout)
	if !strings.Contains(r.stdout, "ws: written") {
		t.Fatalf("the workspace is not writable:\n%s%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "gitconfig: errno30") {
		t.Errorf("the mount wall: .git/config should fail with EROFS (30):\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "/run: ") {
		t.Fatalf("/run was not probed (not a rw tmpfs the agent owns?):\n%s", r.stdout)
	}
	if abi == 0 {
		// No Landlock: jail must say so, never a silent no-op.
		if !strings.Contains(strings.ToLower(r.stderr), "landlock") {
			t.Errorf("the kernel has no Landlock but jail does not say so on stderr: %q", r.stderr)
		}
		return
	}
	if strings.Contains(r.stdout, "created") || strings.Contains(r.stdout, "mkdir ok") {
		t.Errorf("Landlock is not enforced: a write outside the writable paths succeeded where only Landlock could stop it:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "/run: errno13") {
		t.Errorf("expected EACCES (13) from Landlock on /run:\n%s", r.stdout)
	}
}

// --- measurement -----------------------------------------------------------------

// A repository with submodules keeps each submodule's git directory under
// .git/modules/NAME: its hooks/ and config run code exactly like the main
// ones (git submodule update, a commit inside the submodule), so they must be
// read-only too.
func TestFSSubmoduleGitDir(t *testing.T) {
	ws := workspace(t)
	fsPlantProtected(t, ws)
	orig := map[string]string{
		".git/modules/lib/hooks/post-checkout": "#!/bin/sh\necho original\n",
		".git/modules/lib/config":              "[core]\n\tworktree = ../../../lib\n",
	}
	for rel, c := range orig {
		fsWrite(t, ws, rel, c, 0o755)
	}
	fsWrite(t, ws, "lib/.git", "gitdir: ../.git/modules/lib\n", 0o644)
	script := `
echo PWNED >> .git/modules/lib/hooks/post-checkout
printf '[core]\n\thooksPath = /tmp\n' >> .git/modules/lib/config
true`
	mustCode(t, sh(t, runOpts{dir: ws}, script), 0)
	for rel, want := range orig {
		if got := fsReadFile(t, filepath.Join(ws, rel)); got != want {
			t.Errorf("submodule git dir writable: %s = %q", rel, got)
		}
	}
}

// In a git worktree (.git is a file), the shared git directory becomes
// writable (git commit works) except its hooks/ and config; a forged .git file
// whose target does not point back gets nothing.
func TestFSGitWorktree(t *testing.T) {
	main := workspace(t)
	common := filepath.Join(main, ".git")
	fsWrite(t, common, "HEAD", "ref: refs/heads/main\n", 0o644)
	fsWrite(t, common, "config", "[core]\n", 0o644)
	fsWrite(t, common, "hooks/pre-commit", "#!/bin/sh\n", 0o755)
	os.MkdirAll(filepath.Join(common, "objects"), 0o755)
	os.MkdirAll(filepath.Join(common, "refs/heads"), 0o755)
	ws := workspace(t)
	gd := filepath.Join(common, "worktrees/wt")
	fsWrite(t, gd, "commondir", "../..\n", 0o644)
	fsWrite(t, gd, "gitdir", filepath.Join(ws, ".git")+"\n", 0o644)
	fsWrite(t, gd, "HEAD", "ref: refs/heads/wt\n", 0o644)
	fsWrite(t, ws, ".git", "gitdir: "+gd+"\n", 0o644)

	script := `C=$1
echo obj > "$C/objects/new" && echo objects-ok
echo ref > "$C/refs/heads/wt" && echo refs-ok
echo PWNED >> "$C/hooks/pre-commit"; echo PWNED > "$C/hooks/post-checkout"; echo PWNED >> "$C/config"
mv "$C/hooks" "$C/hooks.x"; mv "$C/config" "$C/config.x"
true`
	r := run(t, runOpts{dir: ws}, "--", "/bin/sh", "-c", script, "sh", common)
	mustCode(t, r, 0)
	if !strings.Contains(r.stdout, "objects-ok") || !strings.Contains(r.stdout, "refs-ok") {
		t.Errorf("the worktree's shared git dir is not writable:\n%s%s", r.stdout, r.stderr)
	}
	if got := fsReadFile(t, filepath.Join(common, "hooks/pre-commit")); got != "#!/bin/sh\n" {
		t.Errorf("shared hooks/pre-commit writable: %q", got)
	}
	if got := fsReadFile(t, filepath.Join(common, "config")); got != "[core]\n" {
		t.Errorf("shared config writable: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(common, "hooks/post-checkout")); err == nil {
		t.Errorf("a hook was created in the shared hooks/")
	}

	// Forged: a .git file pointing at a git-looking directory that does not
	// point back. Nothing there may become writable.
	forged := workspace(t)
	os.MkdirAll(filepath.Join(forged, "objects"), 0o755)
	fsWrite(t, forged, "worktrees/x/commondir", "../..\n", 0o644)
	fsWrite(t, forged, "worktrees/x/gitdir", "/elsewhere/.git\n", 0o644)
	ws2 := workspace(t)
	fsWrite(t, ws2, ".git", "gitdir: "+filepath.Join(forged, "worktrees/x")+"\n", 0o644)
	mustCode(t, run(t, runOpts{dir: ws2}, "--", "/bin/sh", "-c", script, "sh", forged), 0)
	if _, err := os.Lstat(filepath.Join(forged, "objects/new")); err == nil {
		t.Errorf("a forged .git file made %s writable", forged)
	}
}

// Masks are empty, mode-0 files and directories (README "Filesystem"), not
// merely unreadable ones: a secret file shows size 0 and mode 000 inside, a
// secret directory mode 000, and /etc/shadow the same (its host mode 0640
// alone already keeps a non-root agent out, so "Permission denied" proves
// nothing about the mask). Control: the host's own view of each differs.
func TestFSMasksEmptyModeZero(t *testing.T) {
	ws := workspace(t)
	fsWrite(t, ws, ".env", "SECRET=1\n", 0o644)
	fsWrite(t, ws, ".ssh/id_rsa", "key\n", 0o644)
	os.Chmod(filepath.Join(ws, ".ssh"), 0o755)
	r := sh(t, runOpts{dir: ws}, `stat -c '%n|%a|%s|%F' /etc/shadow .env .ssh 2>&1; ls -A .ssh 2>&1 | wc -l; cat .env 2>&1; exit 0`)
	mustCode(t, r, 0)
	for _, want := range []string{"/etc/shadow|0|0|regular empty file\n", ".env|0|0|regular empty file\n", ".ssh|0|"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("want %q (an empty mode-0 mask) inside:\n%s%s", want, r.stdout, r.stderr)
		}
	}
	if !strings.Contains(r.stdout, ".ssh|0|") || !strings.Contains(r.stdout, "|directory\n") {
		t.Errorf(".ssh is not masked by a mode-0 directory:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "SECRET") || strings.Contains(r.stdout, "id_rsa") {
		t.Errorf("masked content visible inside:\n%s", r.stdout)
	}
	// Control: outside, the same files are neither empty nor mode 0.
	for _, p := range []string{"/etc/shadow", filepath.Join(ws, ".env"), filepath.Join(ws, ".ssh")} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() == 0 || (!fi.IsDir() && fi.Size() == 0) {
			t.Fatalf("control: %s is already empty or mode 0 on the host (%v, %d bytes): the check proves nothing", p, fi.Mode(), fi.Size())
		}
	}
}
