package credswap

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	end := time.UnixMilli(1_000_000_000_000)
	const far, near, past = `2000000000000`, `1000000300000`, `900000000000`
	cl := func(tok, exp, mcp, mexp string) []byte {
		return []byte(`{"claudeAiOauth":{"accessToken":"` + tok + `","expiresAt":` + exp + `},"mcpOAuth":{"gh":{"accessToken":"` + mcp + `","expiresAt":` + mexp + `}}}`)
	}
	tests := []struct {
		name         string
		kind         Kind
		start, after []byte
		kept, undone []string
		restore      string // "start", "merged", "", or the JSON wanted
		created      bool
	}{
		{"same", Claude, cl("a", far, "m", far), cl("a", far, "m", far), nil, nil, "", false},
		{"same reordered", Claude, []byte(`{"x":1,"y":2}`), []byte(`{"y":2, "x":1}`), nil, nil, "", false},
		{"swap not due", Claude, cl("a", far, "m", far), cl("E", far, "m", far), nil, []string{"claudeAiOauth"}, "start", false},
		{"refresh due", Claude, cl("a", near, "m", far), cl("b", far, "m", far), []string{"claudeAiOauth"}, nil, "", false},
		{"expired", Claude, cl("a", past, "m", far), cl("b", far, "m", far), []string{"claudeAiOauth"}, nil, "", false},
		{"due and mcp swap", Claude, cl("a", near, "m", far), cl("b", far, "E", far), []string{"claudeAiOauth"}, []string{"mcpOAuth.gh"}, "merged", false},
		{"expiry forged later", Claude, cl("a", far, "m", far), cl("a", past, "m", far), nil, []string{"claudeAiOauth"}, "start", false},
		{"no expiry", Claude, []byte(`{"claudeAiOauth":{"accessToken":"a"}}`), []byte(`{"claudeAiOauth":{"accessToken":"E"}}`), nil, []string{"claudeAiOauth"}, "start", false},
		{"new key", Claude, cl("a", far, "m", far), []byte(`{"claudeAiOauth":{"accessToken":"a","expiresAt":` + far + `},"mcpOAuth":{"gh":{"accessToken":"m","expiresAt":` + far + `},"evil":{}}}`), nil, []string{"mcpOAuth.evil"}, "start", false},
		{"not json", Gemini, []byte(`{"access_token":"a","expiry_date":` + far + `}`), []byte(`garbage`), nil, []string{"(whole file)"}, "start", false},
		{"gemini due", Gemini, []byte(`{"access_token":"a","expiry_date":` + near + `}`), []byte(`{"access_token":"b","expiry_date":` + far + `}`), []string{"access_token", "expiry_date"}, nil, "", false},
		{"created", Gemini, nil, []byte(`{}`), []string{"(file created)"}, nil, "", true},
		{"removed", Codex, []byte(`{}`), nil, []string{"(file removed)"}, nil, "", false},
		{"gemini mcp swap", GeminiMCP, []byte(`[{"serverName":"a","token":{"accessToken":"x","expiresAt":` + far + `}},{"serverName":"b","token":{"accessToken":"y","expiresAt":` + near + `}}]`),
			[]byte(`[{"serverName":"a","token":{"accessToken":"E","expiresAt":` + far + `}},{"serverName":"b","token":{"accessToken":"z","expiresAt":` + far + `}}]`),
			[]string{"server b"}, []string{"server a"}, "gemini", false},
		{"gemini mcp dup", GeminiMCP, []byte(`[]`), []byte(`[{"serverName":"a"},{"serverName":"a"}]`), nil, []string{"(whole file)"}, "start", false},
		// The real CLIs' layouts (session 20, read from claude 2.1.197,
		// codex 0.171, gemini 0.61): Claude's designOauth is an entry of
		// its own with its expiresAt; organizationUuid and
		// trustedDeviceToken are never due; Gemini's MCP list carries
		// clientId, tokenUrl, updatedAt beside the token; Codex's
		// auth_mode and agent_identity are never due.
		{"claude design due", Claude,
			[]byte(`{"claudeAiOauth":{"accessToken":"a","expiresAt":` + far + `},"designOauth":{"accessToken":"d","refreshToken":"r","expiresAt":` + near + `},"organizationUuid":"o"}`),
			[]byte(`{"claudeAiOauth":{"accessToken":"a","expiresAt":` + far + `},"designOauth":{"accessToken":"d2","refreshToken":"r2","expiresAt":` + far + `},"organizationUuid":"o"}`),
			[]string{"designOauth"}, nil, "", false},
		{"claude org and device swap", Claude,
			[]byte(`{"claudeAiOauth":{"accessToken":"a","expiresAt":` + near + `},"organizationUuid":"o","trustedDeviceToken":"t"}`),
			[]byte(`{"claudeAiOauth":{"accessToken":"b","expiresAt":` + far + `},"organizationUuid":"E","trustedDeviceToken":"E"}`),
			[]string{"claudeAiOauth"}, []string{"organizationUuid", "trustedDeviceToken"},
			`{"claudeAiOauth":{"accessToken":"b","expiresAt":` + far + `},"organizationUuid":"o","trustedDeviceToken":"t"}`, false},
		{"gemini mcp real refresh", GeminiMCP,
			[]byte(`[{"serverName":"a","token":{"accessToken":"x","refreshToken":"r","expiresAt":` + near + `,"tokenType":"Bearer"},"clientId":"c","tokenUrl":"u","mcpServerUrl":"m","updatedAt":1}]`),
			[]byte(`[{"serverName":"a","token":{"accessToken":"y","refreshToken":"r","expiresAt":` + far + `,"tokenType":"Bearer"},"clientId":"c","tokenUrl":"u","mcpServerUrl":"m","updatedAt":2}]`),
			[]string{"server a"}, nil, "", false},
		{"codex auth mode swap", Codex,
			[]byte(`{"auth_mode":"chatgpt","OPENAI_API_KEY":null,"tokens":{"access_token":"x"},"last_refresh":"2001-01-01T00:00:00Z"}`),
			[]byte(`{"auth_mode":"agent_identity","OPENAI_API_KEY":null,"agent_identity":{"x":"E"},"tokens":{"access_token":"x"},"last_refresh":"2001-01-01T00:00:00Z"}`),
			nil, []string{"agent_identity", "auth_mode"}, "start", false},
		{"codex api key", Codex, []byte(`{"OPENAI_API_KEY":null,"last_refresh":"2001-01-01T00:00:00Z"}`), []byte(`{"OPENAI_API_KEY":"sk-E","last_refresh":"2001-01-01T00:00:00Z"}`), nil, []string{"OPENAI_API_KEY"}, "start", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.kind, tt.start, tt.after, end)
			if !slices.Equal(d.Kept, tt.kept) || !slices.Equal(d.Undone, tt.undone) || d.Created != tt.created {
				t.Fatalf("kept %v undone %v created %v, want %v %v %v", d.Kept, d.Undone, d.Created, tt.kept, tt.undone, tt.created)
			}
			switch tt.restore {
			case "":
				if d.Restore != nil {
					t.Errorf("restore %s, want none", d.Restore)
				}
			case "start":
				if string(d.Restore) != string(tt.start) {
					t.Errorf("restore %s, want the start's bytes", d.Restore)
				}
			case "gemini":
				want := `[{"serverName":"a","token":{"accessToken":"x","expiresAt":` + far + `}},{"serverName":"b","token":{"accessToken":"z","expiresAt":` + far + `}}]`
				if !jsonEqual(d.Restore, []byte(want)) {
					t.Errorf("restore %s, want %s", d.Restore, want)
				}
			case "merged":
				want := cl("b", far, "m", far)
				if !jsonEqual(d.Restore, want) {
					t.Errorf("restore %s, want %s", d.Restore, want)
				}
			default:
				if !jsonEqual(d.Restore, []byte(tt.restore)) {
					t.Errorf("restore %s, want %s", d.Restore, tt.restore)
				}
			}
		})
	}
}

// An agent that puts a symlink (to a file of its own) in the file's place
// gets the start's bytes back in a regular file.
func TestSettleSymlink(t *testing.T) {
	home := t.TempDir()
	p := filepath.Join(home, ".claude/.credentials.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	orig := `{"claudeAiOauth":{"accessToken":"a","expiresAt":9999999999999}}`
	if err := os.WriteFile(p, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	snaps := Take(home)
	evil := filepath.Join(home, "evil.json")
	if err := os.WriteFile(evil, []byte(`{"claudeAiOauth":{"accessToken":"E"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(evil, p); err != nil {
		t.Fatal(err)
	}
	ch := Settle(home, snaps, time.Now())
	if len(ch) != 1 || ch[0].Err != nil || ch[0].Restore == nil {
		t.Fatalf("changes %+v, want the file put back", ch)
	}
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v %v, want a regular file 0600", p, fi.Mode(), err)
	}
	if b, _ := os.ReadFile(p); string(b) != orig {
		t.Errorf("%s holds %s, want the start's", p, b)
	}
}
