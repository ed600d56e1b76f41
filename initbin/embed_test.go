//go:build jail_leaninit

package initbin

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// The build embedded a whole program and its own sum (make build writes
// both; a stale sum would name the copy after another build).
func TestEmbeddedProgram(t *testing.T) {
	if !Embedded() {
		t.Fatal("built with jail_leaninit but nothing usable is embedded (make build writes initbin/jail-init and its .sum)")
	}
	h := sha256.Sum256([]byte(program))
	if got := hex.EncodeToString(h[:]); got != strings.TrimSpace(sum) {
		t.Fatalf("the embedded program's sha256 is %s, its .sum says %s", got, sum)
	}
	if !strings.HasPrefix(program, "\x7fELF") {
		t.Fatal("the embedded program is not an ELF executable")
	}
}
