package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The errors the supervisor passes up name the option to change as `key`,
// which the CLI renders as --key and a config file reader as key (see
// policy.RefPattern); a bare "audit" or a spelled "--audit" reads wrong in
// one of them.
func TestErrorsNameOptionsByKey(t *testing.T) {
	dir := t.TempDir()
	trail := filepath.Join(dir, "t.jsonl")
	placement := CheckPlacement(trail, []string{dir}, nil)
	if err := os.WriteFile(trail, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, exists := Create(trail)
	for _, c := range []struct {
		name string
		err  error
		key  string
	}{
		{"placement", placement, "`audit`"},
		{"no syslog", ErrNoSyslog, "`audit-syslog`"},
		{"trail exists", exists, "`audit`"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.key) {
			t.Errorf("%s: %v: does not name %s", c.name, c.err, c.key)
		}
	}
}
