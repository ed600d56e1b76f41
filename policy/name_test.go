package policy

import (
	"regexp"
	"strings"
	"testing"
)

// nameRE is the rule ValidName states, as the regular expression it
// replaced.
var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"claude", true}, {"npm", true}, {"go-build", true}, {"a.b_c-d", true}, {"0", true},
		{strings.Repeat("a", 64), true}, {strings.Repeat("a", 65), false},
		{"", false}, {".", false}, {"..", false}, {"-x", false}, {"_x", false}, {".x", false},
		{"Claude", false}, {"a/b", false}, {"a b", false}, {"a:b", false}, {"a\x00", false}, {"é", false}, {"a\n", false},
	} {
		if got := ValidName(tc.name); got != tc.ok {
			t.Errorf("ValidName(%q) = %v, want %v", tc.name, got, tc.ok)
		}
		if want := nameRE.MatchString(tc.name); want != tc.ok {
			t.Errorf("the table disagrees with the rule for %q", tc.name)
		}
	}
}

// FuzzValidName: ValidName says what the regular expression it replaced
// says, for any string.
func FuzzValidName(f *testing.F) {
	for _, s := range []string{"claude", "", ".", "a-", strings.Repeat("z", 64), "A", "a\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidName(s), nameRE.MatchString(s); got != want {
			t.Errorf("ValidName(%q) = %v, the rule says %v", s, got, want)
		}
	})
}
