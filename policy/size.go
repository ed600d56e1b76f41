package policy

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// Value errors say what a valid value looks like, in the user's terms (the
// reader prefixes the option and where it came from).
var (
	errSize       = errors.New("not a size: use a number with a unit, e.g. 512M or 2G (units k, M, G, T)")
	errSizeRange  = errors.New("too large: use at most 8191T")
	errNoUnit     = errors.New("add a unit, e.g. 10s or 5m")
	errDuration   = errors.New("not a duration: use e.g. 30s, 10m or 1h30m")
	errNegative   = errors.New("must not be negative")
	errBool       = errors.New("want true or false")
	errWholeNum   = errors.New("not a whole number")
	errNumber     = errors.New("not a number")
	errEmptyValue = errors.New("empty value")
)

// ParseSize parses a size: plain bytes ("1048576"), or a number with a binary
// suffix k/K, m/M, g/G, t/T (optionally followed by "i", "b" or "ib": 512M =
// 512MiB = 512*2^20). Fractions are allowed with a suffix ("1.5G"). It
// rejects negatives, empty strings and overflow; its errors say what a size
// looks like (no parser internals).
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errSize
	}
	lower := strings.ToLower(s)
	for _, suf := range []string{"ib", "b", "i"} {
		if len(lower) > len(suf) && strings.HasSuffix(lower, suf) {
			c := lower[len(lower)-len(suf)-1]
			if suf == "b" && (c >= '0' && c <= '9') {
				lower = lower[:len(lower)-1] // "100b" = 100 bytes
				break
			}
			if strings.ContainsRune("kmgt", rune(c)) {
				lower = lower[:len(lower)-len(suf)]
				break
			}
		}
	}
	mult := int64(1)
	switch lower[len(lower)-1] {
	case 'k':
		mult = 1 << 10
	case 'm':
		mult = 1 << 20
	case 'g':
		mult = 1 << 30
	case 't':
		mult = 1 << 40
	}
	num := lower
	if mult != 1 {
		num = lower[:len(lower)-1]
	}
	if num == "" || strings.ContainsAny(num, "+-eExXpP_ ") || strings.HasPrefix(num, ".") {
		return 0, errSize
	}
	if mult == 1 || !strings.Contains(num, ".") {
		n, err := strconv.ParseInt(num, 10, 64)
		if errors.Is(err, strconv.ErrRange) {
			return 0, errSizeRange
		}
		if err != nil {
			return 0, errSize
		}
		if n > math.MaxInt64/mult {
			return 0, errSizeRange
		}
		return n * mult, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, errSize
	}
	v := f * float64(mult)
	if math.IsNaN(v) || v < 0 || v >= math.MaxInt64 {
		return 0, errSizeRange
	}
	return int64(v), nil
}

// FormatSize renders bytes the way ParseSize reads them (64M, 1G, 1536k).
func FormatSize(n int64) string {
	for _, u := range []struct {
		s string
		v int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"k", 1 << 10}} {
		if n >= u.v && n%u.v == 0 {
			return strconv.FormatInt(n/u.v, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}

// ParseDuration parses a duration that must carry a unit ("30s", "10m",
// "1h30m"): a bare number is refused rather than guessed at, since "10" could
// mean seconds or minutes to different readers.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errDuration
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		if s == "0" {
			return 0, nil // zero needs no unit: it is "none"
		}
		return 0, errNoUnit
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errDuration
	}
	if d < 0 {
		return 0, errNegative
	}
	return d, nil
}

// FormatDuration renders a duration the way ParseDuration reads it, without
// the zero components time.Duration.String adds ("1h" rather than "1h0m0s").
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
