package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestTrustStore(t *testing.T) {
	w := newWorld(t)
	proj := w.write(filepath.Join(w.ws, ProjectFileName), "memory = \"1G\"\n")
	data, _ := os.ReadFile(proj)
	if err := w.trust.Check(proj, data); !errors.Is(err, ErrUntrusted) {
		t.Fatalf("Check before trust: %v", err)
	}
	h, err := w.trust.Trust(proj, time.Unix(0, 0))
	if err != nil || len(h) != 64 {
		t.Fatalf("Trust: %q %v", h, err)
	}
	if err := w.trust.Check(proj, data); err != nil {
		t.Fatalf("Check after trust: %v", err)
	}
	// Another path with the same bytes is not trusted: records are per file.
	other := w.write(filepath.Join(w.home, "other", ProjectFileName), string(data))
	if err := w.trust.Check(other, data); !errors.Is(err, ErrUntrusted) {
		t.Errorf("same bytes elsewhere: %v", err)
	}
	if err := w.trust.Check(proj, append(data, ' ')); !errors.Is(err, ErrChanged) {
		t.Errorf("changed bytes: %v", err)
	}
	fi, err := os.Stat(w.trust.Path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("trust store mode %v, %v; want 0600", fi.Mode(), err)
	}
	// A file jail would refuse is not trusted.
	bad := w.write(filepath.Join(w.home, "bad", ProjectFileName), "workspace = \"/\"\n")
	if _, err := w.trust.Trust(bad, time.Now()); err == nil {
		t.Error("trusted a file that does not load")
	}
	w.write(proj, "memory = \"2G\"\n")
	list, err := w.trust.List()
	if err != nil || len(list) != 1 || list[0].Path != proj || list[0].State != "changed" {
		t.Errorf("List: %+v %v", list, err)
	}
	if ok, err := w.trust.Revoke(proj); !ok || err != nil {
		t.Errorf("Revoke: %v %v", ok, err)
	}
	if ok, _ := w.trust.Revoke(proj); ok {
		t.Error("revoked twice")
	}
	// A damaged store is an error, not an empty one.
	os.WriteFile(w.trust.Path, []byte("{"), 0o600)
	if _, err := w.trust.Trust(proj, time.Now()); err == nil {
		t.Error("a damaged trust store was overwritten")
	}
}
