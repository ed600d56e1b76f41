package termsafe

import "testing"

func TestControl(t *testing.T) {
	for _, tc := range []struct {
		r    rune
		want bool
	}{
		{'a', false}, {' ', false}, {'é', false}, {'\u00a0', false}, {'\u4e2d', false},
		{'\n', true}, {'\t', true}, {0x1b, true}, {0x7f, true}, {0x9b, true}, {0x9f, true},
		{'\u202e', true}, {'\u2066', true}, {'\u200f', true},
	} {
		if got := Control(tc.r); got != tc.want {
			t.Errorf("Control(%U) = %v, want %v", tc.r, got, tc.want)
		}
	}
}
