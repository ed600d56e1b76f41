//go:build linux

package tests

// Agent credential files stay writable in the sandbox (agents refresh their
// OAuth tokens), but they name no account: an agent that writes another
// account's tokens there made the user's CLI on the host work as that
// account (session 19). At the end a changed entry is kept only when the
// start's token was due for a refresh during the run; otherwise the start's
// bytes come back, and every change is said (never a token's value).

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCredentialSwap(t *testing.T) {
	now := time.Now()
	later := now.Add(24 * time.Hour).UnixMilli() // not due during the run
	due := now.Add(2 * time.Minute).UnixMilli()  // within the refresh margin
	jwt := func(exp time.Time) string {
		p := base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(`{"exp":%d}`, exp.Unix())))
		return "eyJhbGciOiJub25lIn0." + p + ".sig"
	}
	claude := func(tok string, exp int64, mcpTok string, mcpExp int64) string {
		return fmt.Sprintf(`{"claudeAiOauth":{"accessToken":%q,"refreshToken":"RFTKN%s","expiresAt":%d},"mcpOAuth":{"gh":{"accessToken":%q,"expiresAt":%d}}}`, tok, tok, exp, mcpTok, mcpExp)
	}
	codex := func(acc string, exp time.Time, last time.Time) string {
		return fmt.Sprintf(`{"OPENAI_API_KEY":null,"tokens":{"id_token":"x","access_token":%q,"refresh_token":"r","account_id":%q},"last_refresh":%q}`,
			jwt(exp), acc, last.UTC().Format(time.RFC3339))
	}
	gemini := func(tok string, exp int64) string {
		return fmt.Sprintf(`{"access_token":%q,"refresh_token":"RFTKN%s","expiry_date":%d,"token_type":"Bearer"}`, tok, tok, exp)
	}
	tests := []struct {
		name, path, start, agent, want, say string
	}{
		{"claude swap", ".claude/.credentials.json", claude("USERTOK", later, "UMCPTOK", later), claude("EVILTOK", later*2, "UMCPTOK", later),
			"start", "claudeAiOauth changed in the sandbox: put back"},
		{"claude mcp swap", ".claude/.credentials.json", claude("USERTOK", later, "UMCPTOK", later), claude("USERTOK", later, "EVILTOK", later*2),
			"start", "mcpOAuth.gh changed in the sandbox: put back"},
		{"claude refresh due", ".claude/.credentials.json", claude("USERTOK", due, "UMCPTOK", later), claude("NEWTOK", later, "UMCPTOK", later),
			"agent", "claudeAiOauth changed with a token refresh due: kept"},
		{"claude expired", ".claude/.credentials.json", claude("USERTOK", now.Add(-time.Hour).UnixMilli(), "UMCPTOK", later), claude("NEWTOK", later, "UMCPTOK", later),
			"agent", "kept"},
		{"codex swap", ".codex/auth.json", codex("user", now.Add(72*time.Hour), now.Add(-time.Hour)), codex("evil", now.Add(240*time.Hour), now),
			"start", "tokens changed in the sandbox: put back"},
		{"codex refresh due", ".codex/auth.json", codex("user", now.Add(72*time.Hour), now.Add(-9*24*time.Hour)), codex("user", now.Add(240*time.Hour), now),
			"agent", "changed with a token refresh due: kept"},
		{"gemini swap", ".gemini/oauth_creds.json", gemini("USERTOK", later), gemini("EVILTOK", later*2),
			"start", "changed in the sandbox: put back"},
		{"gemini mcp swap", ".gemini/mcp-oauth-tokens.json", `[{"serverName":"gh","token":{"accessToken":"USERTOK","expiresAt":` + fmt.Sprint(later) + `}}]`,
			`[{"serverName":"gh","token":{"accessToken":"EVILTOK","expiresAt":` + fmt.Sprint(later) + `}}]`, "start", "server gh changed in the sandbox: put back"},
		{"gemini refresh due", ".gemini/oauth_creds.json", gemini("USERTOK", due), gemini("NEWTOK", later),
			"agent", "kept"},
		// A sign-in inside on a fresh account (start "": no file): kept,
		// as the profiles' sign-in hosts and callback port promise, and
		// said with what to do if it was not the user's.
		{"claude sign-in inside", ".claude/.credentials.json", "", claude("NEWTOK", later, "NEWTOK", later),
			"agent", "made in the sandbox (a sign-in inside jail): kept; if you did not sign in there, remove the file"},
		{"codex sign-in inside", ".codex/auth.json", "", codex("new", now.Add(240*time.Hour), now),
			"agent", "made in the sandbox (a sign-in inside jail): kept"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home, state, ws := workspace(t), workspace(t), workspace(t)
			p := filepath.Join(home, tt.path)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if tt.start != "" {
				if err := os.WriteFile(p, []byte(tt.start), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			// The agent writes by rename, as the CLIs do (its version
			// comes from the workspace: the trail records the command).
			if err := os.WriteFile(filepath.Join(ws, "agent.json"), []byte(tt.agent), 0o644); err != nil {
				t.Fatal(err)
			}
			script := `cp agent.json "$1.tmp" && mv -f "$1.tmp" "$1"`
			trail := filepath.Join(state, "trail.jsonl")
			c := run(t, runOpts{dir: ws, env: []string{"HOME=" + home, "XDG_STATE_HOME=" + state}},
				"--audit", trail, "-w", filepath.Dir(p), "--", "/bin/sh", "-c", script, "sh", p)
			mustCode(t, c, 0)
			got, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"start": tt.start, "agent": tt.agent}[tt.want]
			if string(got) != want {
				t.Errorf("%s after the run:\n%s\nwant the %s's version:\n%s\nstderr:\n%s", tt.path, got, tt.want, want, c.stderr)
			}
			if fi, err := os.Stat(p); err == nil && tt.want == "start" && fi.Mode().Perm() != 0o600 {
				t.Errorf("%s mode %v, want 0600", tt.path, fi.Mode().Perm())
			}
			if !strings.Contains(c.stderr, tt.say) {
				t.Errorf("stderr does not say %q:\n%s", tt.say, c.stderr)
			}
			var denied []string
			for _, ev := range eventsOf(trailEvents(t, trail), "deny") {
				if ev["what"] == "credential" {
					denied = append(denied, fmt.Sprint(ev["target"]))
				}
			}
			if (tt.want == "start") != (len(denied) > 0) {
				t.Errorf("trail's credential deny events %v, want them only when put back", denied)
			}
			raw, _ := os.ReadFile(trail)
			for _, secret := range []string{"EVILTOK", "USERTOK", "NEWTOK", "RFTKN"} {
				if strings.Contains(c.stderr, secret) || strings.Contains(string(raw), secret) {
					t.Errorf("stderr or the trail names a token value (%s):\n%s", secret, c.stderr)
				}
			}
		})
	}
}

// A run whose supervisor is killed (kill -9, the OOM killer, a host crash)
// never reaches its end's check: the agent's swap stayed on the host, and
// the next start did not repair it (session 20). The start's snapshot is
// recorded in jail's state directory; the next start settles a dead run's
// record as its end would have, judged at the dead run's last beat. A file
// changed after that end is the user's (their CLI refreshed since): left.
func TestCredentialSwapSupervisorKilled(t *testing.T) {
	later := time.Now().Add(24 * time.Hour).UnixMilli()
	claude := func(tok string, exp int64) string {
		return fmt.Sprintf(`{"claudeAiOauth":{"accessToken":%q,"refreshToken":"RFTKN%s","expiresAt":%d}}`, tok, tok, exp)
	}
	for _, tt := range []struct {
		name string
		user string // the user's CLI rewrites the file after the run died
		gc   bool   // jail gc settles it, not the next start
		want string
		say  string
	}{
		{"swap put back", "", false, claude("USERTOK", later),
			"~/.claude/.credentials.json credentials (left by an interrupted jail run): claudeAiOauth changed in the sandbox: put back"},
		{"swap put back by gc", "", true, claude("USERTOK", later),
			"~/.claude/.credentials.json credentials (left by an interrupted jail run): claudeAiOauth changed in the sandbox: put back"},
		{"user's refresh since left", claude("USERNEW", later*2), false, claude("USERNEW", later*2),
			"~/.claude/.credentials.json credentials: changed after that run ended"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			home, state, ws := workspace(t), workspace(t), workspace(t)
			p := filepath.Join(home, ".claude/.credentials.json")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			start := claude("USERTOK", later)
			if err := os.WriteFile(p, []byte(start), 0o600); err != nil {
				t.Fatal(err)
			}
			evil := claude("EVILTOK", later*2)
			if err := os.WriteFile(filepath.Join(ws, "agent.json"), []byte(evil), 0o644); err != nil {
				t.Fatal(err)
			}
			env := []string{"HOME=" + home, "XDG_STATE_HOME=" + state}
			script := `cp agent.json "$1.tmp" && mv -f "$1.tmp" "$1" && exec sleep 1000 credswap-killed`
			cmd := exec.Command(jail(t), "-w", filepath.Dir(p), "--", "/bin/sh", "-c", script, "sh", p)
			cmd.Dir, cmd.Env = ws, append(os.Environ(), env...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				if b, _ := os.ReadFile(p); string(b) == evil {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatal("never saw the agent's write")
				}
				time.Sleep(2 * time.Millisecond)
			}
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			waitNoProcs(t, "credswap-killed", 5*time.Second)
			recs, _ := filepath.Glob(filepath.Join(state, "jail/credswap/*.json"))
			if len(recs) != 1 {
				t.Errorf("the killed run's credential records: %v, want one", recs)
			}
			if tt.user != "" && len(recs) == 1 {
				// The run died a minute ago; the user's CLI wrote since.
				old := time.Now().Add(-time.Minute)
				if err := os.Chtimes(recs[0], old, old); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(tt.user), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			trail := filepath.Join(state, "next.jsonl")
			args := []string{"--audit", trail, "--", "/bin/true"}
			if tt.gc {
				args = []string{"gc"}
			}
			r := run(t, runOpts{dir: ws, env: env}, args...)
			mustCode(t, r, 0)
			said := r.stderr + r.stdout // jail gc tells on stdout
			if b, _ := os.ReadFile(p); string(b) != tt.want {
				t.Errorf("after the next start %s holds\n%s\nwant\n%s\nsaid:\n%s", p, b, tt.want, said)
			}
			if fi, err := os.Stat(p); tt.user == "" && (err != nil || fi.Mode().Perm() != 0o600) {
				t.Errorf("%s: %v, want mode 0600", p, fi)
			}
			if !strings.Contains(said, tt.say) {
				t.Errorf("the next start does not say %q:\n%s", tt.say, said)
			}
			if left, _ := filepath.Glob(filepath.Join(state, "jail/credswap/*")); len(left) > 0 {
				t.Errorf("credential records left after the next start: %v", left)
			}
			raw, _ := os.ReadFile(trail)
			for _, secret := range []string{"EVILTOK", "USERTOK", "USERNEW", "RFTKN"} {
				if strings.Contains(said, secret) || strings.Contains(string(raw), secret) {
					t.Errorf("stderr or the trail names a token value (%s)", secret)
				}
			}
			// Said once: the start after that has nothing to say.
			r2 := run(t, runOpts{dir: ws, env: env}, "--", "/bin/true")
			if strings.Contains(r2.stderr, "credentials") {
				t.Errorf("the start after that speaks of credentials again:\n%s", r2.stderr)
			}
		})
	}
}
