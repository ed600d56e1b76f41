package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPublicBundlesReadable: in a workspace venv, the CA bundle pip and
// requests verify servers with (certifi's cacert.pem) is readable inside,
// and a key by another *.pem name is not. Seen failing on 70a830a: "cat:
// .../certifi/cacert.pem: Permission denied", and every HTTPS request of
// a pyenv Python's venv pip failed the same way.
func TestPublicBundlesReadable(t *testing.T) {
	ws := workspace(t)
	bundle := filepath.Join(ws, ".venv", "lib", "python3.12", "site-packages", "pip", "_vendor", "certifi", "cacert.pem")
	key := filepath.Join(ws, "keys", "server.pem")
	for p, body := range map[string]string{bundle: "-----BEGIN CERTIFICATE-----\npublic\n", key: "-----BEGIN PRIVATE KEY-----\nsecret\n"} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := sh(t, runOpts{dir: ws}, "cat "+bundle+"; cat "+key)
	if !strings.Contains(r.stdout, "public") {
		t.Errorf("certifi's bundle unreadable inside: %q %q", r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "secret") {
		t.Errorf("a key named *.pem was readable inside: %q", r.stdout)
	}
}
