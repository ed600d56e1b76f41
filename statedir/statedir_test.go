package statedir

import (
	"errors"
	"testing"
)

func TestFrom(t *testing.T) {
	tests := []struct {
		name, xdg, home, want string
		err                   error
	}{
		{"xdg", "/x/state", "/home/u", "/x/state/jail", nil},
		{"xdg not clean", "/x/state/", "/home/u", "/x/state/jail", nil},
		{"home fallback", "", "/home/u", "/home/u/.local/state/jail", nil},
		{"relative xdg ignored", "rel/state", "/home/u", "/home/u/.local/state/jail", nil},
		{"no home", "", "", "", ErrNoStateDir},
		{"relative home", "", "home/u", "", ErrNoStateDir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"XDG_STATE_HOME": tt.xdg, "HOME": tt.home}
			got, err := From(func(k string) string { return env[k] })
			if got != tt.want || !errors.Is(err, tt.err) {
				t.Errorf("From = %q, %v; want %q, %v", got, err, tt.want, tt.err)
			}
		})
	}
	t.Setenv("XDG_STATE_HOME", "/s")
	if p, err := Path(Run); p != "/s/jail/run" || err != nil {
		t.Errorf("Path(Run) = %q, %v", p, err)
	}
}

func TestRuntimeFrom(t *testing.T) {
	for _, tt := range []struct {
		xdg, want string
		ok        bool
	}{
		{"/run/user/1000", "/run/user/1000/jail", true},
		{"/run/user/1000/", "/run/user/1000/jail", true},
		{"", "", false},
		{"run/user", "", false},
	} {
		got, ok := RuntimeFrom(func(k string) string {
			if k == "XDG_RUNTIME_DIR" {
				return tt.xdg
			}
			return ""
		})
		if got != tt.want || ok != tt.ok {
			t.Errorf("RuntimeFrom(%q) = %q, %v; want %q, %v", tt.xdg, got, ok, tt.want, tt.ok)
		}
	}
}
