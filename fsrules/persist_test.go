package fsrules

// Tests of the protections against persistence (issue 10, classes 3-5): every
// built-in name, where it matches (any depth or only in a home directory),
// case variants, unreadable directories, hard links of read-only files,
// submounts, symlinked dotfiles and the list of absent protected paths.

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/asciifold"
)

// kindOf returns "hide", "read-only" or "" for rel under base: the kind of
// the mask on rel itself or on its nearest masked ancestor.
func kindOf(base string, ms []Mask, rel string) string {
	p := filepath.Join(base, rel)
	best, kind := "", ""
	for _, m := range ms {
		if under(p, m.Path) && len(m.Path) > len(best) {
			best, kind = m.Path, m.Kind.String()
		}
	}
	return kind
}

// TestBuiltinNames: each built-in name, planted in a workspace (at the top
// and deep) and in a home directory, is masked with the right kind where it
// should be, and only there: home-anchored names (~/.local/bin/) do not make
// every project's bin/ read-only.
func TestBuiltinNames(t *testing.T) {
	base := tmp(t)
	ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
	const (
		H  = "hide"
		RO = "read-only"
		no = ""
	)
	// rel -> kind in the workspace (top and deep/x/), kind in the home.
	cases := []struct {
		rel      string
		ws, home string
	}{
		// Secrets, any depth, any case.
		{"id_ecdsa", H, H}, {"id_dsa", H, H}, {"id_ed25519_sk", H, H}, {"id_ecdsa_sk.pub", H, H}, {"id_xmss", H, H},
		{"ID_RSA", H, H}, {"id_generator.go", no, no}, {"idea.txt", no, no},
		{"cert.p12", H, H}, {"x.pfx", H, H}, {"store.pkcs12", H, H}, {"a.jks", H, H}, {"debug.keystore", H, H},
		{"db.kdbx", H, H}, {"putty.ppk", H, H}, {"AuthKey_AB12.p8", H, H},
		{"prod.env", H, H}, {"staging.ENV", H, H}, {".ENV", H, H}, {".Env.Local", H, H},
		{"SERVER.PEM", H, H}, {"Api.Key", H, H}, {"env.go", no, no}, {".environment", no, no}, {"prod.env.ts", no, no},
		{"service-account.json", H, H}, {"my-service_account-key.json", H, H}, {"ServiceAccount.JSON", H, H},
		{"credentials.json", H, H}, {"client_secret_123.apps.json", H, H}, {"credentials.go", no, no},
		{".pgpass", H, H}, {".my.cnf", H, H}, {".vault-token", H, H}, {".boto", H, H}, {".s3cfg", H, H},
		{".config/gcloud/", H, H}, {".config/anthropic/", H, H}, {".azure/", H, H}, {".terraformrc", H, H},
		{".terraform.d/credentials.tfrc.json", H, H}, {".terraform.d/plugins/", no, no},
		{".config/gh/hosts.yml", H, H}, {".cargo/credentials.toml", H, H}, {".gem/credentials", H, H},
		{".password-store/", H, H}, {".mozilla/", H, H},
		{".envrc", H, H},
		{"id_rsa", H, H}, {"ID_ED25519.PUB", H, H}, {"Server.Key", H, H}, {".env.production", H, H},
		{".ssh/", H, H}, {".aws/", H, H}, {".gnupg/", H, H}, {".netrc", H, H}, {".git-credentials", H, H},
		{".npmrc", H, H}, {".pypirc", H, H}, {".docker/config.json", H, H}, {".kube/config", H, H},
		{".cargo/credentials", H, H}, {".config/google-chrome/", H, H}, {".config/chromium/", H, H},
		{".local/share/keyrings/", H, H}, {".Docker/Config.json", H, H},
		// Git and agent files (other engineers' classes; listed so that every
		// built-in has a case).
		{".git/hooks/", RO, RO}, {".git/config", RO, RO}, {".git/config.worktree", RO, RO}, {".gitmodules", RO, RO},
		{".git/modules/sub/hooks/", RO, RO}, {".git/modules/sub/config", RO, RO},
		{".mcp.json", RO, RO}, {".vscode/", RO, RO}, {".idea/", RO, RO}, {".claude/commands/", RO, RO}, {".claude/agents/", RO, RO},
		{".claude/skills/", RO, RO}, {".claude/workflows/", RO, RO}, {".claude/output-styles/", RO, RO}, {".claude/launch.json", RO, RO}, {".claude/routines/", RO, RO}, {".claude/scheduled_tasks.json", RO, RO}, {".claude/loop.md", RO, RO}, {".claude/plugins/", RO, RO}, {".claude/ide/", RO, RO}, {".claude/history.jsonl", RO, RO}, {".claude/paste-cache/", RO, RO}, {".codex/history.jsonl", RO, RO}, {".codex/hooks.json", RO, RO}, {".codex/hooks/", RO, RO}, {".codex/plugins/", RO, RO}, {".codex/skills/", RO, RO}, {".agents/skills/", RO, RO},
		{".gemini/extensions/", RO, RO}, {".gemini/commands/", RO, RO}, {".codex/rules/", RO, RO}, {".gemini/policies/", RO, RO}, {".copilot/hooks/", RO, RO},
		{".copilot/installed-plugins/", RO, RO}, {".copilot/agents/", RO, RO}, {".gemini/agents/", RO, RO}, {".copilot/skills/", RO, RO}, {".github/agents/", RO, RO}, {".github/skills/", RO, RO}, {".github/hooks/", RO, RO}, {".cursor/", RO, RO},
		{".copilot/pkg/", RO, RO}, {".claude/local/", RO, RO},
		{".devcontainer/", RO, RO}, {".devcontainer.json", RO, RO}, {"x.code-workspace", RO, RO},
		{"opencode.json", RO, RO}, {"opencode.jsonc", RO, RO}, {".opencode/", RO, RO}, {".config/opencode/", RO, RO},
		{".config/goose/config.yaml", RO, RO}, {".aider.conf.yml", RO, RO}, {"mise.toml", RO, RO},
		{".mise.toml", RO, RO}, {"mise.local.toml", RO, RO}, {".mise.local.toml", RO, RO}, {".config/mise/", RO, RO},
		{".helix/", RO, RO}, {".zed/", RO, RO},
		{"rust-toolchain.toml", RO, RO}, {"rust-toolchain", RO, RO}, {".tool-versions", RO, RO},
		{".config/jail/", H, H}, // jail's own config, profiles and trust store
		// Startup files of shells and tools: any depth.
		{".bash_login", RO, RO}, {".bash_logout", RO, RO}, {".bash_aliases", RO, RO}, {".bashrc.d/", RO, RO},
		{".zshenv", RO, RO}, {".zlogin", RO, RO}, {".zlogout", RO, RO}, {".ZSHENV", RO, RO},
		{".cshrc", RO, RO}, {".tcshrc", RO, RO}, {".login", RO, RO}, {".logout", RO, RO}, {".kshrc", RO, RO},
		{".gitconfig", RO, RO}, {".pam_environment", RO, RO}, {".xprofile", RO, RO}, {".xinitrc", RO, RO},
		{".xsession", RO, RO}, {".xsessionrc", RO, RO},
		{".vimrc", RO, RO}, {".exrc", RO, RO}, {".nvim.lua", RO, RO}, {".emacs", RO, RO}, {".emacs.d/", RO, RO},
		{".tmux.conf", RO, RO}, {".inputrc", RO, RO}, {".ripgreprc", RO, RO}, {".gdbinit", RO, RO},
		{".Rprofile", RO, RO}, {".psqlrc", RO, RO}, {".irbrc", RO, RO}, {".screenrc", RO, RO},
		{".bashrc", RO, RO}, {".bash_profile", RO, RO}, {".profile", RO, RO}, {".zshrc", RO, RO}, {".zprofile", RO, RO},
		{".BashRC", RO, RO}, {".mkshrc", RO, RO}, {".xonshrc", RO, RO}, {".shrc", RO, RO}, {".bash_completion", RO, RO},
		{".xserverrc", RO, RO}, {".direnvrc", RO, RO}, {".hgrc", RO, RO}, {".hg/hgrc", RO, RO},
		{".gvimrc", RO, RO}, {".nvimrc", RO, RO}, {".emacs.el", RO, RO}, {".lldbinit", RO, RO}, {".pryrc", RO, RO},
		{".sqliterc", RO, RO},
		// Only relative to a home directory.
		{".config/fish/", no, RO}, {".config/git/", no, RO}, {".config/direnv/", no, RO},
		{".config/systemd/", no, RO}, {".config/autostart/", no, RO}, {".config/environment.d/", no, RO},
		{".config/nvim/", no, RO}, {".config/pip/", no, RO}, {".config/go/", no, RO}, {".config/tmux/", no, RO},
		{".config/emacs/", no, RO}, {".local/bin/", no, RO}, {"bin/", no, RO}, {".cargo/bin/", no, RO},
		{".cargo/config.toml", no, RO}, {"go/bin/", no, RO}, {".local/lib/", no, RO}, {".node_modules/", no, RO}, {".node_libraries/", no, RO},
		{".local/share/systemd/", no, RO}, {".local/share/applications/", no, RO}, {".vim/", no, RO},
		{".pip/", no, RO}, {".yarnrc.yml", no, RO}, {".oh-my-zsh/", no, RO},
		{".local/share/bash-completion/", no, RO}, {".config/zsh/", no, RO}, {".local/share/fish/", no, RO},
		{".config/nushell/", no, RO}, {".config/powershell/", no, RO}, {".config/xonsh/", no, RO},
		{".config/plasma-workspace/", no, RO}, {".config/sway/", no, RO}, {".config/i3/", no, RO},
		{".config/hypr/", no, RO}, {".deno/bin/", no, RO}, {".bun/bin/", no, RO}, {".local/share/nvim/", no, RO},
		{".cargo/config", no, RO}, {".yarnrc", no, RO}, {".gradle/init.d/", no, RO}, {".gradle/init.gradle", no, RO},
		{".gradle/gradle.properties", no, H}, {".m2/settings.xml", no, H}, {".lessfilter", no, RO},
		{".claude/daemon.json", no, RO}, {".claude/daemon.lock", no, RO}, {".claude/.config.json", no, RO},
		{".claude/remote-settings.json", no, RO}, {".claude/remote-settings-consent.json", no, RO}, {".claude/remote-settings-helper-consent", no, RO}, {".claude/policy-limits.json", no, RO}, {".claude/cowork_plugins/", no, RO}, {".claude/chrome/", no, RO}, {".claude/keybindings.json", no, RO}, {".config/BraveSoftware/", H, H}, {".config/microsoft-edge/", H, H}, {".config/vivaldi/", H, H}, {".config/opera/", H, H}, {".config/google-chrome-beta/", H, H}, {".config/google-chrome-unstable/", H, H}, {".config/microsoft-edge-beta/", H, H}, {".config/microsoft-edge-dev/", H, H}, {".claude/remote-settings.json.bak", no, no},
		{".claude/CLAUDE.md", no, RO}, {".claude/rules/", no, RO}, {".codex/AGENTS.md", no, RO}, {".codex/AGENTS.override.md", no, RO},
		{".gemini/GEMINI.md", no, no}, // Gemini CLI saves the user's memories there (README)
		{".codex/memories/", no, RO}, {".codex/models_cache.json", no, RO}, {".codex/environments.toml", no, RO}, {".codex/work.config.toml", no, RO}, {".codex/queue_1.sqlite", no, RO}, {".codex/queue_1.sqlite-wal", no, RO}, {".codex/memories_1.sqlite", no, RO}, {".codex/memories_1.sqlite-wal", no, RO}, {".codex/state_5.sqlite", no, RO}, {".codex/state_5.sqlite-wal", no, RO},
		{".codex/agent_message_board_1.sqlite", no, RO}, {".codex/agent_message_board_1.sqlite-wal", no, RO}, {".codex/thread_history_1.sqlite", no, RO},
		{".codex/thread_history_1.sqlite-wal", no, RO}, {".codex/goals_1.sqlite", no, RO}, {".codex/goals_1.sqlite-wal", no, RO},
		{".codex/queue_2.sqlite", no, RO}, {".codex/logs_2.sqlite-shm", no, RO}, {".codex/version.json", no, no},
		{".gemini/skills/", RO, RO}, {".gemini/keybindings.json", no, RO}, {".gemini/settings.json", no, no},
		{".qwen/extensions/", RO, RO}, {".qwen/commands/", RO, RO}, {".qwen/skills/", RO, RO}, {".qwen/agents/", RO, RO},
		{".qwen/locales/", no, RO}, {".qwen/ide/", no, RO}, {".qwen/channels/", no, RO}, {".qwen/settings.json", no, no}, {".qwen/oauth_creds.json", no, no},
		{".Config/Systemd/", no, RO}, {".LOCAL/BIN/", no, RO},
		{".config/other/", no, no}, {".local/share/other/", no, no}, {"src/", no, no}, {".gradle/caches/", no, no},
		{".m2/repository/", no, no}, {".hg/store/", no, no}, {"lib/", no, no},
	}
	for _, c := range cases {
		mk(t, ws, c.rel, "deep/x/"+c.rel)
		mk(t, home, c.rel)
	}
	plan, err := Expand(Input{Workspace: ws, Home: home, Writable: []string{ws, home}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		for _, where := range []struct{ base, rel, want string }{
			{ws, c.rel, c.ws}, {ws, "deep/x/" + c.rel, c.ws}, {home, c.rel, c.home},
		} {
			if got := kindOf(where.base, plan.Masks, where.rel); got != where.want {
				t.Errorf("%s/%s: mask %q, want %q", filepath.Base(where.base), where.rel, got, where.want)
			}
		}
	}
	// Every rule names itself, and every built-in is exercised by a case.
	fired := map[string]bool{}
	for _, m := range plan.Masks {
		if !strings.HasPrefix(m.Rule, "default: ") {
			t.Errorf("%s: rule %q", m.Path, m.Rule)
		}
		fired[strings.TrimPrefix(m.Rule, "default: ")] = true
	}
	for _, b := range Builtins {
		if !fired[b.Name] {
			t.Errorf("no case exercises the built-in %s", b.Name)
		}
	}
}

// TestBuiltinsDocumented: every built-in has a Why (shown by --help and the
// README) and compiles; names are unique.
func TestBuiltinsDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, b := range Builtins {
		if b.Why == "" {
			t.Errorf("%s: no Why", b.Name)
		}
		if seen[b.Name] {
			t.Errorf("%s: listed twice", b.Name)
		}
		seen[b.Name] = true
	}
	d := tmp(t)
	if _, err := Expand(Input{Workspace: d, Home: "/home/u", Writable: []string{d}}); err != nil {
		t.Error(err) // a built-in that does not compile panics
	}
}

// TestDenyFold: --deny globs are case-sensitive unless written with (?i).
func TestDenyFold(t *testing.T) {
	base := tmp(t)
	mk(t, base, "a.sql", "B.SQL", "dump/C.Sql", "Secrets/x", "secrets/y")
	plan, err := Expand(Input{Workspace: base, Writable: []string{base}, NoDefaultDeny: true,
		Deny: []string{"**/*.sql", "(?i)secrets/"}})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "masks", summary(base, plan.Masks), []string{"hide Secrets/", "hide a.sql", "hide secrets/"})
	plan, _ = Expand(Input{Workspace: base, Writable: []string{base}, NoDefaultDeny: true, Deny: []string{"(?i)**/*.sql"}})
	eq(t, "(?i) masks", summary(base, plan.Masks), []string{"hide B.SQL", "hide a.sql", "hide dump/C.Sql"})
	for _, bad := range []string{"(?i)", "(?i)../x"} {
		if _, err := Compile(bad, base, "/h"); err == nil {
			t.Errorf("Compile(%q) accepted", bad)
		}
	}
}

// TestExpandUnreadableDir: a directory the walk cannot list or search (an
// earlier run's chmod 311, or another owner's) is hidden whole, never skipped:
// otherwise the agent, its owner, chmods it back and reads what it holds.
func TestExpandUnreadableDir(t *testing.T) {
	base := tmp(t)
	ws := filepath.Join(base, "ws")
	mk(t, ws, "noread/.env", "noread/.git/config", "nosearch/.env", "nosearch/sub/k.pem", ".git/config", ".git/hooks/x", "ok/file")
	for _, d := range []struct {
		rel  string
		mode os.FileMode
	}{{"noread", 0o311}, {"nosearch", 0o644}, {".git", 0o311}} {
		p := filepath.Join(ws, d.rel)
		must(t, os.Chmod(p, d.mode))
		t.Cleanup(func() { os.Chmod(p, 0o755) })
	}
	plan, err := Expand(Input{Workspace: ws, Writable: []string{ws}})
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"noread/.env", "nosearch/.env", "nosearch/sub/k.pem"} {
		if k := kindOf(ws, plan.Masks, rel); k != "hide" {
			t.Errorf("%s: %q, want hidden", rel, k)
		}
	}
	for _, rel := range []string{".git/config", ".git/hooks/x", "noread/.git/config"} {
		if k := kindOf(ws, plan.Masks, rel); k == "" {
			t.Errorf("%s: writable", rel)
		}
	}
	if kindOf(ws, plan.Masks, "ok/file") != "" {
		t.Error("ok/file masked")
	}
	if os.Geteuid() != 0 {
		eq(t, "masks", summary(ws, plan.Masks), []string{"hide .git/", "hide noread/", "hide nosearch/"})
		if n := strings.Join(plan.Notes, "\n"); !strings.Contains(n, "chmod") || !strings.Contains(n, filepath.Join(ws, "noread")) {
			t.Errorf("no note says what to do:\n%s", n)
		}
	}
}

// TestExpandHardLinksReadOnly: every other hard link of a protected file is
// protected the same way: read-only files (.git/config, .bashrc), files
// inside read-only directories (.git/hooks/*) and inside hidden ones (.ssh/*).
func TestExpandHardLinksReadOnly(t *testing.T) {
	base := tmp(t)
	ws, other := filepath.Join(base, "ws"), filepath.Join(base, "other")
	mk(t, ws, ".git/config", ".git/hooks/pre-commit", ".bashrc", ".ssh/id_rsa", "plain")
	mk(t, other, "x")
	for _, l := range [][2]string{
		{".git/config", "notes.txt"}, {".git/hooks/pre-commit", "sub/run.sh"}, {".bashrc", "b.txt"},
		{".ssh/id_rsa", "k.txt"}, {".ssh/id_rsa", "../other/k2"},
	} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(ws, l[1])), 0o755))
		must(t, os.Link(filepath.Join(ws, l[0]), filepath.Join(ws, l[1])))
	}
	plan, err := Expand(Input{Workspace: ws, Writable: []string{ws, other}})
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{
		"ws/notes.txt": "read-only", "ws/sub/run.sh": "read-only", "ws/b.txt": "read-only",
		"ws/k.txt": "hide", "other/k2": "hide", "ws/plain": "", "other/x": "",
	} {
		if got := kindOf(base, plan.Masks, rel); got != want {
			t.Errorf("%s: %q, want %q", rel, got, want)
		}
	}
}

// TestExpandSymlinkedDotfiles: a home whose dotfiles are symlinks into the
// workspace (a dotfiles repository, GNU stow) gets the targets protected: the
// names in the repository (bashrc, config/git/) match no rule by themselves.
func TestExpandSymlinkedDotfiles(t *testing.T) {
	base := tmp(t)
	ws, home := filepath.Join(base, "dotfiles"), filepath.Join(base, "home")
	mk(t, ws, "bashrc", "config/git/config", "config/other/x", "bin/tool", "ssh/authorized_keys")
	mk(t, home, "plain")
	must(t, os.Symlink(filepath.Join(ws, "bashrc"), filepath.Join(home, ".bashrc")))
	must(t, os.Symlink(filepath.Join(ws, "config"), filepath.Join(home, ".config")))
	must(t, os.Symlink("../dotfiles/bin", filepath.Join(home, "bin")))
	must(t, os.Symlink(filepath.Join(ws, "ssh"), filepath.Join(home, ".ssh")))
	plan, err := Expand(Input{Workspace: ws, Home: home, Writable: []string{ws}})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "masks", summary(ws, plan.Masks), []string{
		"read-only bashrc", "read-only bin/", "read-only config/git/", "hide ssh/",
	})
	var absent []string
	for _, a := range plan.Absent {
		absent = append(absent, a.Path)
	}
	for _, want := range []string{filepath.Join(ws, "config/fish"), filepath.Join(ws, "config/systemd")} {
		if !contains(absent, want) {
			t.Errorf("Absent lacks %s (where ~/.config/... would be created): %v", want, absent)
		}
	}
}

// TestAbsentHomeAndNested: protected paths missing at start are listed where
// the agent could create them: the top of each writable root, every home
// directory inside one (home-anchored names included), and under parents that
// exist deeper in the tree (.codex/ without hooks.json). A secret-named file
// outside every home (a project's new .env, sub/.docker/config.json) is the
// agent's own work, loaded by nothing of the user's: not listed (not
// watched); in a home it is (~/.npmrc). A .envrc is, at the top of the
// root and of each repository in it: direnv runs it (session 14).
func TestAbsentHomeAndNested(t *testing.T) {
	base := tmp(t)
	ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
	mk(t, ws, "sub/.docker/other.json", "sub/.kube/cache/", "sub/.codex/x", "sub/.git/objects/", ".bashrc")
	mk(t, home, ".config/other/", ".local/share/", ".zshrc")
	plan, err := Expand(Input{Workspace: ws, Home: home, Writable: []string{ws, home}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Absent{}
	for _, a := range plan.Absent {
		if _, dup := got[a.Path]; dup {
			t.Errorf("%s listed twice", a.Path)
		}
		got[a.Path] = a
	}
	for rel, want := range map[string]Kind{
		"ws/.zshenv": ReadOnly, "ws/.ssh": Hide, "ws/sub/.codex/hooks.json": ReadOnly, "ws/.envrc": Hide, "ws/sub/.envrc": Hide,
		"home/.zshenv": ReadOnly, "home/.bash_login": ReadOnly, "home/.ssh": Hide, "home/.npmrc": Hide,
		"home/.config/git": ReadOnly, "home/.config/systemd": ReadOnly, "home/.config/autostart": ReadOnly,
		"home/.local/bin": ReadOnly, "home/bin": ReadOnly, "home/.cargo/config.toml": ReadOnly,
		"home/.local/share/systemd": ReadOnly, "home/.config/fish": ReadOnly, "home/.gitconfig": ReadOnly,
	} {
		a, ok := got[filepath.Join(base, rel)]
		if !ok {
			t.Errorf("Absent lacks %s", rel)
			continue
		}
		if a.Kind != want || !strings.HasPrefix(a.Rule, "default: ") {
			t.Errorf("%s: %+v, want kind %v", rel, a, want)
		}
	}
	for _, rel := range []string{"ws/.bashrc", "home/.zshrc", "ws/.local/bin", "ws/bin", "ws/.config/git", "ws/sub/.zshenv",
		"ws/.env", "ws/sub/.docker/config.json", "ws/sub/.kube/config", // the project's own
		"ws/sub/.git/config", "ws/sub/.git/hooks"} { // package gitguard's
		if _, ok := got[filepath.Join(base, rel)]; ok {
			t.Errorf("Absent lists %s", rel)
		}
	}
	// A home directory outside every writable root has nothing to watch; a
	// --write path inside it gets the home-anchored names below it.
	cfg := filepath.Join(home, ".config")
	plan, err = Expand(Input{Workspace: ws, Home: home, Writable: []string{ws, cfg}})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, a := range plan.Absent {
		paths = append(paths, a.Path)
		if under(a.Path, home) && !under(a.Path, cfg) {
			t.Errorf("Absent lists %s, outside every writable root", a.Path)
		}
	}
	if !contains(paths, filepath.Join(cfg, "git")) || !contains(paths, filepath.Join(cfg, "systemd")) {
		t.Errorf("-w ~/.config: Absent lacks ~/.config/git or ~/.config/systemd: %v", paths)
	}
	sort.Strings(paths)
}

// FuzzFold: a case-insensitive pattern matches a name exactly when it
// matches the name with its ASCII letters in either case, matches whatever
// the same pattern without "(?i)" matches (classes aside), and compiles to
// the same anchor.
func FuzzFold(f *testing.F) {
	for _, s := range [][2]string{{"**/*.pem", "A/SERVER.PEM"}, {"[A-C]x", "bX"}, {`\A`, "a"}, {".Env.*", ".ENV.local"}, {"id_*", "ID_rsa"}} {
		f.Add(s[0], s[1])
	}
	upper := func(s string) string {
		b := []byte(s)
		for i, c := range b {
			if 'a' <= c && c <= 'z' {
				b[i] = c - 'a' + 'A'
			}
		}
		return string(b)
	}
	f.Fuzz(func(t *testing.T, pat, name string) {
		p, err := Compile(FoldPrefix+pat, "/w", "/h")
		q, qerr := Compile(pat, "/w", "/h")
		if (err == nil) != (qerr == nil) && !errors.Is(qerr, ErrBadPattern) && !errors.Is(err, ErrBadPattern) {
			t.Fatalf("%q: with (?i) %v, without %v", pat, err, qerr)
		}
		if err != nil {
			return
		}
		if !p.Fold || (qerr == nil && p.Abs != q.Abs) {
			t.Fatalf("%q: fold %v, abs %q vs %q", pat, p.Fold, p.Abs, q.Abs)
		}
		abs := "/w/" + name
		m := p.Match(abs, false)
		if m != p.Match(asciifold.Lower(abs), false) || m != p.Match(upper(abs), false) {
			t.Fatalf("%q on %q: case changes the match", pat, name)
		}
		// Folding lowers the pattern too, so a class spanning the two cases
		// ("[Z-a]") is not a superset of itself: skip classes here.
		if qerr == nil && q.Match(abs, false) && !m && !strings.Contains(pat, "[") {
			t.Fatalf("%q matches %q, (?i)%q does not", pat, name, pat)
		}
		if p.live(abs) != p.live(upper(abs)) {
			t.Fatalf("%q: live(%q) depends on case", pat, abs)
		}
	})
}

// TestExpandHardLinksHome: protected files of a home directory that is not
// visible (the sandbox shows an empty tmpfs there) still protect their other
// hard links in the visible trees: an earlier run with the home writable and
// the protections lifted may have linked ~/.bashrc into a project.
func TestExpandHardLinksHome(t *testing.T) {
	base := tmp(t)
	ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
	mk(t, home, ".bashrc", ".ssh/id_rsa", ".local/bin/tool", ".config/git/config", ".config/other/x", "notes")
	mk(t, ws, "plain")
	for _, l := range [][2]string{
		{".bashrc", "b.txt"}, {".ssh/id_rsa", "k.txt"}, {".local/bin/tool", "t"}, {".config/git/config", "deep/g"},
		{".config/other/x", "x"}, {"notes", "n"},
	} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(ws, l[1])), 0o755))
		must(t, os.Link(filepath.Join(home, l[0]), filepath.Join(ws, l[1])))
	}
	plan, err := Expand(Input{Workspace: ws, Home: home, Writable: []string{ws}})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "masks", summary(ws, plan.Masks), []string{"read-only b.txt", "read-only deep/g", "hide k.txt", "read-only t"})
	// Read-only links in a read-only root need nothing.
	plan, err = Expand(Input{Workspace: ws, Home: home, Readable: []string{ws}})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "masks (read-only root)", summary(ws, plan.Masks), []string{"hide k.txt"})
}
