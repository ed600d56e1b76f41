package fsrules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPublicBundlesReadable: the CA bundles Python packages ship as
// cacert.pem (certifi's, pip's vendored certifi, botocore's) and grpc's
// roots.pem stay readable in a workspace venv; every other *.pem stays
// hidden, and so does a bundle's name on a symlink, in other letters'
// case, in another directory, or under a user's own --deny '*.pem'. Seen
// failing before the exemption: pip's cacert.pem hidden, so every HTTPS
// request of a venv's pip (a pyenv Python's) failed inside.
func TestPublicBundlesReadable(t *testing.T) {
	base := tmp(t)
	ws := filepath.Join(base, "ws")
	sp := ".venv/lib/python3.12/site-packages/"
	mk(t, ws,
		sp+"pip/_vendor/certifi/cacert.pem",
		sp+"certifi/cacert.pem",
		sp+"botocore/cacert.pem",
		sp+"grpc/_cython/_credentials/roots.pem",
		sp+"other/cacert.pem",
		sp+"CERTIFI/CACERT.PEM",
		sp+"certifi/server.pem",
		"keys/server.pem",
		"certifi/cacert.pem/", // a directory by that name
	)
	if err := os.MkdirAll(filepath.Join(ws, "linked", "certifi"), 0o755); err != nil {
		t.Fatal(err)
	}
	must(t, os.Symlink(filepath.Join(ws, "keys", "server.pem"), filepath.Join(ws, "linked", "certifi", "cacert.pem")))
	in := Input{Workspace: ws, Home: filepath.Join(base, "home"), Writable: []string{ws}}
	plan, err := Expand(in)
	if err != nil {
		t.Fatal(err)
	}
	var pem []string
	for _, s := range summary(ws, plan.Masks) {
		if strings.Contains(strings.ToLower(s), ".pem") {
			pem = append(pem, s)
		}
	}
	eq(t, "*.pem masks", pem, []string{
		"hide " + sp + "CERTIFI/CACERT.PEM",
		"hide " + sp + "certifi/server.pem",
		"hide " + sp + "other/cacert.pem",
		"hide certifi/cacert.pem/",
		"hide keys/server.pem",
	})
	// A user's own rule holds.
	in.Deny = []string{"**/*.pem"}
	plan, err = Expand(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(summary(ws, plan.Masks), "\n"); !strings.Contains(got, sp+"certifi/cacert.pem") {
		t.Errorf("--deny '**/*.pem' left certifi's bundle readable:\n%s", got)
	}
}
