//go:build linux

package tests

// Codex's sign-in callback port (issue 11): the codex profile publishes
// 127.0.0.1:1455 only when it is free, so a second `jail -P codex` (or any
// program holding the port) does not stop the run; a one-line notice says
// the port is in use and the sign-in would not complete through it.

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

func TestProfileCodexSecondRunStarts(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:1455")
	if err != nil {
		if inCI() {
			t.Fatalf("port 1455 is busy on the host: %v", err)
		}
		t.Skipf("port 1455 is busy on the host: %v", err)
	}
	defer l.Close() // the first sandbox's callback port, as far as jail can tell
	h := newProfHome(t)
	r := sh(t, runOpts{dir: h.ws, env: h.env}, `echo started`, "--profile", "codex")
	if r.code != 0 || !strings.Contains(r.stdout, "started") {
		t.Fatalf("with 1455 taken, jail -P codex: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var notes []string
	for _, line := range strings.Split(r.stderr, "\n") {
		if strings.Contains(line, "127.0.0.1:1455") {
			notes = append(notes, line)
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "in use") {
		t.Errorf("want one notice saying 127.0.0.1:1455 is in use; stderr:\n%s", r.stderr)
	}
	// --publish given by the user stays strict: a taken port is an error.
	r = sh(t, runOpts{dir: h.ws, env: h.env}, `echo started`, "--publish", "1455:1455")
	if r.code != 125 {
		t.Errorf("--publish 1455:1455 with the port taken: exit %d, want 125\n%s", r.code, r.stderr)
	}
}

// Codex makes ~/.codex/skills/.system at every start, and ~/.codex/skills/
// is read-only inside (codexskills): the codex profile makes the directory
// on the host when it is missing, so that it is mounted read-only rather
// than watched as absent (without it, Codex's own mkdir was quarantined at
// every start, a notice each time, and an empty HOME never got the mount).
func TestProfileCodexSkillsDirMade(t *testing.T) {
	h := newProfHome(t)
	r := sh(t, runOpts{dir: h.ws, env: h.env}, `mkdir -p ~/.codex/skills/.system 2>/dev/null && echo made; true`, "--profile", "codex")
	mustCode(t, r, 0)
	if strings.Contains(r.stdout, "made") || strings.Contains(r.stderr, "quarantine") {
		t.Errorf("~/.codex/skills/.system could be made inside (or was quarantined):\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	if ents, err := os.ReadDir(h.path("~/.codex/skills")); err != nil || len(ents) != 0 {
		t.Errorf("~/.codex/skills on the host after the run: %v, %v; want an empty directory", ents, err)
	}
}

// The profile tells Codex that jail is its sandbox with --sandbox
// danger-full-access rather than -c sandbox_mode=...: given -c, Codex runs
// without its shared background server and says so at every start ("⚠ 1
// warning"). With the flag, /status shows the background server and the
// permissions jail asked for.
func TestProfileCodexBackgroundServer(t *testing.T) {
	bin := agentBin(t, "codex")
	h := newProfHome(t)
	// Signed in with an API key and the workspace trusted: Codex opens on
	// its prompt, with no sign-in or trust screen.
	h.writeHome(t, map[string]string{
		"~/.codex/auth.json":   `{"auth_mode": "apikey", "OPENAI_API_KEY": "sk-not-a-key"}`,
		"~/.codex/config.toml": "[projects.\"" + h.ws + "\"]\ntrust_level = \"trusted\"\n",
	})
	a := startAgentTTY(t, h, bin, "codex")
	defer a.stop()
	a.waitFor(t, "Ask Codex to do anything")
	a.master.Write([]byte("/status"))
	time.Sleep(500 * time.Millisecond)
	a.master.Write([]byte("\r"))
	a.waitFor(t, "Permissions:")
	a.waitFor(t, "danger-full-access")
	s := plain(a.scr.String())
	if !strings.Contains(s, "Local background server") || strings.Contains(s, "warning") {
		t.Fatalf("under --profile codex, Codex runs without its shared background server (or warns):\n%s", s)
	}
}
