package sandbox

import (
	"errors"
	"io"
	"testing"

	"github.com/jail-sandbox/jail/policy"
)

func TestLocaleUTF8(t *testing.T) {
	for _, c := range []struct {
		env  []string
		utf8 bool
	}{
		{nil, true}, // unset: most terminals are UTF-8 (CI, ssh)
		{[]string{"LANG=C"}, true},
		{[]string{"LANG=en_US.UTF-8"}, true},
		{[]string{"LANG=C.utf8"}, true},
		{[]string{"LANG=de_DE.ISO-8859-1"}, false},
		{[]string{"LANG=ja_JP.eucJP"}, false},
		{[]string{"LANG=en_US.UTF-8", "LC_ALL=fr_FR.ISO-8859-15@euro"}, false},
		{[]string{"LANG=fr_FR.ISO-8859-15", "LC_CTYPE=fr_FR.UTF-8@euro"}, true},
		{[]string{"LC_ALL=", "LANG=de_DE.ISO-8859-1"}, false}, // empty LC_ALL does not count
	} {
		if got := localeUTF8(c.env); got != c.utf8 {
			t.Errorf("%v: utf8 %v, want %v", c.env, got, c.utf8)
		}
	}
}

func TestNewTermFilter(t *testing.T) {
	if _, err := newTermFilter(&policy.Policy{AllowTerminal: []string{"clipboard,hyperlinks", "notify"}}, io.Discard); err != nil {
		t.Errorf("valid classes: %v", err)
	}
	_, err := newTermFilter(&policy.Policy{AllowTerminal: []string{"clipboard,clipbaord"}}, io.Discard)
	if err == nil || !errors.Is(err, policy.ErrInvalid) {
		t.Errorf("unknown class: %v, want an ErrInvalid", err)
	}
}
