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
	"path/filepath"
	"strings"
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
		return fmt.Sprintf(`{"claudeAiOauth":{"accessToken":%q,"refreshToken":"rt_%s","expiresAt":%d},"mcpOAuth":{"gh":{"accessToken":%q,"expiresAt":%d}}}`, tok, tok, exp, mcpTok, mcpExp)
	}
	codex := func(acc string, exp time.Time, last time.Time) string {
		return fmt.Sprintf(`{"OPENAI_API_KEY":null,"tokens":{"id_token":"x","access_token":%q,"refresh_token":"r","account_id":%q},"last_refresh":%q}`,
			jwt(exp), acc, last.UTC().Format(time.RFC3339))
	}
	gemini := func(tok string, exp int64) string {
		return fmt.Sprintf(`{"access_token":%q,"refresh_token":"rt_%s","expiry_date":%d,"token_type":"Bearer"}`, tok, tok, exp)
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
			for _, secret := range []string{"EVILTOK", "USERTOK", "NEWTOK", "rt_"} {
				if strings.Contains(c.stderr, secret) || strings.Contains(string(raw), secret) {
					t.Errorf("stderr or the trail names a token value (%s):\n%s", secret, c.stderr)
				}
			}
		})
	}
}
