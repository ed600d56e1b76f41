package gitguard

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkScanRepos: gitguard's scan of a workspace of many repositories
// as `git init` makes them (JAIL_BENCH_SCAN_WS: each entry a work tree;
// gitpacks3 measured 0.5-0.67 s of a start with 2,000, about 55 stat-like
// calls a repository).
func BenchmarkScanRepos(b *testing.B) {
	ws := os.Getenv("JAIL_BENCH_SCAN_WS")
	if ws == "" {
		b.Skip("JAIL_BENCH_SCAN_WS not set (a directory of `git init` repositories)")
	}
	var found []string
	ents, err := os.ReadDir(ws)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range ents {
		found = append(found, filepath.Join(ws, e.Name(), ".git"))
	}
	in := Input{Workspace: ws, Writable: []string{ws}, Found: found}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if p := Scan(in); len(p.Repos) != len(found) {
			b.Fatalf("%d repositories of %d", len(p.Repos), len(found))
		}
	}
}
