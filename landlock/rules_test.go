package landlock

import (
	"errors"
	"strings"
	"testing"
)

func TestEffectiveABI(t *testing.T) {
	for _, c := range []struct{ kernel, max, want int }{
		{7, 0, 7}, {7, 3, 3}, {7, 9, 7}, {7, -1, 0}, {0, 0, 0}, {0, 5, 0}, {1, 1, 1},
	} {
		if got := effectiveABI(c.kernel, c.max); got != c.want {
			t.Errorf("effectiveABI(%d, %d) = %d, want %d", c.kernel, c.max, got, c.want)
		}
	}
}

func names(m []string) string {
	var n []string
	for _, s := range m {
		n = append(n, strings.SplitN(s, " ", 2)[0])
	}
	return strings.Join(n, ",")
}

func TestMissing(t *testing.T) {
	all := Rules{DenyTCP: true, Scope: true}
	for _, c := range []struct {
		r    Rules
		abi  int
		want string
	}{
		{all, 0, "landlock,refer,truncate,tcp,ioctl_dev,scope"},
		{Rules{}, 0, "landlock,refer,truncate,ioctl_dev"},
		{all, 1, "refer,truncate,tcp,ioctl_dev,scope"},
		{all, 3, "tcp,ioctl_dev,scope"},
		{Rules{Scope: true}, 3, "ioctl_dev,scope"},
		{all, 4, "ioctl_dev,scope"},
		{all, 5, "scope"},
		{all, 6, ""},
		{all, 7, ""},
	} {
		if got := names(missing(c.r, c.abi)); got != c.want {
			t.Errorf("missing(%+v, %d) = %q, want %q", c.r, c.abi, got, c.want)
		}
	}
}

func TestCheckRequire(t *testing.T) {
	for _, c := range []struct {
		require, abi int
		fail         bool
	}{
		{0, 0, false}, {0, 7, false}, {3, 3, false}, {3, 7, false},
		{4, 3, true}, {1, 0, true}, {99, 7, true},
	} {
		err := checkRequire(Rules{Require: c.require}, c.abi)
		if (err != nil) != c.fail || (err != nil && !errors.Is(err, ErrABITooOld)) {
			t.Errorf("checkRequire(%d, abi %d) = %v, want fail=%v wrapping ErrABITooOld", c.require, c.abi, err, c.fail)
		}
		if err != nil && !strings.Contains(err.Error(), "--require-landlock") {
			t.Errorf("error %q does not say what to do", err)
		}
	}
}
