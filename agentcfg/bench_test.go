package agentcfg

import (
	"fmt"
	"strings"
	"testing"
)

// A ~640 KB ~/.claude.json with 500 projects, one ordinary change: the
// check that runs after every write Claude Code makes.
func BenchmarkMergeBigClaudeJSON(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"numStartups": 1, "mcpServers": {}, "projects": {`)
	for i := 0; i < 500; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `"/home/u/p%d": {"allowedTools": [], "mcpServers": {}, "history": [%s], "hasTrustDialogAccepted": true}`, i, strings.Repeat(`{"display": "some prompt text here", "pastedContents": {}},`, 20)+`{}`)
	}
	sb.WriteString(`}}`)
	snap := sb.String()
	cur := strings.Replace(snap, `"numStartups": 1`, `"numStartups": 2`, 1)
	f := Files[0]
	b.SetBytes(int64(len(cur)))
	for i := 0; i < b.N; i++ {
		r := Merge(f, Context{Workspace: "/home/u/p1"}, v(snap), v(cur))
		if r.Changed() {
			b.Fatal(r.Keys)
		}
	}
}
