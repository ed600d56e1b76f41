package gitguard

import (
	"os"
	"testing"
)

// BenchmarkIndexGitlinks: what the scan of one git dir's index costs at
// start (JAIL_BENCH_INDEX_REPO: a work tree with a big index).
func BenchmarkIndexGitlinks(b *testing.B) {
	wt := os.Getenv("JAIL_BENCH_INDEX_REPO")
	if wt == "" {
		b.Skip("JAIL_BENCH_INDEX_REPO not set")
	}
	for i := 0; i < b.N; i++ {
		indexGitlinks(wt+"/.git", wt)
	}
}
