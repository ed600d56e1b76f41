package agentcfg

import (
	"fmt"
	"strings"
	"testing"
)

// bigClaudeJSON is a ~/.claude.json with n projects, each with a history of
// 20 prompts of size bytes (Claude Code keeps such per-project history;
// users report 10-50 MB files).
func bigClaudeJSON(n, size int) string {
	var sb strings.Builder
	sb.WriteString(`{"numStartups": 1, "mcpServers": {}, "projects": {`)
	entry := fmt.Sprintf(`{"display": "%s", "pastedContents": {}},`, strings.Repeat("some prompt text here ", size/22))
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `"/home/u/p%d": {"allowedTools": [], "mcpServers": {}, "history": [%s], "hasTrustDialogAccepted": true}`, i, strings.Repeat(entry, 20)+`{}`)
	}
	sb.WriteString(`}}`)
	return sb.String()
}

// One ordinary change to a big ~/.claude.json: the check that runs after
// every write Claude Code makes. "fresh": a Merge with its own parse of the
// snapshot (the first check); the others reuse the guard's merger, whose
// snapshot is parsed once.
func BenchmarkMergeBigClaudeJSON(b *testing.B) {
	for _, c := range []struct {
		name       string
		n, size    int
		withMerger bool
	}{
		{"640KB", 500, 22, false},
		{"8MB/fresh", 2000, 200, false},
		{"8MB", 2000, 200, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			snap := bigClaudeJSON(c.n, c.size)
			cur := strings.Replace(snap, `"numStartups": 1`, `"numStartups": 2`, 1)
			f := Files[0]
			ctx := Context{Workspace: "/home/u/p1"}
			sv, cv := v(snap), v(cur) // converted once: 2x8 MB copies per op otherwise
			m := newMerger(f, ctx, sv)
			b.SetBytes(int64(len(cur)))
			b.ReportAllocs()
			b.ResetTimer() // the document is built outside the timing
			for i := 0; i < b.N; i++ {
				var r Result
				if c.withMerger {
					r = m.merge(cv)
				} else {
					r = Merge(f, ctx, sv, cv)
				}
				if r.Changed() {
					b.Fatal(r.Keys)
				}
			}
		})
	}
}

// The reference (the parser and Merge as they were), for the numbers in
// docs/performance.md.
func BenchmarkMergeBigClaudeJSONReference(b *testing.B) {
	snap := bigClaudeJSON(2000, 200)
	cur := strings.Replace(snap, `"numStartups": 1`, `"numStartups": 2`, 1)
	sv, cv := v(snap), v(cur)
	b.SetBytes(int64(len(cur)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := refMerge(Files[0], Context{Workspace: "/home/u/p1"}, sv, cv); r.Changed() {
			b.Fatal(r.Keys)
		}
	}
}

// The agent changes every project's mcpServers of a 2,000-project file: the
// whole snapshot comes back. Finding which keys changed was quadratic
// (seconds: the window the host saw the agent's servers).
func BenchmarkMergeAllChanged(b *testing.B) {
	snap := bigClaudeJSON(2000, 200)
	cur := strings.ReplaceAll(snap, `"mcpServers": {}`, `"mcpServers": {"x": {"command": "evil"}}`)
	sv, cv := v(snap), v(cur)
	for _, c := range []struct {
		name  string
		merge func(File, Context, Version, Version) Result
	}{{"fast", Merge}, {"reference", refMerge}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if r := c.merge(Files[0], Context{Workspace: "/home/u/p1"}, sv, cv); !r.Whole {
					b.Fatal(r.Keys[:1])
				}
			}
		})
	}
}
