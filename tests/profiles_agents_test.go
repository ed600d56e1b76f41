//go:build linux

package tests

// The real agent CLIs under their profiles, on a fresh, empty HOME (never
// the real one): --version, the first interactive screen on a pty, state
// written to the host by one run and read by the next, and each agent's own
// sandbox answered (issue 11). .ci/run installs the CLIs (JAIL_AGENTS_BIN);
// in CI a missing CLI fails the test.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// agentBin finds an agent CLI: $JAIL_AGENTS_BIN/NAME, the machine's
// /opt/agents install, then PATH.
func agentBin(t *testing.T, name string) string {
	t.Helper()
	var dirs []string
	if d := os.Getenv("JAIL_AGENTS_BIN"); d != "" {
		dirs = append(dirs, d)
	}
	dirs = append(dirs, "/opt/agents/node_modules/.bin")
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if inCI() {
		t.Fatalf("the %s CLI is not installed (.ci/run installs it into $JAIL_AGENTS_BIN)", name)
	}
	t.Skipf("no %s CLI (set JAIL_AGENTS_BIN)", name)
	return ""
}

type agentCase struct {
	name    string
	args    []string // for the interactive run
	version string   // in --version's output
	screen  string   // on the first interactive screen
	// state reads what the first run left on the host; the second run must
	// keep it (read back, not made again).
	state func(t *testing.T, h *profHome) string
}

var agentCases = []agentCase{
	{name: "claude", version: "Claude Code", screen: "Welcome to Claude Code",
		state: func(t *testing.T, h *profHome) string {
			var m map[string]any
			b, _ := os.ReadFile(h.path("~/.claude.json"))
			if err := json.Unmarshal(b, &m); err != nil {
				return ""
			}
			id, _ := m["userID"].(string)
			return id
		}},
	{name: "codex", version: "codex-cli", screen: "Sign in with ChatGPT",
		state: func(t *testing.T, h *profHome) string {
			b, _ := os.ReadFile(h.path("~/.codex/config.toml"))
			if strings.Contains(string(b), "screen_reader_detection_done") {
				return "config.toml written"
			}
			return ""
		}},
	{name: "gemini", version: ".", screen: "Gemini CLI",
		state: func(t *testing.T, h *profHome) string {
			b, _ := os.ReadFile(h.path("~/.gemini/projects.json"))
			if strings.Contains(string(b), h.ws) {
				return "projects.json names the workspace"
			}
			return ""
		}},
}

func TestProfileAgentsVersion(t *testing.T) {
	for _, c := range agentCases {
		t.Run(c.name, func(t *testing.T) {
			bin := agentBin(t, c.name)
			h := newProfHome(t)
			r := run(t, runOpts{dir: h.ws, env: h.env, timeout: 90 * time.Second}, "--quiet", "--profile", c.name, "--", bin, "--version")
			mustCode(t, r, 0)
			if !strings.Contains(r.stdout, c.version) {
				t.Fatalf("%s --version under --profile %s: %q\n%s", c.name, c.name, r.stdout, r.stderr)
			}
		})
	}
}

// agentScreen runs the agent on a pty and waits for want; it answers the
// terminal queries a TUI sends before it draws (cursor position, device
// attributes), as a terminal would.
func agentScreen(t *testing.T, h *profHome, bin, profile, want string, args ...string) {
	t.Helper()
	a := startAgentTTY(t, h, bin, profile, args...)
	defer a.stop()
	a.waitFor(t, want)
}

// agentTTY is an agent run by jail on a pty of its own.
type agentTTY struct {
	profile  string
	master   *os.File
	scr      *screen
	cmd      *exec.Cmd
	done     chan struct{}
	answered map[string]int
	started  time.Time
}

func startAgentTTY(t *testing.T, h *profHome, bin, profile string, args ...string) *agentTTY {
	t.Helper()
	master, slave := openPty(t)
	cmd := exec.Command(jail(t), append([]string{"--quiet", "--profile", profile, "--", bin}, args...)...)
	cmd.Dir = h.ws
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.Env = append(append(os.Environ(), h.env...), "TERM=xterm-256color")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		master.Close()
		t.Fatal(err)
	}
	slave.Close()
	a := &agentTTY{profile: profile, master: master, scr: watch(master), cmd: cmd, done: make(chan struct{}), answered: map[string]int{}, started: time.Now()}
	go func() { cmd.Wait(); close(a.done) }()
	return a
}

// stop ends the run (SIGTERM, then SIGKILL) and closes the terminal.
func (a *agentTTY) stop() {
	a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.done:
	case <-time.After(5 * time.Second):
		a.cmd.Process.Kill()
		<-a.done
	}
	a.master.Close()
}

// waitFor waits up to 60 s for want on the screen, answering the
// terminal's queries meanwhile.
func (a *agentTTY) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		s := a.scr.String()
		if strings.Contains(plain(s), want) {
			t.Logf("%s showed %q after %v", a.profile, want, time.Since(a.started).Round(time.Millisecond))
			return
		}
		for q, ans := range map[string]string{"\x1b[6n": "\x1b[1;1R", "\x1b[c": "\x1b[?62;22c", "\x1b[?u": "\x1b[?0u", "\x1b]11;?": "\x1b]11;rgb:0000/0000/0000\x1b\\", "\x1b]10;?": "\x1b]10;rgb:ffff/ffff/ffff\x1b\\"} {
			if n := strings.Count(s, q); n > a.answered[q] {
				a.answered[q] = n
				a.master.Write([]byte(ans))
			}
		}
		select {
		case <-a.done:
			t.Fatalf("%s exited before showing %q; the terminal shows:\n%s", a.profile, want, plain(a.scr.String()))
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("%s never showed %q; the terminal shows:\n%s", a.profile, want, plain(a.scr.String()))
}

// plain drops escape sequences and spacing, so that a TUI's text can be
// matched whatever cursor moves it was drawn with.
func plain(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0x1b && i+1 < len(s) {
			switch s[i+1] {
			case '[':
				j := i + 2
				for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
					j++
				}
				i = j
				b.WriteByte(' ')
				continue
			case ']':
				j := i + 2
				for j < len(s) && s[j] != 0x07 && !(s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\') {
					j++
				}
				i = j + 1
				continue
			}
		}
		b.WriteByte(c)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

func TestProfileAgentsFirstScreenAndState(t *testing.T) {
	for _, c := range agentCases {
		t.Run(c.name, func(t *testing.T) {
			bin := agentBin(t, c.name)
			h := newProfHome(t)
			agentScreen(t, h, bin, c.name, c.screen, c.args...)
			first := c.state(t, h)
			if first == "" {
				t.Fatalf("%s's first run left no state on the host", c.name)
			}
			agentScreen(t, h, bin, c.name, c.screen, c.args...)
			if second := c.state(t, h); second != first {
				t.Fatalf("%s's state did not carry over: first run %q, second %q", c.name, first, second)
			}
		})
	}
}

// Each agent's own sandbox has one answer, and none is a silent fallback to
// an unsandboxed agent (README, "The agent's own sandbox"):
//   - claude: the profile says jail is its sandbox (IS_SANDBOX=1), so Claude
//     Code run by root accepts --dangerously-skip-permissions. Control: with
//     the variable emptied, root is refused.
//   - gemini: GEMINI_SANDBOX=false beats a settings.json that asks for
//     docker (which cannot start inside). Control: without it, Gemini CLI
//     tries to start its container sandbox.
//   - codex: the profile runs codex with --sandbox danger-full-access,
//     Codex's documented setting for an outer sandbox: jail is its sandbox
//     (codex doctor says its filesystem sandbox is unrestricted), and the
//     user's own --sandbox is the one taken (Codex refuses the flag twice).
//     Control:
//     run through a shell (no arguments added), codex's own bubblewrap
//     sandbox cannot start inside jail and says so (every command fails,
//     loudly; none runs unsandboxed).
func TestProfileAgentsOwnSandbox(t *testing.T) {
	t.Run("claude", func(t *testing.T) {
		bin := agentBin(t, "claude")
		h := newProfHome(t)
		const refusal = "cannot be used with root"
		r := run(t, runOpts{dir: h.ws, env: h.env, timeout: 90 * time.Second}, "--quiet", "--profile", "claude", "--", bin, "-p", "hi", "--dangerously-skip-permissions")
		if strings.Contains(r.stdout+r.stderr, refusal) {
			t.Fatalf("under --profile claude, Claude Code refused --dangerously-skip-permissions:\n%s%s", r.stdout, r.stderr)
		}
		if os.Geteuid() == 0 {
			r = run(t, runOpts{dir: h.ws, env: h.env, timeout: 90 * time.Second}, "--quiet", "--profile", "claude", "--setenv", "IS_SANDBOX=", "--", bin, "-p", "hi", "--dangerously-skip-permissions")
			if !strings.Contains(r.stdout+r.stderr, refusal) {
				t.Fatalf("control: without IS_SANDBOX, root was not refused (the test cannot tell):\n%s%s", r.stdout, r.stderr)
			}
		}
	})
	t.Run("gemini", func(t *testing.T) {
		bin := agentBin(t, "gemini")
		h := newProfHome(t)
		if err := os.MkdirAll(h.path("~/.gemini"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(h.path("~/.gemini/settings.json"), []byte(`{"tools": {"sandbox": "docker"}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		env := append(append([]string{}, h.env...), "GEMINI_API_KEY=not-a-key")
		const tried = "start_sandbox"
		r := run(t, runOpts{dir: h.ws, env: env, timeout: 90 * time.Second}, "--quiet", "--profile", "gemini", "--", bin, "-p", "hi")
		if strings.Contains(r.stdout+r.stderr, tried) {
			t.Fatalf("under --profile gemini, Gemini CLI tried its own sandbox:\n%s%s", r.stdout, r.stderr)
		}
		r = run(t, runOpts{dir: h.ws, env: env, timeout: 90 * time.Second}, "--quiet", "--profile", "gemini", "--setenv", "GEMINI_SANDBOX=", "--", bin, "-p", "hi")
		if !strings.Contains(r.stdout+r.stderr, tried) {
			t.Fatalf("control: without GEMINI_SANDBOX=false, Gemini CLI did not try docker (the test cannot tell):\n%s%s", r.stdout, r.stderr)
		}
	})
	t.Run("codex", func(t *testing.T) {
		bin := agentBin(t, "codex")
		h := newProfHome(t)
		// The program's own tree, visible for the shell below too.
		tree := filepath.Dir(filepath.Dir(filepath.Dir(bin)))
		r := run(t, runOpts{dir: h.ws, env: h.env, timeout: 90 * time.Second}, "--quiet", "--profile", "codex", "--", bin, "doctor")
		if !regexp.MustCompile(`filesystem sandbox\s+unrestricted`).MatchString(r.stdout + r.stderr) {
			t.Fatalf("under --profile codex, codex doctor does not report jail as its sandbox (filesystem sandbox unrestricted):\n%s%s", r.stdout, r.stderr)
		}
		for _, own := range [][]string{{"--sandbox", "read-only"}, {"-s", "read-only"}, {"-c", `sandbox_mode="read-only"`}} {
			r = run(t, runOpts{dir: h.ws, env: h.env, timeout: 90 * time.Second}, append(append([]string{"--quiet", "--profile", "codex", "--", bin}, own...), "doctor")...)
			if strings.Contains(r.stdout+r.stderr, "cannot be used multiple times") || !regexp.MustCompile(`filesystem sandbox\s+restricted`).MatchString(r.stdout+r.stderr) {
				t.Fatalf("under --profile codex, codex %s doctor: the user's sandbox mode is not the one taken:\n%s%s", strings.Join(own, " "), r.stdout, r.stderr)
			}
		}
		r = run(t, runOpts{dir: h.ws, env: h.env, timeout: 90 * time.Second}, "--quiet", "--profile", "codex", "--read", tree, "--", "/bin/sh", "-c", "'"+bin+"' sandbox -- /bin/sh -c 'echo ran-unsandboxed'")
		if r.code == 0 || strings.Contains(r.stdout, "ran-unsandboxed") {
			t.Fatalf("codex's own sandbox ran the command inside jail (exit %d): a fallback this test does not expect:\n%s%s", r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stderr, "bwrap") && !strings.Contains(r.stderr, "sandbox") {
			t.Fatalf("codex's sandbox failed without saying why:\n%s", r.stderr)
		}
	})
}
