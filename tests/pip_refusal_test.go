//go:build linux

package tests

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestRefusalPip: pip with an https:// index on a refused host (through the
// proxy jail names in HTTPS_PROXY, as pip's default index is reached) fails
// in under 5 s beyond pip's own start, in both network modes, with jail's
// refusal naming the host and the flag in pip's own output, and one notice.
// Before jail set PIP_RETRIES it took 7.5 s of pip's backoff more: urllib3
// retries a refused tunnel (and a TLS alert, a reset, a DNS failure) like
// any failed connection, so no answer jail can give over https stops it.
// A user's own --setenv PIP_RETRIES wins: with 5 retries it is slow again,
// which shows that the fast failure is the variable's doing.
func TestRefusalPip(t *testing.T) {
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-m", "pip", "--version").Run(); err != nil {
		if inCI() {
			t.Fatalf("%s -m pip does not run (the CI image has python3-pip): %v", py, err)
		}
		t.Skipf("%s -m pip does not run: %v", py, err)
	}
	pip := py + ` -m pip download --no-cache-dir --disable-pip-version-check -d "$(mktemp -d)" --index-url https://` + refusedHost + `/simple six`
	target := refusedHost + ":443"
	want := "jail: refused " + target + " - add --allow-domain " + refusedHost
	for _, mode := range refusalModes() {
		t.Run(mode.name, func(t *testing.T) {
			script := timed + `cd "$(mktemp -d)"
t version ` + py + ` -m pip --version
t pip ` + pip + `
exit 0`
			r := sh(t, runOpts{env: refusalEnv(t), timeout: 2 * time.Minute}, script, mode.flags...)
			mustCode(t, r, 0)
			res := parseTimed(r.stdout)
			base, got := res["version"], res["pip"]
			if base.rc != 0 {
				t.Fatalf("pip --version failed inside:\n%s", base.out)
			}
			if got.rc == 0 {
				t.Fatalf("ATTACK WORKED: pip download from %s succeeded:\n%s", refusedHost, got.out)
			}
			t.Logf("pip failed after %d ms; pip --version took %d ms", got.ms, base.ms)
			if extra := got.ms - base.ms; extra > 5000 {
				t.Errorf("pip took %d ms (%d ms beyond its own start), want under 5 s:\n%s", got.ms, extra, got.out)
			}
			if !strings.Contains(got.out, want) {
				t.Errorf("pip's error does not carry jail's %q:\n%s", want, got.out)
			}
			if n := countNotices(r.stderr, target); n != 1 {
				t.Errorf("%d notices for %s, want exactly 1; stderr:\n%s", n, target, r.stderr)
			}
		})
	}
	t.Run("user-setting-wins", func(t *testing.T) {
		script := timed + `cd "$(mktemp -d)"
t pip ` + pip + `
exit 0`
		r := sh(t, runOpts{env: refusalEnv(t), timeout: 2 * time.Minute}, script, "--setenv", "PIP_RETRIES=5")
		mustCode(t, r, 0)
		res := parseTimed(r.stdout)
		// pip's backoff alone sleeps 7.5 s with 5 retries.
		if got := res["pip"]; got.rc == 0 || got.ms < 7500 {
			t.Errorf("with --setenv PIP_RETRIES=5 pip ended (rc %d) after %d ms, want pip's full 7.5 s of backoff (the user's setting lost):\n%s", got.rc, got.ms, got.out)
		}
	})
}
