package policy

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{"0", 0, false},
		{"1048576", 1048576, false},
		{"100b", 100, false},
		{"64k", 64 << 10, false},
		{"64K", 64 << 10, false},
		{"512M", 512 << 20, false},
		{"512MiB", 512 << 20, false},
		{"512mb", 512 << 20, false},
		{"1G", 1 << 30, false},
		{"1g", 1 << 30, false},
		{"1.5G", 3 << 29, false},
		{"2T", 2 << 40, false},
		{" 8M ", 8 << 20, false},
		{"", 0, true},
		{"M", 0, true},
		{"-1", 0, true},
		{"-1M", 0, true},
		{"+5M", 0, true},
		{"1e9", 0, true},
		{"0x10", 0, true},
		{".5G", 0, true},
		{"12Q", 0, true},
		{"9223372036854775807", 9223372036854775807, false},
		{"9223372036854775808", 0, true},
		{"8388608T", 0, true},
		{"1_000", 0, true},
		{"NaNG", 0, true},
		{"InfG", 0, true},
	} {
		got, err := ParseSize(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseSize(%q) = %d, want error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestFormatSizeRoundTrip(t *testing.T) {
	for _, n := range []int64{0, 1, 1023, 1024, 64 << 20, 3 << 29, 1 << 40, 1536} {
		s := FormatSize(n)
		back, err := ParseSize(s)
		if err != nil || back != n {
			t.Errorf("FormatSize(%d) = %q -> %d, %v", n, s, back, err)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"512M", "1G", "64k", "100", "1.5g", "-1", "", "9223372036854775807", "8E", "1ib"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			if err.Error() == "" || strings.Contains(err.Error(), "strconv") {
				t.Fatalf("error without a reason, or with parser internals: %v", err)
			}
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d < 0", s, n)
		}
		// Whatever parses must format and re-parse to the same value.
		if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
			t.Fatalf("round trip %q -> %d -> %q -> %d, %v", s, n, FormatSize(n), back, err)
		}
	})
}
