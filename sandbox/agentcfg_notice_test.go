//go:build linux

package sandbox

import (
	"fmt"
	"strings"
	"testing"
)

// A notice names a bounded number of keys; the rest are counted.
func TestNoticeKeys(t *testing.T) {
	many := make([]string, 2001)
	for i := range many {
		many[i] = fmt.Sprintf("projects./p/%d.mcpServers", i)
	}
	for _, tc := range []struct {
		keys []string
		sep  string
		want string
	}{
		{[]string{"hooks"}, ", ", "hooks"},
		{[]string{"hooks", "env"}, "; ", "hooks; env"},
		{many[:8], ", ", strings.Join(many[:8], ", ")},
		{many[:9], ", ", strings.Join(many[:8], ", ") + ", and 1 more (the audit trail lists each)"},
		{many, "; ", strings.Join(many[:8], "; ") + "; and 1993 more (the audit trail lists each)"},
	} {
		if got := noticeKeys(tc.keys, tc.sep); got != tc.want {
			t.Errorf("noticeKeys(%d keys) = %q, want %q", len(tc.keys), got, tc.want)
		}
	}
}
